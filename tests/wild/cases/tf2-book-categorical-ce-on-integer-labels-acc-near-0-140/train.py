network.compile(
                optimizer=optimizers.Adam(learning_rate=0.01),# 采用Adam 优化器，学习率为0.01  
                loss=losses.CategoricalCrossentropy(from_logits=True),# 采用交叉熵损失函数，包含Softmax  
                metrics=['accuracy'] # 设置测量指标为准确率
                )
