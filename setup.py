"""Only the C part of the build; everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(ext_modules=[
    # the text-log scanner: one pass over the bytes of a log chunk (see the file's header)
    Extension("analysis.ingest._logscan", ["analysis/ingest/_logscan.c"], extra_compile_args=["-O2"]),
    # CRC-32C of TensorBoard's record frames
    Extension("analysis.ingest._crc32c", ["analysis/ingest/_crc32c.c"], extra_compile_args=["-O2"]),
])
