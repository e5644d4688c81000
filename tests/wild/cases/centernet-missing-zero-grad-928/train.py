loss.backward()
optimizer.step()

loss.backward()
optimizer.step()
optimizer.zero_grad()
