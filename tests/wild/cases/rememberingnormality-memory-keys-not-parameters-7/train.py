self.keys=torch.randn(L,channel).to('cuda')
self.values=torch.randn(L,channel).to('cuda')
