"""The records a recovery removes, stated before anything changes (spec/behaviour/recovery.md §7,
RECOV-24).

Kafka's recovery cuts a segment after its last valid batch and deletes every later segment,
intact or not (RECOV-3, RECOV-5): one flipped byte in the second of four segments of the
corpus's ``invoice-0`` removes 55,059 records, two whole segments among them. A broker does
it without a word; ``klogspec recover`` first measures what its plan removes, reading the
removed bytes with the framing rules and each batch's CRC:

* records: those of the intact batches among the removed bytes (framed, CRC-32C holding,
  records decoding), found as ``klogspec salvage`` finds them (salvage.py: after a damaged
  batch, at the next intact one), so a broken length field does not hide what follows;
* damaged bytes: the ranges between them, whose records no reader can count;
* offsets: the ``[first, end)`` the batch headers claim, per file;
* bytes of ``.log`` files, and the deleted segments whose every batch is intact.

Only intact records ask for a confirmation: a torn tail, a preallocated file's zeros or a
last batch a crash left half-written (it may frame, on zeros, and fail its CRC) are what every
unclean shutdown leaves, and a recovery removing only those goes on unasked. Files the
loader deletes for other reasons (``.deleted``, ``.cleaned``, replaced by a ``.swap``,
below the log start offset) hold records no reader can see any more: not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.formats.file_naming import FileKind, classify
from reference_impl.log.load_events import Reason
from reference_impl.log.segment_recovery import ZERO_TAIL

from .intact import mapped, walk_intact, zero_tail
from .plan import Action, RecoveryPlan


@dataclass
class RemovedRange:
    """One ``.log`` range a plan removes: ``whole`` for a deleted segment."""

    file: str
    position: int
    bytes: int
    whole: bool
    records: int = 0  # in intact batches
    damaged_bytes: int = 0  # in the ranges between them
    offsets: tuple[int, int] | None = None

    @property
    def intact(self) -> bool:
        """Every byte is an intact batch."""
        return self.records > 0 and not self.damaged_bytes

    def to_dict(self) -> dict:
        out = {"file": self.file, "position": self.position, "bytes": self.bytes}
        out.update(whole=self.whole, records=self.records, damagedBytes=self.damaged_bytes)
        out["intact"] = self.intact
        if self.offsets is not None:
            out["offsets"] = list(self.offsets)
        return out


@dataclass
class Loss:
    ranges: list[RemovedRange] = field(default_factory=list)

    @property
    def records(self) -> int:
        return sum(r.records for r in self.ranges)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.ranges)

    @property
    def intact_segments(self) -> list[str]:
        return [r.file for r in self.ranges if r.whole and r.intact]

    @property
    def offsets(self) -> tuple[int, int] | None:
        """[first, end) over every range: the span of offsets the log loses."""
        spans = [r.offsets for r in self.ranges if r.offsets is not None]
        return (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None

    @property
    def damaged_bytes(self) -> int:
        return sum(r.damaged_bytes for r in self.ranges)

    def to_dict(self) -> dict:
        offsets = self.offsets
        return {
            "records": self.records,
            "damagedBytes": self.damaged_bytes,
            "bytes": self.bytes,
            "offsets": None if offsets is None else list(offsets),
            "intactSegments": self.intact_segments,
            "ranges": [r.to_dict() for r in self.ranges],
        }


def measure_loss(dir: Path, plan: RecoveryPlan) -> Loss:
    """RECOV-24: the records ``plan`` removes from ``dir``'s ``.log`` files."""
    loss = Loss()
    for action in plan.actions:
        if not loses_records(action.action, action.file, action.reason):
            continue
        if action.error == ZERO_TAIL:
            continue  # tail_kind read it all: zeros, no record (and maybe gigabytes of them)
        removed = _measure(dir / action.file, action)
        if removed.records or removed.offsets is not None:  # not a torn tail, not zeros
            loss.ranges.append(removed)
    return loss


def loses_records(action: str, file: str, reason: str) -> bool:
    """A truncation of a segment's ``.log`` (any reason), or its deletion after a truncation
    (RECOV-5): the changes that remove records a reader could see. Shared with salvage."""
    info = classify(file)
    if info.kind is not FileKind.LOG or info.marker is not None:
        return False
    return action == "truncate" or (action == "delete" and reason == Reason.AFTER_TRUNCATION)


def _measure(path: Path, action: Action) -> RemovedRange:
    whole = action.action == "delete"
    start = 0 if whole else action.position
    removed = RemovedRange(action.file, start, action.bytes or 0, whole, offsets=action.offsets)
    with mapped(path) as data:
        end = min(start + removed.bytes, len(data))
        for batch, damaged in walk_intact(data, start, end, action.file):
            if batch is not None:
                removed.records += batch.records_count
            elif not zero_tail(data, *damaged, end):
                removed.damaged_bytes += damaged[1] - damaged[0]  # a zero tail is no damage
    return removed
