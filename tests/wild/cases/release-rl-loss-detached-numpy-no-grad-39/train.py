rl_loss -= (log_probs[0, top_i].cpu().detach().numpy()*discounted_reward)

rl_loss -= (log_probs[0, top_i].item()*discounted_reward)
