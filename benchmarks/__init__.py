"""Benchmarks of the reference against baselines measured in the same run (benchmarks/README.md).

Run them with ``benchmarks/run``; each ``bench_*`` module measures one figure of issue 8.
"""
