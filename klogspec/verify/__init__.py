"""``klogspec verify``: partition directories checked against every format rule (findings.py:
what a finding is; segment.py and index.py: one segment; partition.py: a partition and its
log directory's checkpoints; run.py: the walk over directories; cli.py: the command)."""
