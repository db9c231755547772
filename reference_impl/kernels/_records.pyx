# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled record decoder: ``records/default_record.py``'s ``decode_records`` and
``decode_record_chunk`` (DefaultRecord.readFrom, REC-1 to REC-11) on well-formed records,
the same Record and Header tuples built in C. Anything else (a check that fails, a varint
error, a value past int64) goes back to the readable decoder, whose records or error are
the answer. Serves ``RecordBatch.records()`` and ``record_chunks()``: dump, verify
``--deep``, appends' record checks, the pipeline's batch level.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t, uint8_t

from ._framing cimport (
    BatchBase, Cursor, RecordHead, batch_base, bind_crc32c, klog_alloc_tuple, read_record_head,
    read_span, read_varint, record_fields,
)

CRC_SOURCE = bind_crc32c()

cdef object _Record = None
cdef object _Header = None
cdef object _readable_decode = None
cdef object _readable_chunk = None
cdef tuple _NO_HEADERS = ()


def bind_records(record_type, header_type, readable_decode, readable_chunk):
    """The Record and Header types to build, and ``decode_records`` and
    ``decode_record_chunk``, the readable decoders that take every batch (or chunk) the
    kernel does not decode itself."""
    global _Record, _Header, _readable_decode, _readable_chunk
    _Record, _Header, _readable_decode = record_type, header_type, readable_decode
    _readable_chunk = readable_chunk


cdef inline object _bytes_or_none(Cursor *c):
    """``read_span``'s bytes (REC-6, REC-7), or None (null, or ``c.bad``)."""
    cdef Py_ssize_t at
    cdef int32_t size = read_span(c, &at)
    if c.bad or size < 0:
        return None
    return PyBytes_FromStringAndSize(<const char *>(c.buf + at), size)


cdef object _headers(Cursor *c, Py_ssize_t end):
    """decode_records' _read_headers on well-formed bytes (REC-8, REC-9)."""
    cdef int32_t count = read_varint(c)
    cdef int32_t i, key_size
    if c.bad:
        return None
    if count == 0:
        return _NO_HEADERS
    if count < 0 or count > end - c.pos:
        c.bad = True
        return None
    headers = []
    for i in range(count):
        key_size = read_varint(c)
        if c.bad or key_size < 0 or key_size > end - c.pos:
            c.bad = True
            return None
        key = PyBytes_FromStringAndSize(<const char *>(c.buf + c.pos), key_size)
        c.pos += key_size
        value = _bytes_or_none(c)
        if c.bad:
            return None
        header = klog_alloc_tuple(_Header, 2)
        Py_INCREF(key)
        PyTuple_SET_ITEM(header, 0, key)
        Py_INCREF(value)
        PyTuple_SET_ITEM(header, 1, value)
        headers.append(header)
    return tuple(headers)


def decode_records(batch, buf, Py_ssize_t start=0):
    """``default_record.py: decode_records`` on a batch whose records are well formed."""
    cdef Py_ssize_t pos = start
    records = _decode_chunk(batch, buf, start, batch.records_count, &pos)
    if records is None or pos != len(buf):
        return _readable_decode(batch, buf, start)
    return records


def decode_record_chunk(batch, buf, Py_ssize_t start, int32_t done, int32_t count):
    """``default_record.py: decode_record_chunk``: ``count`` well-formed records from
    ``start`` and where the next one starts; anything else goes to the readable decoder,
    for this chunk only (``RecordBatch.record_chunks``, memory bounded by one chunk)."""
    cdef Py_ssize_t pos = start
    records = _decode_chunk(batch, buf, start, count, &pos)
    if records is None:
        return _readable_chunk(batch, buf, start, done, count)
    return records, pos


cdef object _decode_chunk(batch, buf, Py_ssize_t start, int32_t count, Py_ssize_t *end_pos):
    """``count`` records from ``start``, and in ``end_pos`` where they end; None on anything
    the readable decoder must judge."""
    cdef const uint8_t[::1] view = buf
    cdef Cursor c
    cdef BatchBase b
    cdef RecordHead r
    cdef int64_t offset, timestamp
    cdef int32_t sequence
    cdef int32_t n
    if not batch_base(batch, &b):
        return None
    c.buf = &view[0] if view.shape[0] else NULL
    c.end = view.shape[0]
    c.pos = start
    c.bad = start < 0 or start > c.end
    records = []
    for n in range(count):
        if c.bad:
            break
        if not read_record_head(&c, &r):
            break
        key = _bytes_or_none(&c)
        value = _bytes_or_none(&c)
        headers = _headers(&c, r.end)
        c.end = r.outer_end
        if c.bad or c.pos != r.end:
            c.bad = True
            break
        if not record_fields(&b, r.offset_delta, r.timestamp_delta, &offset, &timestamp,
                             &sequence):
            c.bad = True
            break
        fields = (offset, timestamp, key, value, headers, sequence, r.attributes,
                  r.offset_delta, r.timestamp_delta)
        record = klog_alloc_tuple(_Record, 9)
        for i in range(9):
            item = fields[i]
            Py_INCREF(item)
            PyTuple_SET_ITEM(record, i, item)
        records.append(record)
    if c.bad:
        return None
    end_pos[0] = c.pos
    return records
