"""Figure 4: recovery of an unclean log against batch-level verify of the same bytes.

The log directory is what a crash leaves: one segment of 16 KiB batches ending in half a
batch (a torn write), its offset and time indexes as the broker left them (preallocated
to ``segment.index.bytes``, so sparse), no clean-shutdown marker and no checkpoints, so
the whole segment lies after the recovery point. *Ours* is ``Log.open`` of that
directory: the unclean load recovers the segment (recover.md: framing and CRC of every
batch, both indexes rebuilt with an entry every 4 KiB, the leader-epoch cache, the torn
tail cut). The *baseline* is figure 1's ``verify_segment`` on the same ``.log``:
recovery is verify plus the index rebuild. The details also time the same recovery with
the index files emptied first (``empty_indexes_*``): the share of opening the
preallocated ones.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from reference_impl.log.unified_log import Log

from .bench_verify import verify_log
from .harness import Context, Figure, Target
from .workload import KiB, MiB, Segment, Template, batch_template, restore_tail, write_segment

TARGET = Target("ratio", ">=", 0.9)
LOG_NAME = "00000000000000000000.log"
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")


def crashed_log(directory: Path, template: Template, size: int) -> Segment:
    """Write the segment, let the reference open it once (which creates its indexes) and
    crash, then put the torn tail back: the state ``after_crash`` returns to."""
    segment = write_segment(str(directory / LOG_NAME), template, size, torn_tail=True)
    Log.open(directory).crash()
    after_crash(directory, segment, template)
    return segment


def after_crash(
    directory: Path, segment: Segment, template: Template, *, empty_indexes: bool = False
) -> None:
    """Only the segment files, the torn tail back: no marker, no checkpoints. With
    ``empty_indexes``, the index files are emptied (a preallocated index is all slots)."""
    for path in directory.parent.rglob("*"):
        if path.is_file() and not path.name.endswith(SEGMENT_SUFFIXES):
            path.unlink()
        elif empty_indexes and path.suffix in (".index", ".timeindex"):
            os.truncate(path, 0)
    restore_tail(segment, template)


def recover(directory: Path, segment: Segment) -> None:
    log = Log.open(directory)
    log.crash()  # no clean shutdown: the next run recovers again
    if os.path.getsize(segment.path) != segment.size:
        raise RuntimeError(
            "Log.open did not recover the unclean log (the torn tail is still there)"
        )


def measure(ctx: Context) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    directory = ctx.scratch("recover") / "bench-0"
    directory.mkdir()
    segment = crashed_log(directory, template, ctx.size)
    setup = lambda: after_crash(directory, segment, template)  # noqa: E731
    ours, base = ctx.timed_pair(
        lambda: recover(directory, segment),
        lambda: verify_log(segment.path, ("FRAME-9",)),
        setup=setup,
    )
    timings = ctx.timings(ours, base)
    ctx.profiled("recover", lambda: recover(directory, segment), setup=setup)
    # the same recovery with empty index files: what opening the preallocated ones costs
    empty_indexes = lambda: after_crash(directory, segment, template, empty_indexes=True)  # noqa: E731
    without_slots, _ = ctx.timed_pair(
        lambda: recover(directory, segment), lambda: None, setup=empty_indexes
    )
    shutil.rmtree(directory.parent, ignore_errors=True)
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
                 **timings,
                 "empty_indexes_cpu_seconds": round(without_slots, 4),
                 "empty_indexes_ratio": round(base / without_slots, 4)},
    )  # fmt: skip


def figures(ctx: Context) -> list:
    return [(["recover"], lambda: measure(ctx))]
