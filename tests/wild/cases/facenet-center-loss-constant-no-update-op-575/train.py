def center_loss(features, label, alfa, nrof_classes):
    with tf.variable_scope("center_loss"):
        nrof_features = features.get_shape()[1]
        centers = tf.get_variable('centers', [nrof_classes, nrof_features], dtype=tf.float32,
            initializer=tf.constant_initializer(0), trainable=False)
        label = tf.reshape(label, [-1])
        centers_batch = tf.gather(centers, label)
        diff = (1 - alfa) * (centers_batch - features)
        centers = tf.scatter_sub(centers, label, diff)
        loss = tf.reduce_mean(tf.square(features - centers_batch))
        return loss, centers
embeddings = tf.nn.l2_normalize(end_points['feat'], 1, 1e-10, name='embeddings')
center_loss, _ = center_loss(embeddings, labels, 0.95, classes)
loss = tf.add_n([l2loss, center_loss, cross_entropy_mean])
