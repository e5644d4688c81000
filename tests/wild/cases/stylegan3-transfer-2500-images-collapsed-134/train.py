resolution = 1024
batch_size = 32
batch_gpu_size = 8
learning_rate = 0.0002
gamma_value = 10.0
resume_from = 'https://api.ngc.nvidia.com/v2/models/nvidia/research/stylegan3/versions/1/files/stylegan3-t-ffhqu-1024x1024.pkl'
