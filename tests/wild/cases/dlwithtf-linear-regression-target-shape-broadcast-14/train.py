   y = tf.placeholder(tf.float32, (N,))  --> tf.placeholder(tf.float32, (N,1))
