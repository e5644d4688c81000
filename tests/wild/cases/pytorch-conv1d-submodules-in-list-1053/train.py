class Net(th.nn.Module):
	def __init__(self):
		super(Net , self).__init__()
		
		self.conv1d = [\
			th.nn.Conv1d(config.WORD_VEC_SIZE , 1 , 3),\
			th.nn.Conv1d(config.WORD_VEC_SIZE , 1 , 4),\
			th.nn.Conv1d(config.WORD_VEC_SIZE , 1 , 5)\
		]
....

a = Net()
