import theano.tensor as T
import theano

y = T.vector()
cl = theano.function([y], [T.clip(y, 1.0e-9, 1.0 - 1.0e-9)])

p = np.array([0,1]).astype(np.float32)
print cl(p)

>>> [array([  9.99999994e-09,   1.00000000e+00], dtype=float32)]
