# Version 1.0
# Set up straightforward linear regression problem.
import torch
import torch.nn as nn
sample_size = 100
x = torch.randn((sample_size,2))
eps = torch.randn(sample_size )
y = 10 + 9*x[:,0] - 2*x[:, 1] +  eps
#y = y.reshape(sample_size, 1)
model = nn.Linear(2, 1)

optimizer = torch.optim.SGD(model.parameters(), lr=.1)
loss_func = nn.MSELoss()
for epoch in range(30):
   optimizer.zero_grad()
   yhat = model(x)
   loss_val = loss_func(yhat, y)
   loss_val.backward()
   optimizer.step()
   print(loss_val.item())

print(model.weight.data)
print(model.bias.data)

