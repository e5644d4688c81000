mask = self.tfm(mask)
