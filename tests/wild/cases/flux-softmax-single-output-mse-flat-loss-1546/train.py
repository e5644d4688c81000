function custom_net(input::Int64,hidden::Int64,output::Int64)
    linear1 = linear(input, hidden) # we can access linear1.W etc
    linear2 = linear(hidden, output)
    ps = Flux.params(linear1.W , linear1.b , linear2.W, linear2.b)
    model(x) =  softmax(linear2(σ.(linear1(x))))
    return model,ps
  end


m,ps = CustomizeNet.custom_net(2,2,1)

data,xtest,ytest = DataCostumizer.dummy_data_micronet(1000,100)
loss(x, y) = Flux.mse(m(x),y)
opt = ADAM()
initial_masks = [ones(2,2),ones(1,2)]

evalcb = () -> println("loss : ",loss(xtest,ytest))
@Flux.epochs 10 Flux.train!(loss, ps, data, opt,cb = throttle(evalcb, 10)) 
