segments: just over 200M
workspace: 30000
devices: 8 cards 32G each
transformer (default settings)
emb-dim: 512
max-length: 100
vocab-size: 50000
min-batch-fit: true
adam with 0.9 0.98 1e-09
learning rate: 0.001
lr-warmup: 91000 (equivalent to one epoch)
lr-decay-inv-sqrt: 91000
clip-norm: 5
