"""DefaultRecord.readFrom [DefaultRecord.java]: the records of a v2 batch, laid end to end
after its header or in its inflated stream (spec/formats/record-batch-v2.md, Table 2: REC-1 to REC-11).

The readable decoder (``decode_records``, a chunk at a time ``decode_record_chunk``), its
fast twin (``decode_records_fast``, ``decode_record_chunk_fast``) and, unless pure Python,
the compiled kernels bound in their place at the end. ``batch`` is a RecordBatch (batch.py),
whose header fields the records are relative to; each function reads only those fields.
"""

from __future__ import annotations

from .. import _speedups
from ..errors import Category, CorruptRecordError, KafkaLogError
from .record import INT32_MAX, Header, Record, TimestampType, increment_sequence
from .varint import decode_varint, decode_varlong

_LOG_APPEND_TIME = 0x08  # attributes bit 3 (BATCH-11): every record takes maxTimestamp


def _invalid(message: str) -> CorruptRecordError:
    return CorruptRecordError(Category.INVALID_RECORD, message)


def decode_records(batch, buf: bytes, start: int = 0) -> list[Record]:
    """DefaultRecordBatch.RecordIterator + DefaultRecord.readFrom: the records of ``batch``
    are ``buf[start:]``, laid end to end (REC-1), exactly recordsCount of them (REC-10),
    their offsetDeltas not required to be consecutive (REC-11)."""
    records, pos = decode_record_chunk(batch, buf, start, 0, batch.records_count)
    check_records_end(batch, buf, pos)
    return records


def decode_record_chunk(
    batch, buf: bytes, start: int, done: int, count: int
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


def check_records_end(batch, buf: bytes, pos: int) -> None:
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
def _decode_record(batch, buf: bytes, pos: int, log_append: bool) -> tuple[Record, int]:
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


def decode_records_fast(batch, buf: bytes, start: int = 0) -> list[Record]:
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
    batch, buf: bytes, start: int, done: int, count: int
) -> tuple[list[Record], int]:
    """``decode_record_chunk``, as fast as ``decode_records_fast`` and with the same hand-over
    to the readable decoder (for this chunk only)."""
    try:
        return _decode_well_formed(batch, buf, start, count)
    except (_NotWellFormed, IndexError, KafkaLogError):
        return decode_record_chunk(batch, buf, start, done, count)


def _decode_well_formed(batch, buf: bytes, pos: int, count: int) -> tuple[list[Record], int]:
    zigzag, new_record = _ZIGZAG, tuple.__new__
    size = len(buf)
    base_offset, base_timestamp, base_sequence = (
        batch.base_offset, batch.base_timestamp, batch.base_sequence,
    )  # fmt: skip
    log_append_time = batch.attributes & _LOG_APPEND_TIME
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


# The compiled record decoder (issue 14), unless pure Python: reference_impl/_speedups.
if _speedups.kernels is not None:
    _speedups.kernels.bind_records(Record, Header, decode_records, decode_record_chunk)
    decode_records_fast = _speedups.kernels.decode_records
    decode_record_chunk_fast = _speedups.kernels.decode_record_chunk
