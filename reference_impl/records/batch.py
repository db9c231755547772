"""RecordBatch v2 (magic 2): the 61-byte header and its records (spec/formats/record-batch-v2.md).

Layout, all big-endian [DefaultRecordBatch.java]::

    0  baseOffset int64          27 baseTimestamp int64     53 baseSequence int32
    8  batchLength int32         35 maxTimestamp int64      57 recordsCount int32
    12 partitionLeaderEpoch      43 producerId int64        61 records...
    16 magic int8 = 2            51 producerEpoch int16
    17 crc uint32 (CRC-32C of [21, end))
    21 attributes int16
    23 lastOffsetDelta int32

BATCH-1: every field at the offset above. The CRC starts at attributes (BATCH-3), so a
broker may rewrite baseOffset and the leader epoch without recomputing it. Records are
parsed lazily: recovery checks only framing and CRC, as Kafka's LogSegment.recover does;
default_record.py decodes them, whole (``records()``) or a chunk at a time
(``record_chunks()``, memory bounded whatever recordsCount says).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import Category, CorruptRecordError, KafkaLogError
from .checksums import crc32c
from .compression import DEFAULT_DECOMPRESSION_LIMIT, Compression, codec_for_id, decompress
from .default_record import (  # noqa: F401 (decode_records: the readable decoder's home name)
    check_records_end,
    decode_records,
    record_chunk_of,
    records_of,
)
from .record import Record, TimestampType, increment_sequence

HEADER = struct.Struct(">qiibIhiqqqhii")
RECORD_BATCH_OVERHEAD = HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAGIC = 2

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40
# Records ``record_chunks`` decodes at a time: about 1 MiB of Record tuples for tiny
# records, one chunk for a usual batch (a 16 KiB batch holds tens to hundreds).
RECORDS_PER_CHUNK = 4096


def _invalid(message: str) -> CorruptRecordError:
    return CorruptRecordError(Category.INVALID_RECORD, message)


@dataclass(slots=True)
class RecordBatch:
    """A v2 batch as it sits in a .log file: header fields plus its raw bytes (BATCH-1)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    raw: bytes
    position: int = 0
    file: str | None = None

    @classmethod
    def from_bytes(cls, raw: bytes, *, position: int = 0, file: str | None = None) -> RecordBatch:
        """Parse the header of one whole batch (``raw`` = its 12 + batchLength bytes)."""
        if len(raw) < RECORD_BATCH_OVERHEAD:
            # the entry passed the framing checks: its offset field locates it (ERR-4)
            raise CorruptRecordError(
                Category.INVALID_BATCH_SIZE,
                f"v2 batch of {len(raw)} bytes is below the {RECORD_BATCH_OVERHEAD}-byte header",
                file=file,
                position=position,
                offset=struct.unpack_from(">q", raw, 0)[0] if len(raw) >= 8 else None,
            )
        return cls(*HEADER.unpack_from(raw, 0), bytes(raw), position, file)  # fields in order

    # --- attributes (BATCH-9: only the low byte is read) ---
    @property
    def compression_id(self) -> int:
        """BATCH-9: the codec bits of the attributes' low byte."""
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression(self) -> Compression:
        """BATCH-10, COMP-1: the codec of the attribute bits; ids 5 to 7 are
        ``unsupported_compression``."""
        try:
            return codec_for_id(self.compression_id, self.magic)
        except KafkaLogError as exc:
            raise exc.located(file=self.file, position=self.position, offset=self.base_offset)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """BATCH-12: baseTimestamp is the delete horizon when attribute bit 6 is set."""
        return self.base_timestamp if self.has_delete_horizon else None

    # --- derived offsets and sizes ---
    @property
    def last_offset(self) -> int:
        """BATCH-5: from the header, never from the records."""
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def size_in_bytes(self) -> int:
        return len(self.raw)

    @property
    def last_sequence(self) -> int:
        """BATCH-6: baseSequence advanced by lastOffsetDelta (wrapping), or -1."""
        if self.base_sequence < 0:
            return -1
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    # --- integrity (BATCH-3: CRC-32C over attributes..end) ---
    def compute_crc(self) -> int:
        return crc32c(memoryview(self.raw)[ATTRIBUTES_OFFSET:])

    @property
    def is_valid(self) -> bool:
        return self._declared_size_ok() and self.compute_crc() == self.crc

    def _declared_size_ok(self) -> bool:
        # Kafka's sizeInBytes() comes from the batchLength field, not the buffer
        return self.batch_length + LOG_OVERHEAD >= RECORD_BATCH_OVERHEAD

    def ensure_valid(self) -> None:
        """Kafka's ensureValid: BATCH-2, a declared size of at least 61 bytes; BATCH-4, a
        stored CRC equal to the computed one."""
        if not self._declared_size_ok():
            raise CorruptRecordError(
                Category.INVALID_BATCH_SIZE,
                f"batchLength {self.batch_length} gives a batch below the "
                f"{RECORD_BATCH_OVERHEAD}-byte header",
                file=self.file,
                position=self.position,
                offset=self.base_offset,
            )
        computed = self.compute_crc()
        if computed != self.crc:
            raise CorruptRecordError(
                Category.CRC_MISMATCH,
                f"stored CRC-32C 0x{self.crc:08x} != computed 0x{computed:08x}",
                file=self.file,
                position=self.position,
                offset=self.base_offset,
            )

    # --- records ---
    def records(self, *, decompression_limit: int = DEFAULT_DECOMPRESSION_LIMIT) -> list[Record]:
        """Decode every record (REC-1 to REC-10): BATCH-7, a negative recordsCount is invalid;
        BATCH-8, a count of 0 reads no byte after the header; COMP-2, one stream after it.
        A list of recordsCount records: for a batch of any shape, ``record_chunks``."""
        where = self._where()
        if self._no_records():
            return []  # Kafka does not look at the bytes of an empty batch
        try:
            buf, start = self._record_bytes(decompression_limit)
            return records_of(self, buf, start)
        except KafkaLogError as exc:
            raise _relocated(exc, where) from None

    def record_chunks(
        self,
        *,
        decompression_limit: int = DEFAULT_DECOMPRESSION_LIMIT,
        chunk_size: int = RECORDS_PER_CHUNK,
    ) -> Iterator[list[Record]]:
        """``records()`` in lists of at most ``chunk_size`` records, decoded as they are
        taken: memory is bounded by the decompressed bytes (at most the limit, COMP-3) and
        one chunk, whatever recordsCount says (a 4.8 MB zstd batch can hold 9 million
        7-byte records). The same records and the same error as ``records()``; the error
        comes after the chunks before it."""
        where = self._where()
        if self._no_records():
            return
        try:
            buf, pos = self._record_bytes(decompression_limit)
            done, count = 0, self.records_count
            while done < count:
                size = min(chunk_size, count - done)
                chunk, pos = record_chunk_of(self, buf, pos, done, size)
                done += size
                yield chunk
            check_records_end(self, buf, pos)
        except KafkaLogError as exc:
            raise _relocated(exc, where) from None

    def _where(self) -> dict:
        return {"file": self.file, "position": self.position, "offset": self.base_offset}

    def _no_records(self) -> bool:
        """BATCH-7: a negative recordsCount is invalid; BATCH-8: 0 reads nothing more."""
        if self.records_count < 0:
            raise _invalid(f"negative record count {self.records_count}").located(**self._where())
        return self.records_count == 0

    def _record_bytes(self, limit: int) -> tuple[bytes, int]:
        """The records' bytes and where they start: the batch itself when uncompressed (no
        copy), else its one inflated stream (COMP-2), never more than ``limit`` bytes."""
        codec = self.compression
        if codec is Compression.NONE:
            return self.raw, RECORD_BATCH_OVERHEAD
        payload = memoryview(self.raw)[RECORD_BATCH_OVERHEAD:]
        return decompress(codec, payload, limit=limit, magic=self.magic), 0


def _relocated(exc: KafkaLogError, where: dict) -> KafkaLogError:
    """A position found while decoding is inside the (decompressed) record bytes, not the
    file: the error reports the batch's own position instead."""
    exc.position = None
    return exc.located(**where)


# --- in-place rewrites a broker makes (BATCH-3: fields outside the CRC) ---------------


def set_base_offset(raw: bytes, base_offset: int) -> bytes:
    """Offset assignment: baseOffset is outside the CRC, so nothing else changes."""
    return struct.pack(">q", base_offset) + raw[8:]


def set_partition_leader_epoch(raw: bytes, epoch: int) -> bytes:
    """Leader epoch stamping: also outside the CRC."""
    return raw[:12] + struct.pack(">i", epoch) + raw[16:]


def set_max_timestamp(raw: bytes, timestamp_type: TimestampType, max_timestamp: int) -> bytes:
    """DefaultRecordBatch.setMaxTimestamp: attributes bit 3 and maxTimestamp (BATCH-13), then
    a new CRC (BATCH-3)."""
    if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("a v2 batch needs CreateTime or LogAppendTime")  # Kafka: IAE
    buf = bytearray(raw)
    (attributes,) = struct.unpack_from(">h", buf, ATTRIBUTES_OFFSET)
    attributes &= ~TIMESTAMP_TYPE_MASK
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    struct.pack_into(">h", buf, ATTRIBUTES_OFFSET, attributes)
    struct.pack_into(">q", buf, 35, max_timestamp)
    struct.pack_into(">I", buf, CRC_OFFSET, crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return bytes(buf)
