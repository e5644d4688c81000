y_p = torch.max(y_p, 1)[1]

	first_model.zero_grad()
	second_model.zero_grad()

	loss.backward() # retain_variables=True

	for param in second_model.parameters():
		print( 'data: ', param.data  )
		print( 'grad data: ', param.grad.data )

	for param in first_model.parameters():
		print( 'data: ', param.data  )
		print( 'grad data: ', param.grad.data )
