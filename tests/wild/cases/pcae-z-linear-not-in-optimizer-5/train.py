optimizer = AdamW(model.parameters(), lr=args.lr, correct_bias=True, no_deprecation_warning=True)

self.z_linear = nn.Linear(self.config.hidden_size, 2 * self.nz, bias=False)
