"""What a read returns: LogOffsetMetadata and FetchDataInfo (spec/behaviour/read.md).

``LogOffsetMetadata`` locates an offset physically: the base offset of the segment
holding it and the byte position of its batch in that segment's ``.log``
[storage/.../log/LogOffsetMetadata.java]. ``FetchDataInfo`` is a read's result:
where the read started and the bytes of whole batches (the last one possibly cut
short by ``max_bytes``) [FetchDataInfo.java].
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from ..constants import UNKNOWN_OFFSET
from ..formats.index_entries import AbortedTxn
from ..records import Batch, iter_batches
from .file_records import FileRecords

UNKNOWN_FILE_POSITION = -1


@dataclass(frozen=True, slots=True)
class LogOffsetMetadata:
    message_offset: int
    segment_base_offset: int = UNKNOWN_OFFSET
    relative_position_in_segment: int = UNKNOWN_FILE_POSITION

    def message_offset_only(self) -> bool:
        """True when only the offset is known, not where it is on disk."""
        return (
            self.segment_base_offset == UNKNOWN_OFFSET
            and self.relative_position_in_segment == UNKNOWN_FILE_POSITION
        )


class SegmentSize:
    """``LogSegment.read``'s default ``max_position``: the segment's size when the read starts."""


SEGMENT_SIZE = SegmentSize()


class FetchIsolation(Enum):
    """How far a read may go [FetchIsolation.java]: the log end offset (a follower), the
    high watermark (a read_uncommitted consumer) or the last stable offset (a
    read_committed consumer, READ-21)."""

    LOG_END = "log_end"
    HIGH_WATERMARK = "high_watermark"
    TXN_COMMITTED = "txn_committed"


@dataclass(frozen=True, slots=True)
class FetchDataInfo:
    """``records`` is a slice of a segment's ``.log``, or None for Kafka's MemoryRecords.EMPTY.
    ``first_entry_incomplete``: ``max_bytes`` cut the first batch short.
    ``aborted_transactions``: for a read_committed read, the aborted transactions that
    overlap the fetched range (READ-22); None for other reads."""

    fetch_offset_metadata: LogOffsetMetadata
    records: FileRecords | None = None
    first_entry_incomplete: bool = False
    aborted_transactions: tuple[AbortedTxn, ...] | None = None

    def with_aborted_transactions(self, aborted: list[AbortedTxn]) -> FetchDataInfo:
        return replace(self, aborted_transactions=tuple(aborted))

    def data(self) -> bytes:
        return b"" if self.records is None else self.records.read_bytes()

    def batches(self) -> list[Batch]:
        """The whole batches of the result (a cut last batch is not one)."""
        return list(iter_batches(self.data()))

    @property
    def size_in_bytes(self) -> int:
        return 0 if self.records is None else self.records.size
