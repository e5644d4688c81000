params_disc = list(self.loss_mrd.parameters()) + list(
            self.loss_mrd.parameters()
        )

params_disc = list(self.loss_mrd.parameters()) + list(
            self.loss_mpd.parameters()
        )
