# training_step(), optimizer_idx == 0 or 1
d_fake2 = self.d(**fake_spec.detach()**, f)  # is .detach() here intentional?
G_loss1 = F.mse_loss(d_fake2, torch.ones(d_fake2.shape, device=self.device))
