import numpy as np
from pytorch_tabnet.tab_model import TabNetClassifier

model = TabNetClassifier(
    n_d=2,
    n_a=2,
    n_steps=1,
)
model.fit(
    X_train=np.random.rand(101, 2),
    y_train=np.random.choice([0, 1], size=101),
    batch_size=4,
    virtual_batch_size=4,
    drop_last=False  # Setting this to True avoids the issue.
)
