"""Only the C part of the build; everything else is in pyproject.toml."""
from setuptools import Extension, setup

# The text-log scanner: one pass over the bytes of a log chunk (see the file's header).
setup(ext_modules=[Extension("analysis.ingest._logscan", ["analysis/ingest/_logscan.c"], extra_compile_args=["-O2"])])
