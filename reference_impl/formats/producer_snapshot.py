"""Producer state: the ``<offset>.snapshot`` file codec (spec/formats/producer-snapshot.md).

A snapshot records, for each producer id, what a broker needs to keep
idempotence and transactions across restarts. The file is named after the
exclusive end offset it covers. Layout, big-endian [ProducerStateManager.java,
ProducerSnapshot.json]::

    0   version int16 = 1
    2   crc uint32            CRC-32C of bytes [6, EOF)
    6   entryCount int32
    10  entries, 46 bytes each:
        producerId int64 | epoch int16 | lastSequence int32 | lastOffset int64
        | offsetDelta int32 | timestamp int64 | coordinatorEpoch int32
        | currentTxnFirstOffset int64

A snapshot with no producers is the 10 bytes ``00 01 <crc of 00000000> 00 00 00 00``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import CorruptSnapshotError
from ..records.checksums import crc32c
from ..records.record import decrement_sequence

SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc, entryCount
SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
SNAPSHOT_ENTRY_SIZE = SNAPSHOT_ENTRY.size  # 46
PRODUCER_SNAPSHOT_VERSION = 1
CRC_OFFSET = 2
PRODUCER_ENTRIES_OFFSET = 6  # the CRC covers [6, EOF): the entry count and the entries


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's state as a snapshot stores it (SNAP-1, SNAP-6, SNAP-7).

    ``last_offset >= 0`` means batch metadata is present (lastSequence, lastOffset,
    offsetDelta, timestamp describe the producer's last batch); ``-1`` means none.
    ``current_txn_first_offset >= 0`` means a transaction is ongoing.
    """

    producer_id: int
    producer_epoch: int
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1

    @property
    def has_batch_metadata(self) -> bool:
        return self.last_offset >= 0

    @property
    def has_ongoing_transaction(self) -> bool:
        return self.current_txn_first_offset >= 0

    @property
    def first_sequence(self) -> int | None:
        """BatchMetadata.firstSeq: lastSequence - offsetDelta, wrapping below 0 to Int.MAX."""
        if not self.has_batch_metadata:
            return None
        return decrement_sequence(self.last_sequence, self.offset_delta)


def read_snapshot(data: bytes, *, file: str | None = None) -> list[ProducerSnapshotEntry]:
    """Decode a snapshot (SNAP-1 to SNAP-5), raising ``CorruptSnapshotError`` as Kafka's
    readSnapshot would.

    Every error concerns the whole file, so its position is 0 (ERR-3). The checks
    run in Kafka's order: the structure must parse (header, then
    entryCount whole entries), then the version must be 1, then the stored CRC must
    equal the CRC-32C of [6, EOF). Bytes after the entries are covered by the CRC
    and, like Kafka, accepted (``snapshot_trailing_bytes`` reports them).
    """
    if len(data) < SNAPSHOT_HEADER.size:
        raise CorruptSnapshotError(
            f"snapshot of {len(data)} bytes is shorter than its {SNAPSHOT_HEADER.size}-byte header",
            file=file, position=0,
        )  # fmt: skip
    version, stored_crc, count = SNAPSHOT_HEADER.unpack_from(data, 0)
    if count < 0:
        raise CorruptSnapshotError(f"negative entry count {count}", file=file, position=0)
    available = (len(data) - SNAPSHOT_HEADER.size) // SNAPSHOT_ENTRY_SIZE
    if count > available:
        raise CorruptSnapshotError(
            f"entry count {count} but only {available} whole 46-byte entries follow",
            file=file, position=0,
        )  # fmt: skip
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptSnapshotError(
            f"unknown snapshot version {version} (only {PRODUCER_SNAPSHOT_VERSION} exists)",
            file=file, position=0,
        )  # fmt: skip
    computed = crc32c(memoryview(data)[PRODUCER_ENTRIES_OFFSET:])
    if computed != stored_crc:
        raise CorruptSnapshotError(
            f"stored CRC-32C 0x{stored_crc:08x} != computed 0x{computed:08x}",
            file=file, position=0,
        )  # fmt: skip
    return [
        ProducerSnapshotEntry(
            *SNAPSHOT_ENTRY.unpack_from(data, SNAPSHOT_HEADER.size + i * SNAPSHOT_ENTRY_SIZE)
        )
        for i in range(count)
    ]


def snapshot_trailing_bytes(data: bytes) -> int:
    """Bytes after the last declared entry of a snapshot that ``read_snapshot`` accepted."""
    (count,) = struct.unpack_from(">i", data, PRODUCER_ENTRIES_OFFSET)
    return len(data) - SNAPSHOT_HEADER.size - count * SNAPSHOT_ENTRY_SIZE


def write_snapshot(entries: Iterable[ProducerSnapshotEntry]) -> bytes:
    """SNAP-8: a version-1 snapshot, what Kafka's writeSnapshot puts on disk, byte for byte."""
    entries = list(entries)
    body = bytearray(struct.pack(">i", len(entries)))
    for entry in entries:
        body += SNAPSHOT_ENTRY.pack(
            entry.producer_id,
            entry.producer_epoch,
            entry.last_sequence,
            entry.last_offset,
            entry.offset_delta,
            entry.timestamp,
            entry.coordinator_epoch,
            entry.current_txn_first_offset,
        )
    return struct.pack(">hI", PRODUCER_SNAPSHOT_VERSION, crc32c(body)) + bytes(body)
