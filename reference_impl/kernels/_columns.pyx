# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled record level of the pipeline: v2 records straight into Arrow column
buffers (``RecordColumns``: ``pipeline/reader.py``'s ``_record_rows`` and ``ChunkBuilder``,
through ``pipeline/_columnar.py``), and ``read_range``'s walk of a range's clean batches
into them (``extract_clean_batches``, through ``pipeline/_compiled_walk.py``). Serves
``klogspec extract`` and the ``kafka-segments`` data source at level ``record``.
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t

from ._framing cimport (
    ATTRIBUTES_OFFSET, CONTROL_FLAG, INT32_MAX, RECORD_BATCH_OVERHEAD, SAFE_OFFSET,
    STOP_FULL, STOP_READABLE, STOP_REFILL, TIMESTAMP_TYPE_FLAG, TRANSACTIONAL_FLAG, BatchBase,
    Cursor, RecordHead, batch_base, bind_crc32c, crc_matches, klog_be16, klog_be32, klog_be64,
    klog_beu32, put_bytes, read_record_head, read_span, read_varint, record_fields,
    whole_v2_entry,
)

CRC_SOURCE = bind_crc32c()
READABLE = STOP_READABLE  # the entry there needs the readable code (or the data ends there)
REFILL = STOP_REFILL  # the entry there is not wholly inside the window: read one from there
FULL = STOP_FULL  # extract_clean_batches: the chunk is full (the reader flushes it, goes on)

# --- v2 records into Arrow column buffers (pipeline/reader.py: _record_rows) --------------

cdef inline void _put_i64(bytearray buf, int64_t value) except *:
    put_bytes(buf, &value, 8)  # Arrow buffers are little-endian, as this machine


cdef inline void _put_i32(bytearray buf, int32_t value) except *:
    put_bytes(buf, &value, 4)


cdef class _Binary:
    """An Arrow binary (or utf8) column being built: validity bytes, int32 offsets, data."""

    cdef public bytearray valid, offsets, data
    cdef public Py_ssize_t nulls

    def __init__(self):
        self.valid, self.offsets, self.data, self.nulls = bytearray(), bytearray(), bytearray(), 0
        _put_i32(self.offsets, 0)

    cdef void add(self, const uint8_t *value, Py_ssize_t size, bint present) except *:
        cdef uint8_t flag = present
        put_bytes(self.valid, &flag, 1)
        if present:
            put_bytes(self.data, value, size)
        else:
            self.nulls += 1
        _put_i32(self.offsets, <int32_t>len(self.data))

    cdef void add_object(self, value) except *:
        cdef const uint8_t[::1] view
        if value is None:
            self.add(NULL, 0, False)
        elif isinstance(value, str):
            encoded = (<str>value).encode("utf-8")
            self.add(<const uint8_t *>PyBytes_AS_STRING(encoded), len(encoded), True)
        else:
            view = value
            self.add(&view[0] if len(value) else NULL, len(value), True)

    cdef void truncate(self, Py_ssize_t rows) except *:
        cdef const int32_t *offsets = <const int32_t *>PyByteArray_AS_STRING(self.offsets)
        cdef Py_ssize_t i
        for i in range(rows, len(self.valid)):
            if not self.valid[i]:
                self.nulls -= 1
        PyByteArray_Resize(self.data, offsets[rows])
        PyByteArray_Resize(self.offsets, 4 * (rows + 1))
        PyByteArray_Resize(self.valid, rows)

    def array(self, pa, type_):
        """The column as a pyarrow array, its buffers copied into Arrow's memory."""
        rows = len(self.valid)
        validity = None if not self.nulls else arrow_buffer(pa, _bitmap(self.valid))
        return pa.Array.from_buffers(
            type_, rows,
            [validity, arrow_buffer(pa, self.offsets), arrow_buffer(pa, self.data)],
            null_count=self.nulls,
        )


def arrow_buffer(pa, data):
    """``data`` copied into a buffer of Arrow's allocator, as ``pa.array`` copies values:
    the builder's own buffers are freed with it, not kept alive by the chunk."""
    out = pa.allocate_buffer(len(data))
    if len(data):
        memoryview(out).cast("B")[:] = data
    return out


cdef bytes _bitmap(bytearray flags):
    """Arrow's validity bitmap (LSB first) of one byte per row."""
    cdef Py_ssize_t rows = len(flags), i
    out = bytearray((rows + 7) // 8)
    cdef uint8_t *bits = <uint8_t *>PyByteArray_AS_STRING(out)
    cdef const uint8_t *src = <const uint8_t *>PyByteArray_AS_STRING(flags)
    for i in range(rows):
        if src[i]:
            bits[i >> 3] |= 1 << (i & 7)
    return bytes(out)


cdef class RecordColumns:
    """The record-level columns of the kafka-segments data source (pipeline/schema.py:
    offset, timestamp, key, value, headers, sequence, control_type) for the records of
    many batches, in C buffers that become Arrow arrays without a Python object per record.
    ``batch_rows`` gives each record's batch (its index among the chunk's batches), so the
    per-batch columns are one ``take``."""

    cdef public bytearray offset, timestamp, sequence, batch_row, control, header_offsets
    cdef public _Binary key, value, header_key, header_value
    cdef public Py_ssize_t rows

    def __init__(self):
        self.offset, self.timestamp, self.sequence = bytearray(), bytearray(), bytearray()
        self.batch_row, self.control, self.header_offsets = bytearray(), bytearray(), bytearray()
        self.key, self.value = _Binary(), _Binary()
        self.header_key, self.header_value = _Binary(), _Binary()
        self.rows = 0
        _put_i32(self.header_offsets, 0)

    cdef void _record(self, int64_t offset, int64_t timestamp, int32_t sequence,
                      int32_t batch_row, int8_t control) except *:
        _put_i64(self.offset, offset)
        _put_i64(self.timestamp, timestamp)
        _put_i32(self.sequence, sequence)
        _put_i32(self.batch_row, batch_row)
        put_bytes(self.control, &control, 1)
        _put_i32(self.header_offsets, <int32_t>len(self.header_key.valid))
        self.rows += 1

    def add_row(self, row, int32_t batch_row, int8_t control):
        """One record given as the readable reader's row tuple (offset, timestamp, key,
        value, headers as (str, bytes) pairs, sequence, control type), or None for a
        batch-level row (all record columns null but the control type's index)."""
        if row is None:
            self.key.add(NULL, 0, False)
            self.value.add(NULL, 0, False)
            self._record(0, 0, -1, batch_row, -2)  # -2: the whole row is null
            return
        offset, timestamp, key, value, headers, sequence, _ = row
        self.key.add_object(key)
        self.value.add_object(value)
        for header_key, header_value in headers:
            self.header_key.add_object(header_key)
            self.header_value.add_object(header_value)
        self._record(offset, timestamp, sequence, batch_row, control)

    def decode(self, batch, buf, Py_ssize_t start, int32_t batch_row):
        """The records of a v2 data batch, as ``decode_records`` reads them, added to the
        columns; returns the bytes of their keys and values, or -1 (nothing added) when
        they are not all well formed or a header key is not ASCII: the readable reader
        then takes the batch."""
        cdef const uint8_t[::1] view = buf
        cdef BatchBase b
        cdef int32_t count
        try:
            count = batch.records_count
        except OverflowError:
            return -1
        if not batch_base(batch, &b):
            return -1
        return self._decode(&b, count, &view[0] if view.shape[0] else NULL, view.shape[0],
                            start, batch_row)

    cdef Py_ssize_t _decode(self, const BatchBase *b, int32_t count, const uint8_t *buf,
                            Py_ssize_t size_, Py_ssize_t start, int32_t batch_row) except -2:
        """``decode`` of the records in ``buf[start:size_]`` of a batch with header
        fields ``b`` and ``count`` records."""
        cdef Cursor c
        cdef RecordHead r
        cdef int64_t offset, timestamp
        cdef int32_t sequence, n, size, headers, h
        cdef int32_t key_size, value_size
        cdef Py_ssize_t at, key_at, value_at, payload = 0, rows0 = self.rows, i
        cdef Py_ssize_t headers0 = len(self.header_key.valid)
        c.buf = buf
        c.end = size_
        c.pos = start
        c.bad = count <= 0 or start < 0 or start > c.end
        for n in range(count):
            if c.bad:
                break
            if not read_record_head(&c, &r):
                break
            key_size = read_span(&c, &key_at)
            value_size = read_span(&c, &value_at)
            if c.bad:
                c.end = r.outer_end
                break
            self.key.add(c.buf + key_at, key_size, key_size >= 0)
            self.value.add(c.buf + value_at, value_size, value_size >= 0)
            payload += (key_size if key_size > 0 else 0) + (value_size if value_size > 0 else 0)
            headers = read_varint(&c)
            if c.bad or headers < 0 or headers > r.end - c.pos:
                c.bad = True
            for h in range(headers if not c.bad else 0):
                size = read_varint(&c)
                if c.bad or size < 0 or size > r.end - c.pos:
                    c.bad = True
                    break
                for i in range(size):
                    if c.buf[c.pos + i] >= 0x80:  # not ASCII: the readable reader decodes it
                        c.bad = True
                        break
                if c.bad:
                    break
                self.header_key.add(c.buf + c.pos, size, True)
                c.pos += size
                size = read_span(&c, &at)
                if c.bad:
                    break
                self.header_value.add(c.buf + at, size, size >= 0)
            c.end = r.outer_end
            if c.bad or c.pos != r.end:
                c.bad = True
                break
            if not record_fields(b, r.offset_delta, r.timestamp_delta, &offset, &timestamp,
                                  &sequence):
                c.bad = True
                break
            self._record(offset, timestamp, sequence, batch_row, -1)
        if c.bad or c.pos != c.end:
            self._truncate(rows0, headers0)
            return -1
        return payload

    cdef void _truncate(self, Py_ssize_t rows, Py_ssize_t headers) except *:
        PyByteArray_Resize(self.offset, 8 * rows)
        PyByteArray_Resize(self.timestamp, 8 * rows)
        PyByteArray_Resize(self.sequence, 4 * rows)
        PyByteArray_Resize(self.batch_row, 4 * rows)
        PyByteArray_Resize(self.control, rows)
        PyByteArray_Resize(self.header_offsets, 4 * (rows + 1))
        self.key.truncate(rows)
        self.value.truncate(rows)
        self.header_key.truncate(headers)
        self.header_value.truncate(headers)
        self.rows = rows


# --- the record-level reader's walk (pipeline/reader.py: read_range) ----------------------



def extract_clean_batches(
    const uint8_t[::1] window, Py_ssize_t at, Py_ssize_t position, Py_ssize_t end,
    Py_ssize_t range_end, segment_base, RecordColumns columns, list batch_rows,
    tuple padding, tuple labels, Py_ssize_t rows, Py_ssize_t max_rows,
    Py_ssize_t payload, Py_ssize_t max_bytes,
):
    """``read_range``'s record level for each v2 uncompressed data batch with records
    from ``position`` (``window[at]``) on that the readable walk would take without a
    problem: framing (FRAME-3, FRAME-4), size and CRC-32C (BATCH-2, BATCH-4), the offset
    range from ``segment_base`` (FRAME-12, None: unchecked), the codec, and records that
    ``RecordColumns.decode`` takes. Each one's records go into ``columns`` and its
    per-batch values (``_columnar.record_rows``' tuple, ``labels`` = (CreateTime's,
    LogAppendTime's, codec none's label), then ``padding``) onto ``batch_rows``. It
    stops before any other entry (legacy, control, compressed, empty, any problem), at
    ``range_end`` or the end of the window or data, and after the batch that fills the
    chunk (``rows`` records or ``payload`` bytes of keys and values reach their max).
    Returns (position, READABLE, REFILL or FULL, rows, payload)."""
    cdef bint has_base = segment_base is not None
    cdef int64_t base_of_segment = segment_base if has_base else 0
    cdef Py_ssize_t window_size = window.shape[0], total, added
    cdef const uint8_t *entry
    cdef int32_t size, last_delta, count
    cdef int16_t attributes
    cdef int64_t base, last
    cdef BatchBase b
    cdef int reason = STOP_READABLE
    if has_base and not (0 <= base_of_segment <= SAFE_OFFSET):
        return position, STOP_READABLE, rows, payload
    while True:
        if position >= range_end:
            break  # the range ends here: the readable walk says so
        total = whole_v2_entry(&window[0], window_size, at, position, end, &reason)
        if total == 0:
            break  # the end, a framing problem, a legacy entry, or REFILL
        entry = &window[at]
        attributes = klog_be16(entry + ATTRIBUTES_OFFSET)
        if attributes & (0x07 | CONTROL_FLAG):
            break  # compressed or control: the readable walk (and _columnar) take it
        base = klog_be64(entry)
        last_delta = klog_be32(entry + 23)
        count = klog_be32(entry + 57)
        if base < 0 or base > SAFE_OFFSET or count <= 0:
            break
        last = base + last_delta
        if has_base and not (0 <= last - base_of_segment <= INT32_MAX):
            break  # FRAME-12
        if not crc_matches(entry + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET,
                            klog_beu32(entry + 17)):
            break  # BATCH-4
        b.base_offset = base
        b.base_timestamp = klog_be64(entry + 27)
        b.max_timestamp = klog_be64(entry + 35)
        b.base_sequence = klog_be32(entry + 53)
        b.log_append = attributes & TIMESTAMP_TYPE_FLAG
        added = columns._decode(&b, count, entry, total, RECORD_BATCH_OVERHEAD,
                                <int32_t>len(batch_rows))
        if added < 0:
            break  # a record the readable decoder must judge (or a non-ASCII header key)
        batch_rows.append((
            position, base, last, labels[1 if b.log_append else 0],
            klog_be64(entry + 43), klog_be16(entry + 51), bool(attributes & TRANSACTIONAL_FLAG), False,
            labels[2], 2, klog_be32(entry + 12),
        ) + padding)
        rows += count
        payload += added
        position += total
        at += total
        if rows >= max_rows or payload >= max_bytes:
            reason = STOP_FULL
            break
    return position, reason, rows, payload
