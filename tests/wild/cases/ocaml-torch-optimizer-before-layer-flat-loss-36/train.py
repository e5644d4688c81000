module T = Torch
let main () =
  Torch_core.Wrapper.manual_seed 42;
 
  let batch_size = 1 in
  let learning_rate = 1e-3 in
  let xs = T.Scalar.float 1.0 |> T.Tensor.mul1 (T.Tensor.ones [batch_size; 2]) in
  let ys = T.Tensor.f 10.0 in
  let device = T.Device.cuda_if_available () in
  let vs = T.Var_store.create ~name:"neural-analysis" ~device () in
    
  (* TWO LINES BELOW *)
  let optimizer = T.Optimizer.sgd vs ~learning_rate in  (* (1) *)
  let linear = T.Layer.linear vs ~input_dim:2 1 in  (* (2) *)
  
  for _ = 1 to 100 do
    T.Optimizer.zero_grad optimizer;
    let ys_ = T.Layer.forward linear xs in
    let loss = T.Tensor.((ys_ - ys) * (ys_ - ys)) in
    Printf.eprintf "--> %f\n" (loss |> T.Tensor.float_value);
    T.Tensor.backward loss;
    T.Optimizer.step optimizer
  done
