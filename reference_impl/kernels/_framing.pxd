# cython: language_level=3
"""What every kernel shares (cimported by each ``.pyx`` of this package): big-endian reads
and writes, the constants of the formats (records/batch.py, records/stream.py), the
framing of a whole v2 entry (stream.py: FRAME-2 to FRAME-4), the CRC-32C (BATCH-4), the
zigzag varints (varint.py) and a record's fields from its batch's header (default_record.py).

Everything here is inline: each kernel module compiles its own copy, so no call crosses
a module. The CRC-32C is the ``crc32c`` package's own C function, found through the
module state the package exports (``get_state``: the function it chose, hardware or
software) and checked against ``crc32c.crc32c`` on test vectors when a module binds it
(``bind_crc32c``, at its import); if that ever fails (the package changed its
internals), the kernels call ``crc32c.crc32c`` per batch instead (``CRC_SOURCE`` of each
module says which).
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.object cimport PyObject
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from "<dlfcn.h>" nogil:
    void *dlopen(const char *filename, int flags)
    void *dlsym(void *handle, const char *symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

cdef extern from *:
    """
    #define klog_add_overflow(a, b, r) __builtin_add_overflow(a, b, r)
    #define KLOG_SAFE_OFFSET (((int64_t)1) << 62)
    #include <stdint.h>
    #include <string.h>
    static inline int64_t klog_be64(const unsigned char *p) {
        uint64_t v; memcpy(&v, p, 8); return (int64_t)__builtin_bswap64(v);
    }
    static inline int32_t klog_be32(const unsigned char *p) {
        uint32_t v; memcpy(&v, p, 4); return (int32_t)__builtin_bswap32(v);
    }
    static inline uint32_t klog_beu32(const unsigned char *p) {
        uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v);
    }
    static inline int16_t klog_be16(const unsigned char *p) {
        uint16_t v; memcpy(&v, p, 2); return (int16_t)__builtin_bswap16(v);
    }
    static inline void klog_put64(unsigned char *p, int64_t x) {
        uint64_t v = __builtin_bswap64((uint64_t)x); memcpy(p, &v, 8);
    }
    static inline void klog_put32(unsigned char *p, int32_t x) {
        uint32_t v = __builtin_bswap32((uint32_t)x); memcpy(p, &v, 4);
    }
    static inline void klog_put16(unsigned char *p, int16_t x) {
        uint16_t v = __builtin_bswap16((uint16_t)x); memcpy(p, &v, 2);
    }
    static inline PyObject *klog_alloc_tuple(PyObject *type, Py_ssize_t n) {
        PyTypeObject *t = (PyTypeObject *)type;
        return t->tp_alloc(t, n);
    }
    static inline Py_ssize_t klog_bytearray_room(PyObject *o) {
        return ((PyByteArrayObject *)o)->ob_alloc;
    }
    typedef uint32_t (*klog_crc_fn)(uint32_t, const unsigned char *, unsigned long);
    typedef void *(*klog_get_state_fn)(PyObject *);
    /* this module's CRC-32C function; NULL: call crc32c.crc32c */
    static klog_crc_fn klog_crc = NULL;
    """
    int64_t klog_be64(const uint8_t *p) nogil
    int32_t klog_be32(const uint8_t *p) nogil
    uint32_t klog_beu32(const uint8_t *p) nogil
    int16_t klog_be16(const uint8_t *p) nogil
    void klog_put64(uint8_t *p, int64_t x) nogil
    void klog_put32(uint8_t *p, int32_t x) nogil
    void klog_put16(uint8_t *p, int16_t x) nogil
    object klog_alloc_tuple(object type, Py_ssize_t n)
    Py_ssize_t klog_bytearray_room(object buf)
    bint klog_add_overflow(int64_t a, int64_t b, int64_t *r) nogil
    ctypedef uint32_t (*klog_crc_fn)(uint32_t, const uint8_t *, unsigned long) nogil
    ctypedef void *(*klog_get_state_fn)(PyObject *)
    klog_crc_fn klog_crc
    # offsets up to this leave int64 headroom for every sum the kernels make
    const int64_t SAFE_OFFSET "KLOG_SAFE_OFFSET"

# --- constants of the formats (records/batch.py, records/stream.py) --------------------

cdef enum:
    LOG_OVERHEAD = 12
    HEADER_SIZE_UP_TO_MAGIC = 17
    MIN_ENTRY_SIZE = 14
    RECORD_BATCH_OVERHEAD = 61
    ATTRIBUTES_OFFSET = 21
    LAST_CODEC_ID = 4
    TIMESTAMP_TYPE_FLAG = 0x08
    TRANSACTIONAL_FLAG = 0x10
    CONTROL_FLAG = 0x20
    DELETE_HORIZON_FLAG = 0x40
    INT32_MAX = 2147483647

# why a kernel stopped (the readable code takes over at the returned position); each
# module that returns one exports it as READABLE, REFILL or FULL
cdef enum:
    STOP_READABLE = 0  # the entry there needs the readable code (or the data ends there)
    STOP_REFILL = 1  # the entry there is not wholly inside the window: read one from there
    STOP_FULL = 2  # the reader's chunk is full (the reader flushes it and goes on)

# --- CRC-32C (BATCH-3, BATCH-4) ------------------------------------------------------------


cdef inline str bind_crc32c():
    """Find the crc32c package's C function and check it; else leave the Python calls.
    Returns what is in use (the module's ``CRC_SOURCE``)."""
    import crc32c
    from crc32c import _crc32c as ext

    cdef void *handle = dlopen(ext.__file__.encode(), RTLD_NOW | RTLD_NOLOAD)
    cdef klog_get_state_fn get_state = NULL
    cdef void *state = NULL
    cdef klog_crc_fn fn = NULL
    if handle != NULL:
        get_state = <klog_get_state_fn>dlsym(handle, b"get_state")
    if get_state != NULL:
        state = get_state(<PyObject *>ext)
    if state != NULL:
        fn = (<klog_crc_fn *>state)[0]
    if fn != NULL:
        for data in (b"", b"Some String", bytes(range(256)) * 9, b"\xff" * 1031):
            if (fn(0xFFFFFFFFU, <const uint8_t *>PyBytes_AS_STRING(data), len(data))
                    ^ 0xFFFFFFFFU) != crc32c.crc32c(data):
                return "crc32c package, one Python call per batch"
        global klog_crc
        klog_crc = fn
        if crc32c.hardware_based:
            return "crc32c package, C function (hardware)"
        return "crc32c package, C function (software)"
    return "crc32c package, one Python call per batch"


cdef inline uint32_t crc32c_of(const uint8_t *data, Py_ssize_t size) except? 0xFFFFFFFF:
    """The CRC-32C of ``size`` bytes at ``data``."""
    if klog_crc != NULL:
        return klog_crc(0xFFFFFFFFU, data, size) ^ 0xFFFFFFFFU
    import crc32c
    return crc32c.crc32c(PyBytes_FromStringAndSize(<const char *>data, size))


cdef inline bint crc_matches(const uint8_t *data, Py_ssize_t size, uint32_t stored) except -1:
    """BATCH-4: the CRC-32C of ``size`` bytes at ``data`` equals ``stored``."""
    return crc32c_of(data, size) == stored

# --- framing (records/stream.py) -------------------------------------------------------------


cdef inline Py_ssize_t whole_v2_entry(
    const uint8_t *window, Py_ssize_t window_size, Py_ssize_t at, Py_ssize_t position,
    Py_ssize_t end, int *reason,
) noexcept nogil:
    """The size of the whole v2 entry at ``position`` (``window[at]``) of data ending at
    ``end``, or 0 where a kernel must stop for the readable code: the data's end
    (FRAME-2), a framing error or a partial entry (FRAME-3, FRAME-4), a legacy entry or
    one below the v2 header; and when the entry is not wholly in the window, with
    ``reason`` set to STOP_REFILL."""
    cdef int32_t size
    cdef Py_ssize_t total
    if position >= end - HEADER_SIZE_UP_TO_MAGIC:
        return 0
    if at + HEADER_SIZE_UP_TO_MAGIC > window_size:
        reason[0] = STOP_REFILL
        return 0
    size = klog_be32(window + at + 8)
    if size < MIN_ENTRY_SIZE or position > end - LOG_OVERHEAD - size:
        return 0
    total = LOG_OVERHEAD + size
    if at + total > window_size:
        reason[0] = STOP_REFILL
        return 0
    if window[at + 16] != 2 or total < RECORD_BATCH_OVERHEAD:
        return 0
    return total

# --- the records' varints (records/varint.py) and fields (records/default_record.py) -----


cdef struct Cursor:
    const uint8_t *buf
    Py_ssize_t pos
    Py_ssize_t end
    bint bad  # set on anything the readable decoder must judge


cdef inline int32_t read_varint(Cursor *c) noexcept nogil:
    """decode_varint: zigzag, at most 5 bytes, the value modulo 2**32 (VARINT-1, VARINT-3)."""
    cdef uint64_t raw = 0
    cdef uint8_t byte
    cdef int i
    cdef uint32_t low
    for i in range(5):
        if c.pos >= c.end:
            c.bad = True
            return 0
        byte = c.buf[c.pos]
        c.pos += 1
        raw |= (<uint64_t>(byte & 0x7F)) << (7 * i)
        if not byte & 0x80:
            low = <uint32_t>raw
            return <int32_t>((low >> 1) ^ (0 - (low & 1)))
    c.bad = True
    return 0


cdef inline int64_t read_varlong(Cursor *c) noexcept nogil:
    """decode_varlong: zigzag, at most 10 bytes, modulo 2**64 (VARINT-2)."""
    cdef uint64_t raw = 0
    cdef uint8_t byte
    cdef int i
    for i in range(10):
        if c.pos >= c.end:
            c.bad = True
            return 0
        byte = c.buf[c.pos]
        c.pos += 1
        raw |= (<uint64_t>(byte & 0x7F)) << (7 * i)
        if not byte & 0x80:
            return <int64_t>((raw >> 1) ^ (0 - (raw & 1)))
    c.bad = True
    return 0


cdef struct RecordHead:
    Py_ssize_t end  # where the record ends: the cursor's end while its fields are read
    Py_ssize_t outer_end  # the cursor's end before: where the records end
    uint8_t attributes
    int64_t timestamp_delta
    int32_t offset_delta


cdef inline bint read_record_head(Cursor *c, RecordHead *r) noexcept nogil:
    """A record's length, attributes and deltas (REC-2: a length within the bytes left;
    REC-4; REC-5), the cursor then ending at the record's end, so that no field runs past
    it (REC-3, REC-7) until the caller sets ``c.end = r.outer_end``. False, with
    ``c.bad``, on a length the readable decoder must judge (0 too: no attributes byte)."""
    cdef int32_t length = read_varint(c)
    if c.bad or length <= 0 or length > c.end - c.pos:
        c.bad = True
        return False
    r.end = c.pos + length
    r.attributes = c.buf[c.pos]
    c.pos += 1
    r.outer_end, c.end = c.end, r.end
    r.timestamp_delta = read_varlong(c)
    r.offset_delta = read_varint(c)
    return True


cdef inline int32_t read_span(Cursor *c, Py_ssize_t *at) noexcept nogil:
    """A key, value or header value: a varint length then that many bytes (REC-6: a
    negative length is null, no bytes), none past the cursor's end (REC-7). Returns the
    length, and in ``at`` where the bytes start."""
    cdef int32_t size = read_varint(c)
    at[0] = c.pos
    if not c.bad and size > 0:
        if size > c.end - c.pos:
            c.bad = True
        else:
            c.pos += size
    return size


cdef struct BatchBase:
    int64_t base_offset
    int64_t base_timestamp
    int64_t max_timestamp
    int32_t base_sequence
    bint log_append


cdef inline int batch_base(batch, BatchBase *b) except -1:
    """The header fields a record's own fields are relative to, from a RecordBatch; 0
    when one does not fit (hostile bytes): the readable decoder then decides."""
    try:
        b.base_offset = batch.base_offset
        b.base_timestamp = batch.base_timestamp
        b.max_timestamp = batch.max_timestamp
        b.base_sequence = batch.base_sequence
        b.log_append = batch.attributes & TIMESTAMP_TYPE_FLAG
    except OverflowError:
        return 0
    return 1


cdef inline bint record_fields(
    const BatchBase *b, int32_t offset_delta, int64_t timestamp_delta,
    int64_t *offset, int64_t *timestamp, int32_t *sequence,
) noexcept nogil:
    """A record's offset, timestamp and sequence from its deltas, as ``decode_records``
    makes them (REC-5, BATCH-6, BATCH-11); False when a sum overflows int64."""
    if klog_add_overflow(b.base_offset, <int64_t>offset_delta, offset):
        return False
    if b.log_append:
        timestamp[0] = b.max_timestamp
    elif klog_add_overflow(b.base_timestamp, timestamp_delta, timestamp):
        return False
    sequence[0] = -1
    if b.base_sequence >= 0:  # increment_sequence's wrap-around past Int.MAX
        # in 64 bits: INT32_MAX - a negative (hostile) delta must not overflow
        if b.base_sequence > INT32_MAX - <int64_t>offset_delta:
            sequence[0] = offset_delta - (INT32_MAX - b.base_sequence) - 1
        else:
            sequence[0] = b.base_sequence + offset_delta
    return True

# --- growing buffers ---------------------------------------------------------------------


cdef inline void put_bytes(bytearray buf, const void *data, Py_ssize_t size) except *:
    """Append ``size`` bytes to ``buf``."""
    cdef Py_ssize_t used = len(buf)
    if used + size + 1 > klog_bytearray_room(buf):
        # room for half as much again: CPython grows a bytearray by an eighth, and a
        # chunk's values reach megabytes, where each growth is a realloc copying them all
        PyByteArray_Resize(buf, used + size + ((used + size) >> 1))
    PyByteArray_Resize(buf, used + size)  # within its room: only the size changes
    memcpy(PyByteArray_AS_STRING(buf) + used, data, size)
