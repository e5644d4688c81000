"""Only the C part of the build; everything else is in pyproject.toml.

Both extensions are optional: without a C compiler (or the Python headers) `pip install` still
succeeds, and the engine uses their pure-Python twins (analysis/ingest/logscan_fallback.py, and
TensorBoard's CRC-32C), slower, saying so once on stderr when a text log is read."""
from setuptools import Extension, setup

setup(ext_modules=[
    # the text-log scanner: one pass over the bytes of a log chunk (see the file's header)
    Extension("analysis.ingest._logscan", ["analysis/ingest/_logscan.c"], extra_compile_args=["-O2"], optional=True),
    # CRC-32C of TensorBoard's record frames
    Extension("analysis.ingest._crc32c", ["analysis/ingest/_crc32c.c"], extra_compile_args=["-O2"], optional=True),
])
