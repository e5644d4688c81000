class Model(torch.nn.Module):
    
    def __init__(self):
        super(Model, self).__init__()
        self.t = torch.nn.Parameter(torch.rand(10), required_grad = True).cuda()
        self.linear = torch.nn.Linea(10,20)

    def forward(self, x):
        x  = self.t + x 
        x = self.linear(x)
        return x

m = Model().cuda()
print(list(m.parameters())
