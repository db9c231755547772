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
parsed lazily: recovery checks only framing and CRC, as Kafka's LogSegment.recover does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from .. import _speedups
from ..errors import Category, CorruptRecordError, KafkaLogError
from .checksums import crc32c
from .compression import DEFAULT_DECOMPRESSION_LIMIT, Compression, codec_for_id, decompress
from .record import INT32_MAX, Header, Record, TimestampType, increment_sequence
from .varint import decode_varint, decode_varlong

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
_CODECS = tuple(Compression)  # by id
_LAST_V2_CODEC_ID = Compression.ZSTD  # ids 5 to 7 are refused (codec_for_id)
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
        codec_id = self.attributes & COMPRESSION_CODEC_MASK
        if codec_id <= _LAST_V2_CODEC_ID:  # every batch is checked: skip the call when valid
            return _CODECS[codec_id]
        try:
            return codec_for_id(codec_id, self.magic)
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
        if self.batch_length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:  # _declared_size_ok
            raise CorruptRecordError(
                Category.INVALID_BATCH_SIZE,
                f"batchLength {self.batch_length} gives a batch below the "
                f"{RECORD_BATCH_OVERHEAD}-byte header",
                file=self.file,
                position=self.position,
                offset=self.base_offset,
            )
        computed = crc32c(memoryview(self.raw)[ATTRIBUTES_OFFSET:])  # compute_crc, inlined
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
            return decode_records_fast(self, buf, start)
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
                chunk, pos = decode_record_chunk_fast(self, buf, pos, done, size)
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


def decode_records(batch: RecordBatch, buf: bytes, start: int = 0) -> list[Record]:
    """DefaultRecordBatch.RecordIterator + DefaultRecord.readFrom: the records of ``batch``
    are ``buf[start:]``, laid end to end (REC-1), exactly recordsCount of them (REC-10),
    their offsetDeltas not required to be consecutive (REC-11)."""
    records, pos = decode_record_chunk(batch, buf, start, 0, batch.records_count)
    check_records_end(batch, buf, pos)
    return records


def decode_record_chunk(
    batch: RecordBatch, buf: bytes, start: int, done: int, count: int
) -> tuple[list[Record], int]:
    """``count`` records of ``batch`` from ``buf[start:]``, the ``done`` before them already
    decoded, and where the next one starts (``decode_records`` a chunk at a time)."""
    records = []
    pos = start
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    for _ in range(count):
        if pos >= len(buf):
            present = done + len(records)
            raise _invalid(f"only {present} of {batch.records_count} records present")
        record, pos = _decode_record(batch, buf, pos, log_append)
        records.append(record)
    return records, pos


def check_records_end(batch: RecordBatch, buf: bytes, pos: int) -> None:
    """REC-10: the records end where the batch's bytes (or its inflated stream) end."""
    if pos != len(buf):
        raise _invalid(f"{len(buf) - pos} bytes left after {batch.records_count} records")


def _read_bytes(buf: bytes, pos: int, limit: int, what: str) -> tuple[bytes | None, int]:
    """A varint length then that many bytes: REC-6, a negative length is null; REC-7, the
    bytes must not run past the record."""
    size, pos = decode_varint(buf, pos)
    if size < 0:
        return None, pos
    if pos + size > limit:
        raise _invalid(f"{what} of {size} bytes overruns its record")
    return buf[pos : pos + size], pos + size


# A record (record-batch-v2.md Table 2): length varint | attributes int8 | timestampDelta
# varlong | offsetDelta varint | keyLength varint | key | valueLength varint | value
# | headersCount varint | (keyLength varint | key | valueLength varint | value)*
def _decode_record(
    batch: RecordBatch, buf: bytes, pos: int, log_append: bool
) -> tuple[Record, int]:
    """One record from ``pos``: REC-2, its length within the bytes left; REC-3, its fields
    ending exactly at its length; REC-4, attributes read but unused; REC-5, its offset and
    CreateTime timestamp from the deltas; BATCH-11, a LogAppendTime batch's maxTimestamp."""
    length, pos = decode_varint(buf, pos)
    end = pos + length
    if length < 0 or end > len(buf):
        raise _invalid(f"record body of {length} bytes overruns the batch")
    if pos >= end:
        raise _invalid("record body too short for its attributes")
    attributes = buf[pos]
    timestamp_delta, p = decode_varlong(buf, pos + 1)
    offset_delta, p = decode_varint(buf, p)
    key, p = _read_bytes(buf, p, end, "key")
    value, p = _read_bytes(buf, p, end, "value")
    header_count, p = decode_varint(buf, p)
    headers, p = _read_headers(buf, p, end, header_count)
    if p != end:
        raise _invalid(f"record declared {length} body bytes but {p - (end - length)} were read")
    offset = batch.base_offset + offset_delta
    sequence = (
        increment_sequence(batch.base_sequence, offset_delta) if batch.base_sequence >= 0 else -1
    )
    timestamp = batch.max_timestamp if log_append else batch.base_timestamp + timestamp_delta
    record = Record(
        offset, timestamp, key, value, headers, sequence, attributes,
        offset_delta, timestamp_delta,
    )  # fmt: skip
    return record, end


def _read_headers(buf: bytes, p: int, end: int, count: int) -> tuple[tuple[Header, ...], int]:
    """``count`` headers from ``p``, none past ``end``, the record's end: REC-8, a count
    neither negative nor above the bytes left; REC-9, no negative (null) header key."""
    if count < 0 or count > end - p:
        raise _invalid(f"invalid header count {count}")
    headers = []
    for _ in range(count):
        key_size, p = decode_varint(buf, p)
        if key_size < 0 or p + key_size > end:
            raise _invalid(f"invalid header key size {key_size}")  # REC: null header key
        header_key = buf[p : p + key_size]
        header_value, p = _read_bytes(buf, p + key_size, end, "header value")
        headers.append(Header(header_key, header_value))
    return tuple(headers), p


# --- the same decoder, fast --------------------------------------------------------------

# zigzag values of the one-byte varints (high bit clear), most lengths, deltas and counts
_ZIGZAG = tuple((byte >> 1) ^ -(byte & 1) for byte in range(0x80))


class _NotWellFormed(Exception):
    """Raised by the fast decoder on anything the readable one should judge."""


def decode_records_fast(batch: RecordBatch, buf: bytes, start: int = 0) -> list[Record]:
    """``decode_records``, about four times faster on well-formed records: one-byte varints
    are decoded inline (a table lookup), and so are the two-byte lengths of 64 to 8191
    bytes; each check is folded into one test; records are built as plain tuples. On
    anything else (a failed check, a varint error, a short buffer) the readable decoder
    decodes the batch again, so the records and every error are the readable decoder's;
    tests/test_records_fast.py compares the two (benchmarks/README.md: decode figures)."""
    try:
        records, pos = _decode_well_formed(batch, buf, start, batch.records_count)
        if pos == len(buf):
            return records
    except (_NotWellFormed, IndexError, KafkaLogError):
        pass
    return decode_records(batch, buf, start)


def decode_record_chunk_fast(
    batch: RecordBatch, buf: bytes, start: int, done: int, count: int
) -> tuple[list[Record], int]:
    """``decode_record_chunk``, as fast as ``decode_records_fast`` and with the same hand-over
    to the readable decoder (for this chunk only)."""
    try:
        return _decode_well_formed(batch, buf, start, count)
    except (_NotWellFormed, IndexError, KafkaLogError):
        return decode_record_chunk(batch, buf, start, done, count)


def _decode_well_formed(
    batch: RecordBatch, buf: bytes, pos: int, count: int
) -> tuple[list[Record], int]:
    zigzag, new_record = _ZIGZAG, tuple.__new__
    size = len(buf)
    base_offset, base_timestamp, base_sequence = (
        batch.base_offset, batch.base_timestamp, batch.base_sequence,
    )  # fmt: skip
    log_append_time = batch.attributes & TIMESTAMP_TYPE_MASK
    records = []
    for _ in range(count):
        byte = buf[pos]  # the record's length: one or, for 64 to 8191 bytes, two bytes
        if byte < 0x80:
            length, pos = zigzag[byte], pos + 1
        elif buf[pos + 1] < 0x80:
            raw = (byte & 0x7F) | buf[pos + 1] << 7
            length, pos = (raw >> 1) ^ -(raw & 1), pos + 2
        else:
            length, pos = decode_varint(buf, pos)
        end = pos + length
        if length <= 0 or end > size:
            raise _NotWellFormed
        attributes, byte = buf[pos], buf[pos + 1]
        if byte < 0x80:
            timestamp_delta, pos = zigzag[byte], pos + 2
        else:
            timestamp_delta, pos = decode_varlong(buf, pos + 1)
        byte = buf[pos]
        offset_delta, pos = (zigzag[byte], pos + 1) if byte < 0x80 else decode_varint(buf, pos)
        byte = buf[pos]
        key_size, pos = (zigzag[byte], pos + 1) if byte < 0x80 else decode_varint(buf, pos)
        if key_size < 0:
            key = None
        else:
            key, pos = buf[pos : pos + key_size], pos + key_size
        byte = buf[pos]  # the value's size: as the length
        if byte < 0x80:
            value_size, pos = zigzag[byte], pos + 1
        elif buf[pos + 1] < 0x80:
            raw = (byte & 0x7F) | buf[pos + 1] << 7
            value_size, pos = (raw >> 1) ^ -(raw & 1), pos + 2
        else:
            value_size, pos = decode_varint(buf, pos)
        if value_size < 0:
            value = None
        else:
            value, pos = buf[pos : pos + value_size], pos + value_size
        if buf[pos] == 0:  # no headers, the usual case
            headers, pos = (), pos + 1
        else:
            header_count, pos = decode_varint(buf, pos)
            headers, pos = _read_headers(buf, pos, end, header_count)
        if pos != end:  # also catches a key or value that overran the record
            raise _NotWellFormed
        sequence = -1
        if base_sequence >= 0:
            sequence = base_sequence + offset_delta
            if sequence > INT32_MAX:  # increment_sequence's wrap-around
                sequence -= INT32_MAX + 1
        timestamp = batch.max_timestamp if log_append_time else base_timestamp + timestamp_delta
        records.append(new_record(Record, (
            base_offset + offset_delta, timestamp, key, value, headers, sequence, attributes,
            offset_delta, timestamp_delta,
        )))  # fmt: skip
    return records, pos


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


# The compiled record decoder (issue 14), unless pure Python: reference_impl/_speedups.
if _speedups.kernels is not None:
    _speedups.kernels.bind_records(Record, Header, decode_records, decode_record_chunk)
    decode_records_fast = _speedups.kernels.decode_records
    decode_record_chunk_fast = _speedups.kernels.decode_record_chunk
