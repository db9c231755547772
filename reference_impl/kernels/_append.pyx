# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled append: ``log/log_validator.py``'s ``analyze_and_validate_records`` then
``assign_offsets_as_leader`` of a client's common batch in one pass. Serves ``log/_compiled_append.py``
(``Log.append_as_leader`` of a client's uncompressed CreateTime v2 batch), which takes
the whole append only when the rest is common too; anything else is the readable path's.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t

from ._framing cimport (
    ATTRIBUTES_OFFSET, CONTROL_FLAG, INT32_MAX, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD,
    SAFE_OFFSET, TIMESTAMP_TYPE_FLAG, Cursor, bind_crc32c, crc32c_of, crc_matches, klog_add_overflow,
    klog_be16, klog_be32, klog_be64, klog_beu32, klog_put16, klog_put32, klog_put64,
    RecordHead, read_record_head, read_span, read_varint,
)

CRC_SOURCE = bind_crc32c()


# --- a leader's append (log/log_validator.py: analyze_and_validate_records, then
# assign_offsets_as_leader) ---------------------------------------------------------------

cdef enum:
    MAX_TIMESTAMP_OFFSET = 35
    PRODUCER_ID_OFFSET = 43
    BASE_SEQUENCE_OFFSET = 53
    RECORDS_COUNT_OFFSET = 57
    NO_TIMESTAMP = -1


cdef inline void _skip_headers(Cursor *c, Py_ssize_t end) noexcept nogil:
    """_headers without the objects: the same checks."""
    cdef int32_t count = read_varint(c)
    cdef int32_t i, key_size
    cdef Py_ssize_t at
    if c.bad or count == 0:
        return
    if count < 0 or count > end - c.pos:
        c.bad = True
        return
    for i in range(count):
        key_size = read_varint(c)
        if c.bad or key_size < 0 or key_size > end - c.pos:
            c.bad = True
            return
        c.pos += key_size
        read_span(c, &at)
        if c.bad:
            return


cdef bint _create_time_records(
    Cursor *c, int32_t count, int64_t base_timestamp, int64_t *max_timestamp
) noexcept nogil:
    """``decode_records`` of a CreateTime batch's ``count`` records, kept to what the
    append needs: whether the kernel's ``decode_records`` would take them (every record
    well formed, the bytes ending with the last), and their largest timestamp (-1 at
    least, as ``assign_offsets_as_leader`` takes it)."""
    cdef int32_t n
    cdef int64_t timestamp
    cdef Py_ssize_t at
    cdef RecordHead r
    max_timestamp[0] = NO_TIMESTAMP
    for n in range(count):
        if not read_record_head(c, &r):  # offsetDelta: not required consecutive (REC-11)
            return False
        read_span(c, &at)  # key
        read_span(c, &at)  # value
        _skip_headers(c, r.end)
        c.end = r.outer_end
        if c.bad or c.pos != r.end:
            return False
        if klog_add_overflow(base_timestamp, r.timestamp_delta, &timestamp):
            return False
        if timestamp > max_timestamp[0]:
            max_timestamp[0] = timestamp
    return c.pos == c.end


def leader_append(
    records, int64_t next_offset, int64_t now, bint log_append_time, int64_t leader_epoch,
    int64_t max_message_bytes,
):
    """``analyze_and_validate_records`` then ``assign_offsets_as_leader`` (APPEND-4 to
    APPEND-17) of a client's set that is one whole, uncompressed CreateTime v2 batch, in
    one pass: framing, baseOffset 0, the size against ``max_message_bytes``, the CRC,
    the header's own agreement, every record, the largest timestamp; then the copy
    stamped with its offsets, ``leader_epoch`` and (when it changes) the timestamp type
    and maxTimestamp with a new CRC, as ``set_base_offset``, ``set_partition_leader_epoch``
    and ``set_max_timestamp`` write them.

    Returns ``(validated_records, last_offset, max_timestamp, shallow_offset_of_max_timestamp,
    partition_leader_epoch, last_offset_delta)`` (the last two as the client sent them),
    or None: anything else (another shape, a check that fails, a number past the kernel's
    int64 headroom) is the readable functions' to judge."""
    cdef const uint8_t[::1] view = records
    cdef Py_ssize_t total = view.shape[0]
    cdef const uint8_t *data
    cdef int64_t batch_length, producer_id, base_timestamp, declared_max, max_timestamp
    cdef int64_t last_offset, shallow
    cdef int32_t last_offset_delta, count, base_sequence, client_epoch
    cdef int16_t attributes
    cdef Cursor c
    cdef uint8_t *out
    if total < RECORD_BATCH_OVERHEAD or total > max_message_bytes:
        return None
    if leader_epoch < 0 or leader_epoch > INT32_MAX:
        return None  # APPEND-20's refusal (and a value no int32 holds) are the readable path's
    if next_offset < 0 or next_offset > SAFE_OFFSET:
        return None
    data = &view[0]
    batch_length = klog_be32(data + 8)
    if batch_length + LOG_OVERHEAD != total or data[16] != 2 or klog_be64(data) != 0:
        return None  # not exactly one whole v2 batch at baseOffset 0
    attributes = klog_be16(data + ATTRIBUTES_OFFSET)
    if attributes & (0x07 | TIMESTAMP_TYPE_FLAG | CONTROL_FLAG):
        return None  # compressed, marked LogAppendTime, or a control batch
    last_offset_delta = klog_be32(data + 23)
    count = klog_be32(data + RECORDS_COUNT_OFFSET)
    if count <= 0 or <int64_t>last_offset_delta + 1 != count:
        return None  # _validate_client_batch's offset range and count
    producer_id = klog_be64(data + PRODUCER_ID_OFFSET)
    base_sequence = klog_be32(data + BASE_SEQUENCE_OFFSET)
    if producer_id >= 0 and base_sequence < 0:
        return None
    if not crc_matches(data + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET, klog_beu32(data + 17)):
        return None
    base_timestamp = klog_be64(data + 27)
    c.buf = data
    c.pos = RECORD_BATCH_OVERHEAD
    c.end = total
    c.bad = False
    if not _create_time_records(&c, count, base_timestamp, &max_timestamp):
        return None
    client_epoch = klog_be32(data + 12)
    declared_max = klog_be64(data + MAX_TIMESTAMP_OFFSET)
    last_offset = next_offset + count - 1
    out_bytes = PyBytes_FromStringAndSize(<const char *>data, total)
    out = <uint8_t *>PyBytes_AS_STRING(out_bytes)
    klog_put64(out, next_offset)  # last_offset - last_offset_delta
    klog_put32(out + 12, <int32_t>leader_epoch)
    if log_append_time:
        max_timestamp = now
    if log_append_time or declared_max != max_timestamp:
        if log_append_time:
            klog_put16(out + ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_FLAG)
        klog_put64(out + MAX_TIMESTAMP_OFFSET, max_timestamp)
        klog_put32(out + 17, <int32_t>crc32c_of(out + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET))
    # Kafka's uncompressed path names the max-timestamp offset only when a record has a
    # timestamp (LogAppendTime always does)
    shallow = last_offset if max_timestamp > NO_TIMESTAMP else -1
    return out_bytes, last_offset, max_timestamp, shallow, client_epoch, last_offset_delta
