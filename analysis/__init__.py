"""mltd's engine: ingestion of every artifact format, the analyzers, ranking and patch text.

Pure: no network, no service SDK, nothing from `bot` or `handlers`.
"""
from analysis.diagnose import diagnose
from analysis.model import Diagnosis, Evidence, Finding

__all__ = ["Diagnosis", "Evidence", "Finding", "diagnose"]
