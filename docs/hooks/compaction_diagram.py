"""The ``compaction-pass`` diagram of spec/behaviour/compaction.md: one pass of the reference
cleaner over a small compacted log, drawn from the files before and after it, so it cannot
go stale (diagrams.py registers it).

The log: keys a to f in one-record batches, a tombstone, an aborted transaction, four
segments and an active one; a dedupe buffer of five slots (a quota of four keys) so the
offset map stops inside the dirty section. The figure shows each segment's records before
the pass, the map's reach and the pass's end offset, and the records each segment keeps,
each removed one with its reason.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from svg import FILLS, SMALL, Svg

T0 = 1_700_000_000_000
DELETE_RETENTION_MS = 60_000
DEDUPE_BUFFER_SIZE = 5 * 24  # five slots of a 16-byte MD5 and an 8-byte offset
WIDTH = 680


@dataclass(frozen=True)
class Cell:
    offset: int
    label: str  # "a=2", "b=null", "ABORT"
    kind: str  # data, tombstone, marker, aborted
    horizon: int | None = None


@dataclass
class PassExample:
    before: list[tuple[int, list[Cell]]]  # (segment base offset, its records)
    after: list[tuple[int, list[Cell]]]
    first_dirty_offset: int
    end_offset: int
    first_uncleanable_offset: int
    keys_in_map: int
    now: int


def _write(partition: Path):
    from reference_impl import Log, ManualClock
    from reference_impl.log.config import LogConfig
    from reference_impl.log.log_validator import AppendOrigin
    from reference_impl.records import (
        ControlRecordType,
        SimpleRecord,
        build_control_batch,
        build_record_batch,
    )

    config = LogConfig(
        cleanup_policy="compact", min_cleanable_dirty_ratio=0.0, segment_bytes=216,
        delete_retention_ms=DELETE_RETENTION_MS,
    )  # fmt: skip
    clock = ManualClock(T0)
    log = Log.open(partition, config, clock)
    writes = [("a", "1"), ("b", "1"), ("c", "1"), ("a", "2"), ("b", None), ("d", "1"),
              ("a", "x"), "ABORT", ("c", "2"), ("e", "1"), ("a", "3"), ("f", "1"), ("b", "2")]  # fmt: skip
    for write in writes:
        clock.sleep(1000)
        if write == "ABORT":
            marker = build_control_batch(
                ControlRecordType.ABORT, producer_id=8, producer_epoch=0,
                timestamp=clock.milliseconds(),
            )  # fmt: skip
            log.append_as_leader(marker, 0, AppendOrigin.COORDINATOR)
            continue
        key, value = write
        record = SimpleRecord(
            key=key.encode(), value=None if value is None else value.encode(),
            timestamp=clock.milliseconds(),
        )  # fmt: skip
        txn = {"producer_id": 8, "producer_epoch": 0, "base_sequence": 0,
               "is_transactional": True} if value == "x" else {}  # fmt: skip
        log.append_as_leader(build_record_batch([record], **txn), 0)
    return log


def _cells(log) -> list[tuple[int, list[Cell]]]:
    from reference_impl.records.stream import iter_batches

    out = []
    for segment in log.log_segments():
        cells = []
        for batch in iter_batches(segment.log.read_bytes()):
            for r in batch.records():
                if batch.is_control:
                    cells.append(Cell(r.offset, "ABORT", "marker", batch.delete_horizon_ms))
                    continue
                key = r.key.decode()
                kind = "aborted" if batch.is_transactional else "data"
                if r.value is None:
                    cells.append(
                        Cell(r.offset, f"{key}=null", "tombstone", batch.delete_horizon_ms)
                    )
                else:
                    cells.append(Cell(r.offset, f"{key}={r.value.decode()}", kind))
        out.append((segment.base_offset, cells))
    return out


@functools.cache
def pass_example() -> PassExample:
    """Write the log, read it, clean it once at its clock, read it again."""
    from reference_impl.log.log_cleaner import Cleaner
    from reference_impl.log.log_cleaner_manager import clean_once

    tmp = Path(tempfile.mkdtemp(prefix="klogspec-site-compaction-"))
    try:
        log = _write(tmp / "data" / "table-0")
        before = _cells(log)
        cleaner = Cleaner(dedupe_buffer_size=DEDUPE_BUFFER_SIZE)
        outcome = clean_once(log, cleaner)
        after = _cells(log)
        now = log.clock.milliseconds()
        log.close()
        return PassExample(
            before, after, outcome.first_dirty_offset, outcome.end_offset,
            outcome.first_uncleanable_offset, cleaner.offset_map.size, now,
        )  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- drawing ------------------------------------------------------------------------------

CELL_W, CELL_H, GAP, SEGMENT_GAP, LEFT = 44, 40, 2, 10, 16
FATES = {
    "kept": (FILLS["good"], "kept"),
    "tombstone": (FILLS["accent"], "tombstone kept, stamped with a delete horizon"),
    "superseded": (FILLS["bad"], "removed: a later record of its key is in the map"),
    "aborted": (FILLS["txnindex"], "removed: aborted transaction (its marker stays while it has data)"),
    "untouched": (FILLS["quiet"], "not cleaned: at or above the end offset"),
}  # fmt: skip


def _x_positions(ex: PassExample) -> dict[int, float]:
    """Each offset's x, segments side by side with a gap between them."""
    xs, x = {}, float(LEFT)
    for _, cells in ex.before:
        for cell in cells:
            xs[cell.offset] = x
            x += CELL_W + GAP
        x += SEGMENT_GAP
    return xs


def _fate(cell: Cell, kept: dict[int, Cell], ex: PassExample) -> str:
    if cell.offset >= ex.end_offset:
        return "untouched"
    if cell.offset in kept:
        return "tombstone" if kept[cell.offset].kind == "tombstone" else "kept"
    return "aborted" if cell.kind == "aborted" else "superseded"


def _row(svg: Svg, ex, segments, xs, y, kept, *, after: bool) -> None:
    """One row of segments; after the pass, a removed record is a dashed gap in its segment
    (the segment's frame spans the offsets it had)."""
    spans = {base: [c.offset for c in cells] for base, cells in ex.before}
    for base, cells in segments:
        offsets = spans.get(base) or [c.offset for c in cells]
        if not offsets:
            continue
        left, right = xs[offsets[0]] - 4, xs[offsets[-1]] + CELL_W + 4
        svg.rect(
            left, y, right - left, CELL_H + 8, None, cls="klog-frame", rx=5, tip=f"segment {base}"
        )
        labels = {c.offset: c.label for c in cells}
        for offset in offsets:
            x, removed = xs[offset], after and offset not in kept
            if removed:  # a gap: the offset stays, its record is gone
                svg.rect(x, y + 4, CELL_W, CELL_H, None, cls="klog-frame", rx=3, dashed=True)
            else:
                fill = FATES[_fate(kept.get(offset) or _cell(ex, offset), kept, ex)][0]
                svg.rect(x, y + 4, CELL_W, CELL_H, fill, rx=3, tip=labels.get(offset, ""))
            lines = [(17, str(offset))] + ([] if removed else [(33, f"`{labels[offset]}`")])
            cls = "klog-text klog-muted" if removed else "klog-text klog-on-fill"
            for dy, text in lines:
                svg.text(x + CELL_W / 2, y + dy, text, size=10, anchor="middle", cls=cls)


def _cell(ex: PassExample, offset: int) -> Cell:
    return next(c for _, cells in ex.before for c in cells if c.offset == offset)


def compaction_pass(links) -> tuple[str, str]:
    from diagrams import rule_links

    ex = pass_example()
    xs = _x_positions(ex)
    kept = {c.offset: c for _, cells in ex.after for c in cells}
    svg = Svg(
        "fig-compaction-pass", WIDTH, "One pass of the log cleaner: the segments before and after"
    )
    y = 18.0
    svg.text(
        LEFT,
        y,
        f"before the pass: segments {', '.join(str(b) for b, _ in ex.before)}; the last is the active segment",
        size=SMALL,
        bold=True,
    )
    y += 8
    _row(svg, ex, ex.before, xs, y, kept, after=False)
    y += CELL_H + 20
    reach_end = max(x for o, x in xs.items() if o < ex.end_offset) + CELL_W
    svg.line([(xs[ex.first_dirty_offset], y), (reach_end, y)], arrow=False)
    svg.line([(reach_end, y - 6), (reach_end, y + 6)], arrow=False)
    y += 16
    y += svg.text(
        LEFT,
        y,
        rule_links(
            f"offset map: {ex.keys_in_map} keys (the quota of a {DEDUPE_BUFFER_SIZE}-byte dedupe buffer), "
            f"read from offset {ex.first_dirty_offset} until it is full; its reach is {ex.end_offset - 1}, "
            f"so the end offset is {ex.end_offset} (COMPACT-9, COMPACT-10); the first uncleanable offset is "
            f"{ex.first_uncleanable_offset}, the active segment's base (COMPACT-5)",
            links,
        ),
        width=WIDTH - 2 * LEFT,
        size=SMALL,
    )
    y += 10
    svg.text(
        LEFT,
        y,
        "after the pass: the segments below the end offset rewritten (COMPACT-11, COMPACT-22)",
        size=SMALL,
        bold=True,
    )
    y += 8
    _row(svg, ex, ex.after, xs, y, kept, after=True)
    y += CELL_H + 22
    horizon = next(
        (c.horizon for _, cells in ex.after for c in cells if c.kind == "tombstone"), None
    )
    if horizon is not None:
        y += svg.text(
            LEFT,
            y,
            rule_links(
                f"the tombstone stays; its batch now carries the delete horizon now + delete_retention_ms "
                f"= {ex.now} + {DELETE_RETENTION_MS} = {horizon}: the first pass at or after it removes it (COMPACT-13)",
                links,
            ),
            width=WIDTH - 2 * LEFT,
            size=SMALL,
        )
        y += 6
    for fill, text in FATES.values():
        svg.rect(LEFT, y - 10, 14, 14, fill, rx=2)
        svg.text(LEFT + 22, y + 1, text, size=SMALL)
        y += 20
    caption = (
        "One pass of the reference cleaner over a small compacted log, drawn when this site was "
        "built from the segments it read and wrote: the offset map fills its quota before the dirty "
        "section ends, so the records past its reach are left for the next pass (and `c=1` stays: the "
        "map never read `c=2`)."
    )
    return svg.render(y, "fig-compaction-pass-caption"), caption
