if cfg.fp16 is True:
    with autocast():
        logits = model(images)
        loss = criterion(logits, labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
else:
    logits = model(images)
    loss = criterion(logits, labels)
    loss.backward()
optimizer.step()
