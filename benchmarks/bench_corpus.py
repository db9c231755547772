"""Figure 8: verify throughput on the real-broker corpus (issue 14's corpus figure).

Real brokers mostly write small batches: KRaft metadata, consumer offsets, a few records
each. *Ours* is ``verify_paths`` (what ``klogspec verify`` does but print) over every
partition of ``../shared/kafka-corpus`` (or ``$KLOGSPEC_CORPUS``), indexes, snapshots
and checkpoints included; the *baseline* is the CRC-32C pass of figure 1 over the same
``.log`` files. The throughput counts the ``.log`` bytes. Printed for both paths, it is
the before (pure Python) and after (compiled) of the kernels; without the corpus, SKIP.
"""

from __future__ import annotations

import os
from pathlib import Path

from klogspec.verify import verify_paths

from .bench_verify import crc_of_file
from .harness import REPO, Context, Figure
from .workload import MiB

NAME = "verify-corpus"


def corpus_root() -> Path | None:
    configured = os.environ.get("KLOGSPEC_CORPUS")
    root = Path(configured) if configured else REPO.parent / "shared" / "kafka-corpus"
    return root if root.is_dir() else None


def measure(ctx: Context) -> Figure:
    figure = Figure(
        name=NAME, title="Verify of the real-broker corpus", unit="MiB/s", ours=None,
        ours_label="verify_paths of every corpus partition (klogspec verify)", baseline=None,
        baseline_label="crc32c package over the same .log files, 1 MiB preads", target=None,
    )  # fmt: skip
    root = corpus_root()
    if root is None:
        figure.status, figure.note = "SKIP", "no corpus (set KLOGSPEC_CORPUS or ../shared)"
        return figure
    logs = sorted(str(p) for p in root.rglob("*.log"))
    size = sum(os.path.getsize(p) for p in logs)

    def ours() -> None:
        for _ in verify_paths([str(root)]):
            pass

    def baseline() -> None:
        for path in logs:
            crc_of_file(path)

    # a small corpus: each timed job is several passes, so the timer's grain is negligible
    passes = max(1, (64 * MiB) // max(size, 1)) if not ctx.quick else 1
    seconds, base = ctx.timed_pair(lambda: _repeat(ours, passes), lambda: _repeat(baseline, passes))
    ctx.profiled(NAME, ours)
    figure.ours, figure.baseline = size * passes / seconds / MiB, size * passes / base / MiB
    figure.details = {"bytes": size, "log_files": len(logs), "passes": passes,
                      **ctx.timings(seconds, base)}  # fmt: skip
    return figure


def _repeat(fn, times: int) -> None:
    for _ in range(times):
        fn()


def figures(ctx: Context) -> list:
    return [([NAME], lambda: measure(ctx))]
