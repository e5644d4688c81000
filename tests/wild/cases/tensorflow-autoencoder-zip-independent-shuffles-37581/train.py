zipdata = tf.data.Dataset.zip((train_dataset, train_dataset))
