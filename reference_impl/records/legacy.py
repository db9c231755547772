"""Legacy messages, magic 0 and 1 (spec/formats/legacy-message.md, LEGACY-1 to LEGACY-20).

Each legacy entry in a .log file is one message (LEGACY-1) [LegacyRecord.java]::

    offset int64 | size int32 | crc uint32 | magic int8 | attributes int8
    | timestamp int64 (v1 only) | keyLength int32 | key | valueLength int32 | value

The CRC is CRC-32 (IEEE) over magic..end of value (LEGACY-3). A compressed *wrapper*
message holds, as its value, a compressed stream of inner entries; its own offset
is that of the **last** inner message, and v1 inner offsets are relative
[AbstractLegacyRecordBatch.java].
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..errors import Category, CorruptRecordError, KafkaLogError
from .checksums import crc32
from .compression import (
    DEFAULT_DECOMPRESSION_LIMIT,
    Compression,
    codec_for_id,
    compress,
    decompress,
)
from .record import NO_TIMESTAMP, Record, SimpleRecord, TimestampType

ENTRY_HEADER = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
TIMESTAMP = struct.Struct(">q")
LENGTH = struct.Struct(">i")
RECORD_OVERHEAD_V0 = 14  # crc 4 + magic 1 + attributes 1 + key length 4 + value length 4
RECORD_OVERHEAD_V1 = 22  # plus the 8-byte timestamp
CRC_START = 16  # in an entry: offset 8 + size 4 + crc 4; the CRC covers [16, end)
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08


def _invalid(message: str) -> CorruptRecordError:
    return CorruptRecordError(Category.INVALID_RECORD, message)


@dataclass(slots=True)
class LegacyBatch:
    """One v0/v1 message (shallow entry), possibly a compressed wrapper."""

    offset: int
    crc: int
    magic: int
    attributes: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    raw: bytes
    position: int = 0
    file: str | None = None
    decompression_limit: int = DEFAULT_DECOMPRESSION_LIMIT

    @classmethod
    def from_bytes(cls, raw: bytes, *, position: int = 0, file: str | None = None) -> LegacyBatch:
        """Parse one whole entry: LEGACY-2, a size below its magic's overhead is
        ``invalid_batch_size``; LEGACY-5, null or bounded key and value; LEGACY-20, bytes
        after the value are ignored."""
        where = {"file": file, "position": position}
        if len(raw) < ENTRY_HEADER.size:
            raise CorruptRecordError(Category.TRUNCATED_BATCH, "legacy entry cut short", **where)
        offset, size, crc, magic, attributes = ENTRY_HEADER.unpack_from(raw, 0)
        overhead = RECORD_OVERHEAD_V1 if magic == 1 else RECORD_OVERHEAD_V0
        if size < overhead:
            raise CorruptRecordError(
                Category.INVALID_BATCH_SIZE,
                f"magic {magic} message of {size} bytes is below its {overhead}-byte overhead",
                offset=offset, **where,
            )  # fmt: skip
        pos = ENTRY_HEADER.size
        timestamp = NO_TIMESTAMP
        if magic == 1:
            (timestamp,) = TIMESTAMP.unpack_from(raw, pos)
            pos += TIMESTAMP.size
        try:
            key, pos = _read_blob(raw, pos, "key")
            value, pos = _read_blob(raw, pos, "value")
        except KafkaLogError as exc:
            raise exc.located(offset=offset, **where)
        # LEGACY-20: bytes after the value (inside the size, covered by the CRC) are
        # ignored, as LegacyRecord's size-delimited key()/value() slices ignore them.
        return cls(
            offset, crc, magic, attributes, timestamp, key, value, bytes(raw), position, file
        )

    # --- the batch interface shared with RecordBatch ---
    @property
    def compression_id(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression(self) -> Compression:
        """LEGACY-8: codec ids 4 (zstd) to 7 are ``unsupported_compression`` below magic 2."""
        try:
            return codec_for_id(self.compression_id, self.magic)
        except KafkaLogError as exc:
            raise exc.located(file=self.file, position=self.position, offset=self.offset)

    @property
    def timestamp_type(self) -> TimestampType:
        """LEGACY-6: NoTimestampType for magic 0, else attribute bit 3."""
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def max_timestamp(self) -> int:
        return self.timestamp

    @property
    def last_offset(self) -> int:
        """LEGACY-7: the entry's offset field."""
        return self.offset

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def base_offset(self) -> int:
        """Kafka's AbstractLegacyRecordBatch.baseOffset: the first inner offset (decompresses)."""
        if self.compression_id == Compression.NONE:
            return self.offset
        return next(self.record_chunks(chunk_size=1))[0].offset

    @property
    def size_in_bytes(self) -> int:
        return len(self.raw)

    partition_leader_epoch = -1
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    records_count = None
    is_transactional = False
    is_control = False

    def compute_crc(self) -> int:
        return crc32(memoryview(self.raw)[CRC_START:])

    @property
    def is_valid(self) -> bool:
        return self.compute_crc() == self.crc

    def ensure_valid(self) -> None:
        """LEGACY-4: the stored CRC-32 must equal the computed one."""
        computed = self.compute_crc()
        if computed != self.crc:
            raise CorruptRecordError(
                Category.CRC_MISMATCH,
                f"stored CRC-32 0x{self.crc:08x} != computed 0x{computed:08x}",
                file=self.file,
                position=self.position,
                offset=self.offset,
            )

    def records(self, *, decompression_limit: int | None = None) -> list[Record]:
        """The message itself, or a wrapper's inner messages with absolute offsets."""
        chunks = self.record_chunks(decompression_limit=decompression_limit, chunk_size=None)
        return [record for chunk in chunks for record in chunk]

    def record_chunks(
        self, *, decompression_limit: int | None = None, chunk_size: int | None = 4096
    ) -> Iterator[list[Record]]:
        """``records()`` in lists of at most ``chunk_size`` (None: one list), as
        RecordBatch.record_chunks: memory bounded by the inflated bytes and one chunk."""
        if self.compression_id == Compression.NONE:
            yield [Record(self.offset, self.timestamp, self.key, self.value)]
            return
        limit = decompression_limit or self.decompression_limit
        where = {"file": self.file, "position": self.position, "offset": self.offset}
        try:
            yield from _inner_record_chunks(self, limit, chunk_size)
        except KafkaLogError as exc:
            # positions (and v1 relative offsets) inside the decompressed inner stream
            # do not locate anything in the file: report the wrapper's own
            exc.position = exc.offset = None
            raise exc.located(**where) from None


def _read_blob(raw: bytes, pos: int, what: str) -> tuple[bytes | None, int]:
    if pos + LENGTH.size > len(raw):
        raise _invalid(f"{what} length runs past the message")
    (length,) = LENGTH.unpack_from(raw, pos)
    pos += LENGTH.size
    if length < 0:
        return None, pos
    if pos + length > len(raw):
        raise _invalid(f"{what} of {length} bytes runs past the message")
    return raw[pos : pos + length], pos + length


def _inner_record_chunks(
    wrapper: LegacyBatch, limit: int, chunk_size: int | None
) -> Iterator[list[Record]]:
    """AbstractLegacyRecordBatch.DeepRecordsIterator: LEGACY-9, a wrapper with a null value or
    no whole inner entry is invalid. The inner messages are walked twice, keeping none: once
    to check them all and find the last inner offset (v1 offsets are relative to it), then
    to yield their records, so every error comes before the first record."""
    if wrapper.value is None:
        raise _invalid("compressed wrapper message has a null value")
    stream = decompress(wrapper.compression, wrapper.value, limit=limit, magic=wrapper.magic)
    kept = deque(_inner_messages(stream, limit), maxlen=1)  # checks them all, keeps the last
    last = kept[0] if kept else None
    if last is None:
        raise _invalid("compressed wrapper holds no inner messages")
    chunk = []
    for message in _inner_messages(stream, limit):
        chunk.append(_absolute(wrapper, message, last.offset))
        if len(chunk) == chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _inner_messages(stream: bytes, limit: int) -> Iterator[LegacyBatch]:
    """The inner messages of an inflated wrapper: LEGACY-10, an inner size below 14 is
    ``invalid_batch_size``; LEGACY-11, a partial trailing inner entry ends the stream;
    LEGACY-12, a compressed inner message is invalid; LEGACY-19, each inner CRC is checked."""
    pos = 0
    while len(stream) - pos >= 12:  # a partly present trailing entry ends the stream
        _, size = struct.unpack_from(">qi", stream, pos)
        if size < RECORD_OVERHEAD_V0 or size > limit:
            raise CorruptRecordError(Category.INVALID_BATCH_SIZE, f"inner message size {size}")
        if pos + 12 + size > len(stream):
            return
        message = LegacyBatch.from_bytes(stream[pos : pos + 12 + size])
        message.ensure_valid()
        if message.compression_id != Compression.NONE:
            raise _invalid("an inner message is itself compressed")
        yield message
        pos += 12 + size


def _absolute(wrapper: LegacyBatch, inner: LegacyBatch, last_inner_offset: int) -> Record:
    """An inner message's offset and timestamp: LEGACY-13, magic 0 offsets are absolute;
    LEGACY-14, magic 1 ones relative to the wrapper's; LEGACY-15, as they are under a wrapper
    of offset 0; LEGACY-16, a wrapper offset below the last inner offset is invalid;
    LEGACY-17, a LogAppendTime wrapper's timestamp for every inner message."""
    offset = inner.offset
    if wrapper.magic == 1 and wrapper.offset != 0:
        # v1 inner offsets are relative; wrapper offset 0 (some librdkafka) means "as is".
        if wrapper.offset < last_inner_offset:
            raise _invalid(
                f"wrapper offset {wrapper.offset} is below its last inner offset {last_inner_offset}"
            )
        offset = wrapper.offset - last_inner_offset + inner.offset
    timestamp = inner.timestamp
    if wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME:
        timestamp = wrapper.timestamp
    return Record(offset, timestamp, inner.key, inner.value)


# --- writing --------------------------------------------------------------------------


def encode_message(
    offset: int,
    magic: int,
    key: bytes | None,
    value: bytes | None,
    *,
    timestamp: int = NO_TIMESTAMP,
    attributes: int = 0,
) -> bytes:
    """One legacy entry (offset, size, message) in the layout of LEGACY-1, with its CRC-32
    (LEGACY-3)."""
    if magic not in (0, 1):
        raise ValueError(f"legacy magic must be 0 or 1, not {magic}")
    if magic == 1 and timestamp < 0 and timestamp != NO_TIMESTAMP:
        raise ValueError(f"invalid timestamp {timestamp}")
    body = bytearray(struct.pack(">bb", magic, attributes))
    if magic == 1:
        body += TIMESTAMP.pack(timestamp)
    for blob in (key, value):
        body += LENGTH.pack(-1) if blob is None else LENGTH.pack(len(blob)) + blob
    message = struct.pack(">I", crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def build_legacy_message_set(
    records: Sequence[SimpleRecord],
    *,
    magic: int,
    base_offset: int = 0,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
) -> bytes:
    """Encode records as MemoryRecordsBuilder does for magic 0/1.

    Uncompressed: one entry per record at consecutive offsets. Compressed (LEGACY-18): one
    wrapper whose offset is the last inner offset; v1 inner offsets are 0..n-1.
    """
    codec_for_id(int(compression), magic)  # zstd below v2 is refused here too
    ts_bit = (
        TIMESTAMP_TYPE_MASK if magic == 1 and timestamp_type is TimestampType.LOG_APPEND_TIME else 0
    )

    def stamp(record: SimpleRecord) -> int:
        if magic == 0:
            return NO_TIMESTAMP
        return log_append_time if ts_bit and log_append_time is not None else record.timestamp

    if compression is Compression.NONE:
        return b"".join(
            encode_message(
                base_offset + i, magic, r.key, r.value, timestamp=stamp(r), attributes=ts_bit
            )
            for i, r in enumerate(records)
        )
    inner = b"".join(
        encode_message(
            i if magic == 1 else base_offset + i, magic, r.key, r.value, timestamp=stamp(r)
        )
        for i, r in enumerate(records)
    )
    wrapper_ts = max((stamp(r) for r in records), default=NO_TIMESTAMP)
    return encode_message(
        base_offset + len(records) - 1,
        magic,
        None,
        compress(compression, inner, magic=magic),
        timestamp=wrapper_ts,
        attributes=int(compression) | ts_bit,
    )
