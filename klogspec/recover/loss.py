"""The records a recovery removes, stated before anything changes (spec/behaviour/recovery.md §7,
RECOV-24).

Kafka's recovery cuts a segment after its last valid batch and deletes every later segment,
intact or not (RECOV-3, RECOV-5): one flipped byte in the second of four segments of the
corpus's ``invoice-0`` removes 55,059 records, two whole segments among them. A broker does
it without a word; ``klogspec recover`` first measures what its plan removes, reading the
removed bytes with the framing rules and each batch's CRC:

* records: the ``recordsCount`` of each v2 batch that frames (``lastOffsetDelta + 1`` for a
  legacy entry), whether its CRC holds or not;
* offsets: the ``[first, end)`` the batch headers claim, per file;
* bytes of ``.log`` files, and the deleted segments whose every batch is intact.

Bytes that frame no batch (a torn tail, a preallocated file's zeros) hold no record: a
recovery that removes only those removes no record and needs no confirmation. Files the
loader deletes for other reasons (``.deleted``, ``.cleaned``, replaced by a ``.swap``,
below the log start offset) hold records no reader can see any more: not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import FileKind, classify
from reference_impl.log.load_events import Reason
from reference_impl.records import iter_file_batches

from .plan import Action, RecoveryPlan


@dataclass
class RemovedRange:
    """One ``.log`` range a plan removes: ``whole`` for a deleted segment."""

    file: str
    position: int
    bytes: int
    whole: bool
    records: int = 0
    offsets: tuple[int, int] | None = None
    intact: bool = False  # every batch of it frames and passes its CRC, and nothing follows
    intact_records: int = 0  # records of the batches that pass their CRC

    def to_dict(self) -> dict:
        out = {"file": self.file, "position": self.position, "bytes": self.bytes}
        out.update(whole=self.whole, records=self.records, intact=self.intact)
        out["intactRecords"] = self.intact_records
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

    def to_dict(self) -> dict:
        offsets = self.offsets
        return {
            "records": self.records,
            "bytes": self.bytes,
            "offsets": None if offsets is None else list(offsets),
            "intactSegments": self.intact_segments,
            "ranges": [r.to_dict() for r in self.ranges],
        }


_LOSING = {"truncate": None, "delete": {Reason.AFTER_TRUNCATION}}  # None: any reason


def measure_loss(dir: Path, plan: RecoveryPlan) -> Loss:
    """RECOV-24: the records ``plan`` removes from ``dir``'s ``.log`` files."""
    loss = Loss()
    for action in plan.actions:
        if action.action not in _LOSING or classify(action.file).kind is not FileKind.LOG:
            continue
        reasons = _LOSING[action.action]
        if reasons is not None and action.reason not in reasons:
            continue
        removed = _measure(dir / action.file, action)
        if removed.records:  # a torn tail or zeros: bytes, but no record
            loss.ranges.append(removed)
    return loss


def _measure(path: Path, action: Action) -> RemovedRange:
    whole = action.action == "delete"
    start = 0 if whole else action.position
    removed = RemovedRange(action.file, start, action.bytes or 0, whole, offsets=action.offsets)
    end = start + removed.bytes
    intact = True
    try:
        with open(path, "rb") as handle:
            scanner = iter_file_batches(handle, file=str(path), start=start, end=end)
            for batch in scanner:
                count, valid = _records(batch), batch.is_valid
                removed.records += count
                removed.intact_records += count if valid else 0
                intact = intact and valid
            intact = intact and scanner.valid_bytes == end
    except (KafkaLogError, OSError):
        intact = False  # stop at the first entry that does not frame: no record after it
    removed.intact = intact and removed.records > 0
    return removed


def _records(batch) -> int:
    """recordsCount of a v2 batch (0 when negative: BATCH-7 makes it invalid); a legacy
    entry's wrapper holds lastOffset - baseOffset + 1 as far as its header tells."""
    count = getattr(batch, "records_count", None)
    if count is not None:
        return max(count, 0)
    return max(batch.last_offset - batch.base_offset + 1, 1)
