if scheduler:
    scheduler.step()
else:
    optimizer.step()
