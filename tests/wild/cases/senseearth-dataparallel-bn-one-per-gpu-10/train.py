# deeplabv3plus.py
for i, (img1, img2, mask1, mask2, mask_bin) in enumerate(tbar):
    img1, img2 = img1.cuda(), img2.cuda()
    mask1, mask2 = mask1.cuda(), mask2.cuda()
    mask_bin = mask_bin.cuda()
    print(img1.shape) # [2, 3, 512, 512]
    print(img2.shape) # [2, 3, 512, 512]

# base.py
def forward(self, x1, x2, tta=False):
    print(x1.shape)  # 打印出四张shape为[1, 3, 512, 512]的Tensor
    print(x2.shape)
