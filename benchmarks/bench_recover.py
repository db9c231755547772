"""Figure 4: recovery of an unclean log against batch-level verify of the same bytes.

The log directory is what a crash leaves: one segment of 16 KiB batches ending in half a
batch (a torn write), no clean-shutdown marker, no checkpoints and no index files.
*Ours* is ``Log.open`` of that directory: the unclean load recovers the segment
(recover.md: framing and CRC of every batch, both indexes rebuilt with an entry every
4 KiB, the leader-epoch cache, the torn tail cut). The *baseline* is figure 1's
``verify_segment`` on the same ``.log``: recovery is verify plus the index rebuild.
"""

from __future__ import annotations

import shutil

from reference_impl.log import Log

from .bench_verify import verify_log
from .harness import Context, Figure, Target
from .workload import KiB, MiB, batch_template, restore_tail, write_segment

TARGET = Target("ratio", ">=", 0.7)
LOG_NAME = "00000000000000000000.log"


def crash_leftovers(root, segment, template) -> None:
    """Back to the state after the crash: only the .log, with its torn tail."""
    for path in root.rglob("*"):
        if path.is_file() and path.name != LOG_NAME:
            path.unlink()
    restore_tail(segment, template)


def recover(directory) -> None:
    log = Log.open(directory)
    log.close_handlers()  # no clean shutdown: the next run recovers again


def measure(ctx: Context) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    root = ctx.scratch("recover")
    directory = root / "bench-0"
    directory.mkdir()
    segment = write_segment(str(directory / LOG_NAME), template, ctx.size, torn_tail=True)
    setup = lambda: crash_leftovers(root, segment, template)  # noqa: E731
    ours, base = ctx.timed_pair(
        lambda: recover(directory), lambda: verify_log(segment.path, ("FRAME-9",)), setup=setup
    )
    ctx.profiled("recover", lambda: recover(directory), setup=setup)
    shutil.rmtree(root, ignore_errors=True)
    total = segment.size + segment.tail
    return Figure(
        name="recover",
        title="Recovery of an unclean 16 KiB-batch log",
        unit="MiB/s",
        ours=total / ours / MiB,
        ours_label="Log.open after a crash (segment recovery)",
        baseline=total / base / MiB,
        baseline_label="verify_segment of the same .log",
        target=TARGET,
        details={"bytes": total, "batches": segment.batches, "torn_tail_bytes": segment.tail,
                 "seconds": round(ours, 4), "baseline_seconds": round(base, 4)},
    )  # fmt: skip


def figures(ctx: Context) -> list:
    return [(["recover"], lambda: measure(ctx))]
