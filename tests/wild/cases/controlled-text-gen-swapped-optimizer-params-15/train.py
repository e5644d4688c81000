trainer_G = optim.Adam(model.encoder_params, lr=lr)
trainer_E = optim.Adam(model.decoder_params, lr=lr)
