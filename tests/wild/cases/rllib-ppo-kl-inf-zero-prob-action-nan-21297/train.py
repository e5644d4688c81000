import torch
import numpy as np

prev_act_logits = [-84.742, -7.2213, -0.00073051, -51.313, -103.49]
cur_act_logits = [-86.197, -5.939, -0.0026379, -53.358, -105.7]

ca_pre = torch.distributions.categorical.Categorical(logits=torch.tensor(prev_act_logits))
ca_cur = torch.distributions.categorical.Categorical(logits=torch.tensor(cur_act_logits))

assert ca_cur.probs[-1].item() == 0
kl = torch.distributions.kl.kl_divergence(ca_pre, ca_cur)
