"""Figure 3: appends of the reference log against plain buffered writes of the same bytes.

*Ours*: ``Log.append_as_leader`` of one 16 KiB client batch at a time (base offset 0, as a
producer sends it) to a log with Kafka's defaults (``index.interval.bytes`` 4096, so every
batch gets an offset and a time index entry; 1 GiB segments; no flush per append). Each
append validates the batch (framing, CRC, every record, as Kafka's LogValidator does),
assigns offsets, stamps the leader epoch and writes the batch and its index entries.
The *baseline* writes the same batches to one file through Python's buffered writer.
Neither side fsyncs; opening and closing the log are not timed.
"""

from __future__ import annotations

import shutil

from reference_impl.log.unified_log import Log

from .harness import Context, Figure, Target
from .workload import LEADER_EPOCH, KiB, MiB, batch_template, batches

TARGET = Target("ratio", ">=", 0.5)


def measure(ctx: Context) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    count = max(1, ctx.size // 8 // template.size)
    client_batches = list(batches(template, count, client=True))
    total = sum(len(batch) for batch in client_batches)
    folder = ctx.scratch("append")
    state = {}

    def open_log() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / "plain").unlink(missing_ok=True)
        state["log"] = Log.open(folder / "bench-0")

    def ours() -> None:
        log = state.pop("log")
        for batch in client_batches:
            log.append_as_leader(batch, LEADER_EPOCH)
        assert log.log_end_offset == count * template.count
        log.close_handlers()

    def baseline() -> None:
        with open(folder / "plain", "wb") as handle:
            for batch in client_batches:
                handle.write(batch)

    seconds, base = ctx.timed_pair(ours, baseline, setup=open_log)
    ctx.profiled("append", ours, setup=open_log)
    shutil.rmtree(folder, ignore_errors=True)
    return Figure(
        name="append",
        title="Append as leader, 16 KiB batches",
        unit="MiB/s",
        ours=total / seconds / MiB,
        ours_label="Log.append_as_leader, index every 4 KiB",
        baseline=total / base / MiB,
        baseline_label="buffered file writes of the same batches",
        target=TARGET,
        details={"bytes": total, "batches": count, "records_per_batch": template.count,
                 **ctx.timings(seconds, base)},
    )  # fmt: skip


def figures(ctx: Context) -> list:
    return [(["append"], lambda: measure(ctx))]
