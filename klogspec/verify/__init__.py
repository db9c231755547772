"""``klogspec verify``: partition directories checked against every format rule.

findings.py says what a finding is; segment.py and index.py check one segment in one
streaming pass; files.py sorts a partition's files and partition.py checks the partition
and its log directory's checkpoints; run.py walks directories and runs both; cli.py is the
command (and its renderers, which ``klogspec scan`` shares). The names below are what the
pipeline and other callers use; the command line stays out of them, so a Spark executor
importing this package loads no CLI library.
"""

from .files import REMOTE_INDEX_CACHE
from .findings import Finding, Findings, Severity, exit_status, rule_for_error
from .run import LogDirPlan, VerifyStats, discover, local_verifier, verify_paths, verify_plan
from .segment import SegmentFiles, SegmentResult, verify_segment

__all__ = [
    "REMOTE_INDEX_CACHE",
    "Finding",
    "Findings",
    "LogDirPlan",
    "SegmentFiles",
    "SegmentResult",
    "Severity",
    "VerifyStats",
    "discover",
    "exit_status",
    "local_verifier",
    "rule_for_error",
    "verify_paths",
    "verify_plan",
    "verify_segment",
]
