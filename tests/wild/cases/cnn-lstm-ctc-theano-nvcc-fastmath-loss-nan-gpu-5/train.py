[global]
mode=FAST_RUN
device=gpu
floatX=float32
optimizer=fast_compile
[nvcc]
fastmath=True
