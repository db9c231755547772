"""DefaultRecord.readFrom [DefaultRecord.java]: the records of a v2 batch, laid end to end
after its header or in its inflated stream (spec/formats/record-batch-v2.md, Table 2: REC-1 to REC-11).

The decoder (``decode_records``, a chunk at a time ``decode_record_chunk``) follows the
record grammar below, one reader per production; ``records_of`` and ``record_chunk_of``, at
the end, are what RecordBatch calls: this decoder, or unless pure Python the compiled one.
``batch`` is a RecordBatch (batch.py), whose header fields the records are relative to;
each function reads only those fields.

The records of a v2 batch (record-batch-v2.md Table 2), each integer a zigzag varint
(varint.py) unless another type is named, the rules each production checks beside it::

    records         = record{recordsCount}       ; REC-1 end to end; REC-10 exactly that many
    record          = length body                ; REC-2 0 <= length <= the bytes left
    body            = attributes timestampDelta offsetDelta key value headersCount header*
                                                 ; REC-3 the fields end exactly at length
    attributes      = int8                       ; REC-4 read, never used
    timestampDelta  = varlong                    ; REC-5 + baseTimestamp (CreateTime;
                                                 ;   BATCH-11 LogAppendTime: maxTimestamp)
    offsetDelta     = varint                     ; REC-5 + baseOffset; REC-11 gaps allowed
    key             = keyLength *OCTET           ; REC-6 a negative length is null;
    value           = valueLength *OCTET         ;   REC-7 no field runs past the body
    headersCount    = varint                     ; REC-8 0 <= count <= the body bytes left
    header          = headerKeyLength *OCTET headerValueLength *OCTET
                                                 ; REC-9 a header key is never null
"""

from __future__ import annotations

from .. import kernels
from ..errors import Category, CorruptRecordError
from .record import Header, Record, TimestampType, increment_sequence
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


# --- the decoder RecordBatch runs --------------------------------------------------------
# The readable decoder above is the reference, and it runs whenever the kernels are off
# (KLOGSPEC_PURE_PYTHON=1, or not built). Otherwise the compiled decoder runs (_records.pyx
# of reference_impl/kernels): it decodes the well-formed records and hands every other
# batch (or chunk) back to the readable decoder, so every error is the readable one's.
records_of, record_chunk_of = decode_records, decode_record_chunk
if kernels.records is not None:
    kernels.records.bind_records(Record, Header, decode_records, decode_record_chunk)
    records_of = kernels.records.decode_records
    record_chunk_of = kernels.records.decode_record_chunk
