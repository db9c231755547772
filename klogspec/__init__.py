"""klogspec: the command line and the tools built on the reference log.

``reference_impl`` is the log; this package reads, checks and repairs partition
directories with it: ``dump`` (Kafka's DumpLogSegments, and more), ``verify`` (every format
rule, one streaming pass per segment), ``recover`` (the loader's recovery, planned first and
quarantining what it removes), the directory walk they share and the ``klogspec`` command
group (cli.py). It imports ``reference_impl``; nothing in ``reference_impl`` imports it.
"""
