if labels is not None:

  logits = logits.float()
  # NOTICE: The labels are shifted once here
  shift_logits = logits[..., :-1, :].contiguous()
  shift_labels = labels[..., 1:].contiguous()

  shift_logits = shift_logits.view(-1, self.config.vocab_size)
  shift_labels = shift_labels.view(-1)

  shift_labels = shift_labels.to(shift_logits.device)
  loss = self.loss_function(
      shift_logits,
      shift_labels,
      vocab_size=self.config.vocab_size,
      **kwargs,
  )
