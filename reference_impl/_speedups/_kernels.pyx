# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twins of the readable hot loops (issue 14). See __init__.py.

Every kernel here takes the common, well-formed case and stops where the readable code
must judge: it never raises a format error itself. A kernel that stops hands a position
back, and the readable function takes that entry (or batch, or record set) from there,
so errors, messages and findings are always the readable code's. Each kernel names the
readable function it mirrors; tests/test_speedups.py compares the two on valid, damaged
and hostile bytes.

The CRC-32C is the ``crc32c`` package's own C function, found through the module state
the package exports (``get_state``: the function it chose, hardware or software) and
checked against ``crc32c.crc32c`` on test vectors at import; if that ever fails (the
package changed its internals), the kernels call ``crc32c.crc32c`` per batch instead
(``CRC_SOURCE`` says which).
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from "<dlfcn.h>" nogil:
    void *dlopen(const char *filename, int flags)
    void *dlsym(void *handle, const char *symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

cdef extern from *:
    """
    #define klog_add_overflow(a, b, r) __builtin_add_overflow(a, b, r)
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

# --- constants of the formats (records/batch.py, records/stream.py) --------------------

cdef enum:
    LOG_OVERHEAD = 12
    HEADER_SIZE_UP_TO_MAGIC = 17
    MIN_ENTRY_SIZE = 14
    RECORD_BATCH_OVERHEAD = 61
    ATTRIBUTES_OFFSET = 21
    LAST_CODEC_ID = 4
    TIMESTAMP_TYPE_FLAG = 0x08
    CONTROL_FLAG = 0x20
    DELETE_HORIZON_FLAG = 0x40
    INT32_MAX = 2147483647

# offsets up to this leave int64 headroom for every sum the kernels make
cdef int64_t SAFE_OFFSET = (<int64_t>1) << 62

# why a kernel stopped (the readable code takes over at the returned position)
cdef enum:
    STOP_READABLE = 0
    STOP_REFILL = 1
    STOP_FULL = 2
READABLE = STOP_READABLE  # the entry there needs the readable code (or the data ends there)
REFILL = STOP_REFILL  # the entry there is not wholly inside the window: read a window from there

# --- CRC-32C ------------------------------------------------------------------------------

cdef klog_crc_fn _crc_fn = NULL
cdef object _crc_py = None
CRC_SOURCE = ""


def _bind_crc32c():
    """Find the crc32c package's C function and check it; else fall back to calls."""
    global _crc_fn, _crc_py, CRC_SOURCE
    import crc32c
    from crc32c import _crc32c as ext

    _crc_py = crc32c.crc32c
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
        vectors = [b"", b"Some String", bytes(range(256)) * 9, b"\xff" * 1031]
        for data in vectors:
            if (fn(0xFFFFFFFFU, <const uint8_t *>PyBytes_AS_STRING(data), len(data))
                    ^ 0xFFFFFFFFU) != _crc_py(data):
                fn = NULL
                break
    if fn != NULL:
        _crc_fn = fn
        CRC_SOURCE = "crc32c package, C function (hardware)" if crc32c.hardware_based else \
            "crc32c package, C function (software)"
    else:
        CRC_SOURCE = "crc32c package, one Python call per batch"


_bind_crc32c()


cdef inline bint _crc_matches(const uint8_t *data, Py_ssize_t size, uint32_t stored) except -1:
    """CRC-32C of ``size`` bytes at ``data`` equals ``stored``."""
    if _crc_fn != NULL:
        return (_crc_fn(0xFFFFFFFFU, data, size) ^ 0xFFFFFFFFU) == stored
    return _crc_py(PyBytes_FromStringAndSize(<const char *>data, size)) == stored


cdef inline uint32_t _crc32c(const uint8_t *data, Py_ssize_t size) except? 0xFFFFFFFF:
    if _crc_fn != NULL:
        return _crc_fn(0xFFFFFFFFU, data, size) ^ 0xFFFFFFFFU
    return _crc_py(PyBytes_FromStringAndSize(<const char *>data, size))


cdef inline Py_ssize_t _whole_v2_entry(
    const uint8_t *window, Py_ssize_t window_size, Py_ssize_t at, Py_ssize_t position,
    Py_ssize_t end, int *reason,
) noexcept nogil:
    """The size of the whole v2 entry at ``position`` (``window[at]``) of data ending at
    ``end``, or 0 where a kernel must stop for the readable code: the data's end
    (FRAME-2), a framing error or a partial entry (FRAME-3, FRAME-4), a legacy entry or
    one below the v2 header; and when the entry is not wholly in the window, with
    ``reason`` set to REFILL."""
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


# --- the batch walk for verify (verify_segment._SegmentScan._batch) -----------------------


def verify_clean_batches(
    const uint8_t[::1] window, Py_ssize_t at, Py_ssize_t position, Py_ssize_t end,
    scan, int64_t offset_index_stop, int64_t time_index_stop,
):
    """``_SegmentScan._batch`` of each v2 batch from ``position`` (``window[at]``) on
    that gives no finding: framing (FRAME-3, FRAME-4, FRAME-6), size and CRC-32C
    (BATCH-2, BATCH-4), the offset range (FRAME-12), the codec (BATCH-10), offset order
    (FRAME-13, FRAME-14) and the gap counts, exactly as the readable method updates
    ``scan``. It stops, before touching ``scan`` for that entry, at anything else: a
    legacy or control batch, any problem, a batch an index check must see (at or past
    ``offset_index_stop``'s position or ``time_index_stop``'s offset), or the end of
    the window or of the data. Returns (position, READABLE or REFILL)."""
    files = scan.files
    cdef bint has_base = files.base_offset is not None
    cdef int64_t segment_base = files.base_offset if has_base else 0
    cdef bint has_limit = scan.max_message_bytes is not None
    cdef int64_t max_message_bytes = scan.max_message_bytes if has_limit else 0
    cdef bint has_prev = scan.last_offset is not None
    cdef int64_t prev_last = scan.last_offset if has_prev else 0
    cdef bint has_max_last = scan.max_last is not None
    cdef int64_t max_last = scan.max_last if has_max_last else 0
    cdef int64_t max_timestamp = scan.max_timestamp
    cdef int64_t missing_inside = scan.missing_inside
    cdef int64_t missing_between = scan.missing_between
    cdef bint seen_first = scan.seen_first
    cdef bint after_invalid = scan.after_invalid
    cdef bint delete_horizon = scan.delete_horizon
    cdef bint has_gap = scan.first_gap is not None
    cdef int64_t gap_position = 0, gap_offset = 0, first_offset = 0
    cdef Py_ssize_t batches = 0, window_size = window.shape[0], total
    cdef int32_t size, last_delta, count
    cdef int16_t attributes
    cdef int64_t base, last, timestamp, span
    cdef const uint8_t *entry
    cdef int reason = READABLE
    if has_base and not (0 <= segment_base <= SAFE_OFFSET):
        return position, READABLE
    while True:
        total = _whole_v2_entry(&window[0], window_size, at, position, end, &reason)
        if total == 0:
            break  # the end, a framing problem, a legacy entry, or REFILL
        entry = &window[at]
        if has_limit and total > max_message_bytes:
            break  # FRAME-11
        if position >= offset_index_stop:
            break
        attributes = klog_be16(entry + ATTRIBUTES_OFFSET)
        if (attributes & 0x07) > LAST_CODEC_ID or attributes & CONTROL_FLAG:
            break
        base = klog_be64(entry)
        last_delta = klog_be32(entry + 23)
        if base < 0 or base > SAFE_OFFSET or last_delta < 0:
            break
        last = base + last_delta
        if has_base and not (0 <= last - segment_base <= INT32_MAX):
            break  # FRAME-12
        if has_prev and base <= prev_last:
            break  # FRAME-13
        if has_base and not seen_first and base < segment_base:
            break  # FRAME-14
        if last >= time_index_stop:
            break
        if not _crc_matches(entry + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET,
                            klog_beu32(entry + 17)):
            break  # BATCH-4
        # the batch is clean: _batch's bookkeeping
        batches += 1
        if has_prev and base > prev_last + 1 and not after_invalid:
            missing_between += base - prev_last - 1
            if not has_gap:
                has_gap, gap_position, gap_offset = True, position, prev_last + 1
        count = klog_be32(entry + 57)
        span = <int64_t>last_delta + 1
        if 0 <= count < span:
            missing_inside += span - count
        if not seen_first:
            first_offset, seen_first = base, True
            scan.first_offset = first_offset
        after_invalid = False
        if attributes & DELETE_HORIZON_FLAG:
            delete_horizon = True
        timestamp = klog_be64(entry + 35)
        if timestamp > max_timestamp:
            max_timestamp = timestamp
        prev_last, has_prev = last, True
        if not has_max_last or last > max_last:
            max_last, has_max_last = last, True
        if missing_between > SAFE_OFFSET or missing_inside > SAFE_OFFSET:
            position += total
            at += total
            break  # keep the sums far from int64's end: the readable code goes on
        position += total
        at += total
    if batches:
        scan.batches += batches
        scan.last_offset = prev_last
        scan.max_last = max_last
        scan.max_timestamp = max_timestamp
        scan.missing_inside = missing_inside
        scan.missing_between = missing_between
        scan.seen_first = seen_first
        scan.after_invalid = after_invalid
        scan.delete_horizon = delete_horizon
        if has_gap and scan.first_gap is None:
            scan.first_gap = (gap_position, gap_offset)
    return position, reason


# --- v2 record decode (records/batch.py: decode_records) ----------------------------------

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


cdef struct Cursor:
    const uint8_t *buf
    Py_ssize_t pos
    Py_ssize_t end
    bint bad  # set on anything the readable decoder must judge


cdef inline int32_t _varint(Cursor *c) noexcept nogil:
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


cdef inline int64_t _varlong(Cursor *c) noexcept nogil:
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


cdef inline object _bytes_or_none(Cursor *c, Py_ssize_t limit):
    """A varint length then that many bytes (negative: null), none past ``limit``."""
    cdef int32_t size = _varint(c)
    if c.bad:
        return None
    if size < 0:
        return None
    if size > limit - c.pos:
        c.bad = True
        return None
    value = PyBytes_FromStringAndSize(<const char *>(c.buf + c.pos), size)
    c.pos += size
    return value


cdef object _headers(Cursor *c, Py_ssize_t end):
    """decode_records' _read_headers on well-formed bytes."""
    cdef int32_t count = _varint(c)
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
        key_size = _varint(c)
        if c.bad or key_size < 0 or key_size > end - c.pos:
            c.bad = True
            return None
        key = PyBytes_FromStringAndSize(<const char *>(c.buf + c.pos), key_size)
        c.pos += key_size
        value = _bytes_or_none(c, end)
        if c.bad:
            return None
        header = klog_alloc_tuple(_Header, 2)
        Py_INCREF(key)
        PyTuple_SET_ITEM(header, 0, key)
        Py_INCREF(value)
        PyTuple_SET_ITEM(header, 1, value)
        headers.append(header)
    return tuple(headers)


cdef struct BatchBase:
    int64_t base_offset
    int64_t base_timestamp
    int64_t max_timestamp
    int32_t base_sequence
    bint log_append


cdef int _batch_base(batch, BatchBase *b) except -1:
    """The header fields a record's own fields are relative to; 0 when one does not fit
    (hostile bytes): the readable decoder then decides."""
    try:
        b.base_offset = batch.base_offset
        b.base_timestamp = batch.base_timestamp
        b.max_timestamp = batch.max_timestamp
        b.base_sequence = batch.base_sequence
        b.log_append = batch.attributes & TIMESTAMP_TYPE_FLAG
    except OverflowError:
        return 0
    return 1


cdef inline bint _record_fields(
    const BatchBase *b, int32_t offset_delta, int64_t timestamp_delta,
    int64_t *offset, int64_t *timestamp, int32_t *sequence,
) noexcept nogil:
    """A record's offset, timestamp and sequence from its deltas, as ``decode_records``
    makes them (REC-*, BATCH-6); False when a sum overflows int64."""
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


def decode_records(batch, buf, Py_ssize_t start=0):
    """``records/batch.py: decode_records`` (DefaultRecord.readFrom, REC-*) on a batch whose
    records are well formed: the same Record tuples, built in C. Anything else (a check
    that fails, a varint error, a value past int64) goes to the readable decoder, whose
    records or error are the answer."""
    cdef Py_ssize_t pos = start
    records = _decode_chunk(batch, buf, start, batch.records_count, &pos)
    if records is None or pos != len(buf):
        return _readable_decode(batch, buf, start)
    return records


def decode_record_chunk(batch, buf, Py_ssize_t start, int32_t done, int32_t count):
    """``records/batch.py: decode_record_chunk``: ``count`` well-formed records from
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
    cdef int64_t timestamp_delta, offset, timestamp
    cdef int32_t length, offset_delta, sequence
    cdef int32_t n
    cdef uint8_t attributes
    cdef Py_ssize_t end, full_end
    if not _batch_base(batch, &b):
        return None
    c.buf = &view[0] if view.shape[0] else NULL
    c.end = view.shape[0]
    c.pos = start
    c.bad = start < 0 or start > c.end
    records = []
    for n in range(count):
        if c.bad:
            break
        length = _varint(&c)
        if c.bad or length <= 0 or length > c.end - c.pos:
            c.bad = True
            break
        end = c.pos + length
        attributes = c.buf[c.pos]
        c.pos += 1
        c.end, full_end = end, c.end  # no field may run past the record
        timestamp_delta = _varlong(&c)
        offset_delta = _varint(&c)
        key = _bytes_or_none(&c, end)
        value = _bytes_or_none(&c, end)
        headers = _headers(&c, end)
        c.end = full_end
        if c.bad or c.pos != end:
            c.bad = True
            break
        if not _record_fields(&b, offset_delta, timestamp_delta, &offset, &timestamp, &sequence):
            c.bad = True
            break
        fields = (offset, timestamp, key, value, headers, sequence, attributes, offset_delta,
                  timestamp_delta)
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


# --- recovery (segment_recovery.py: recover_batch and learn_batch) ------------------------




KNOWN_PRODUCERS = 64
cdef enum:
    _KNOWN_PRODUCERS = 64  # producers a run replays in bulk (more: the readable path)
    RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN (PSTATE-2)
    REPLAY_FIELDS = 5  # epoch, base sequence, last offset delta, last offset, max timestamp


cdef class RecoveryRun:
    """The state ``recover_batch`` and ``learn_batch`` read and change, for a run of
    ``recover_clean_batches`` calls; the glue (recovery_run.py) loads it from the segment
    and applies what the run collected: index entries, producers' batches, the epoch."""

    cdef public int64_t segment_base, interval, last_index_entry
    cdef public int64_t max_timestamp, max_timestamp_offset
    cdef public bint max_timestamp_changed
    cdef public int64_t offset_room, offset_last, time_room, time_last_timestamp, time_last_offset
    cdef public bint offset_has_last, time_has_last
    cdef public bint epochs, producers  # an epoch cache, a producer-state manager to feed
    cdef public int64_t latest_epoch  # -1: none
    cdef public bint any_v2
    cdef public int64_t map_end_offset
    cdef public bytearray offset_entries, time_entries
    # the known producers (whose data batches replay in bulk), and for each its last
    # RETAIN batches in a ring: what replay_data_batch would give its entry
    cdef int64_t known[_KNOWN_PRODUCERS]
    cdef int known_count
    cdef int64_t ring[_KNOWN_PRODUCERS][RETAIN][REPLAY_FIELDS]
    cdef int64_t ring_added[_KNOWN_PRODUCERS]

    def __init__(self, known=()):
        self.offset_entries = bytearray()
        self.time_entries = bytearray()
        self.known_count = 0
        for producer_id in known:
            if self.known_count == _KNOWN_PRODUCERS:
                break
            self.known[self.known_count] = producer_id
            self.ring_added[self.known_count] = 0
            self.known_count += 1

    cdef inline int known_slot(self, int64_t producer_id) noexcept:
        cdef int i
        for i in range(self.known_count):
            if self.known[i] == producer_id:
                return i
        return -1

    def replayed(self) -> dict:
        """Each known producer's last batches of the run, oldest first, as
        (epoch, base sequence, last offset delta, last offset, max timestamp)."""
        cdef int i, k
        cdef int64_t added, first
        out = {}
        for i in range(self.known_count):
            added = self.ring_added[i]
            if not added:
                continue
            first = added - RETAIN if added > RETAIN else 0
            out[self.known[i]] = [
                tuple(self.ring[i][k % RETAIN][f] for f in range(REPLAY_FIELDS))
                for k in range(first, added)
            ]
            self.ring_added[i] = 0
        return out


cdef inline void _append_entry(bytearray entries, const uint8_t *data, Py_ssize_t size) except *:
    """Append ``size`` bytes to ``entries`` (amortized growth, as list appends)."""
    cdef Py_ssize_t used = len(entries)
    PyByteArray_Resize(entries, used + size)
    memcpy(PyByteArray_AS_STRING(entries) + used, data, size)


def recover_clean_batches(
    const uint8_t[::1] window, Py_ssize_t at, Py_ssize_t position, Py_ssize_t end,
    RecoveryRun run,
):
    """``recover_batch`` then ``learn_batch`` of each v2 batch from ``position`` on whose
    outcome needs nothing but bookkeeping: valid size and CRC-32C, the offset in range,
    index entries that append (collected in ``run.offset_entries``/``time_entries``, as
    the index files hold them), no newer leader epoch, and no producer or a known one
    (``run.known``) with a plain data batch (collected in ``run.replayed``). It stops
    before anything else (the readable ``recover_batch`` takes it: a failure, a new
    epoch, a new producer, a transaction or marker) and at the end of the window or data.
    Returns (position, READABLE or REFILL)."""
    cdef Py_ssize_t window_size = window.shape[0], total
    cdef const uint8_t *entry
    cdef int32_t size, last_delta, epoch, base_sequence
    cdef int16_t attributes, producer_epoch
    cdef int64_t base, last, timestamp, producer_id
    cdef int64_t max_ts = run.max_timestamp, max_ts_offset = run.max_timestamp_offset
    cdef bint max_changed = False, add_offset, add_time
    cdef int reason = READABLE
    cdef uint8_t packed[12]
    cdef int slot
    cdef int64_t *ring
    if not (-SAFE_OFFSET <= run.segment_base <= SAFE_OFFSET):
        return position, READABLE
    while True:
        total = _whole_v2_entry(&window[0], window_size, at, position, end, &reason)
        if total == 0:
            break  # the end, a framing problem, a legacy entry, or REFILL
        entry = &window[at]
        base = klog_be64(entry)
        last_delta = klog_be32(entry + 23)
        if not (-SAFE_OFFSET <= base <= SAFE_OFFSET):
            break
        last = base + last_delta
        if not (0 <= last - run.segment_base <= INT32_MAX):
            break  # ensure_offset_in_range raises
        timestamp = klog_be64(entry + 35)
        attributes = klog_be16(entry + ATTRIBUTES_OFFSET)
        epoch = klog_be32(entry + 12)
        producer_id = klog_be64(entry + 43)
        if run.epochs and epoch >= 0 and epoch > run.latest_epoch:
            break  # the epoch cache learns it: readable
        slot = -1
        if run.producers and producer_id >= 0:
            slot = run.known_slot(producer_id)
            if attributes & (CONTROL_FLAG | 0x10) or slot < 0:
                break  # a marker, a transaction or a producer not replayed in bulk
        # the index rule, with the running max timestamp this batch makes
        new_ts, new_ts_offset = max_ts, max_ts_offset
        if timestamp > max_ts:
            new_ts, new_ts_offset = timestamp, last
        add_offset = add_time = False
        if position - run.last_index_entry > run.interval:
            if run.offset_room <= 0 or run.offset_has_last and last <= run.offset_last:
                break  # a full index or an offset going back: readable raises
            add_offset = True
            if run.time_room <= 0:
                break
            if run.time_has_last:
                if new_ts_offset < run.time_last_offset or new_ts < run.time_last_timestamp:
                    break
                add_time = new_ts > run.time_last_timestamp
            else:
                add_time = new_ts > -1
        if not _crc_matches(entry + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET,
                            klog_beu32(entry + 17)):
            break
        # the batch is taken: commit its effects
        if timestamp > max_ts:
            max_ts, max_ts_offset, max_changed = new_ts, new_ts_offset, True
        if add_offset:
            klog_put32(packed, <int32_t>(last - run.segment_base))
            klog_put32(packed + 4, <int32_t>position)
            _append_entry(run.offset_entries, packed, 8)
            run.offset_room -= 1
            run.offset_last, run.offset_has_last = last, True
            if add_time:
                klog_put64(packed, new_ts)
                klog_put32(packed + 8, <int32_t>(new_ts_offset - run.segment_base))
                _append_entry(run.time_entries, packed, 12)
                run.time_room -= 1
                run.time_last_timestamp, run.time_last_offset = new_ts, new_ts_offset
                run.time_has_last = True
            run.last_index_entry = position
        if run.producers:
            run.any_v2 = True
            run.map_end_offset = last + 1
            if slot >= 0:
                ring = run.ring[slot][run.ring_added[slot] % RETAIN]
                ring[0] = klog_be16(entry + 51)
                ring[1] = klog_be32(entry + 53)
                ring[2], ring[3], ring[4] = last_delta, last, timestamp
                run.ring_added[slot] += 1
        position += total
        at += total
    if max_changed:
        run.max_timestamp, run.max_timestamp_offset = max_ts, max_ts_offset
        run.max_timestamp_changed = True
    return position, reason


# --- v2 records into Arrow column buffers (pipeline/reader.py: _record_rows) --------------

cdef inline void _put(bytearray buf, const void *data, Py_ssize_t size) except *:
    cdef Py_ssize_t used = len(buf)
    if used + size + 1 > klog_bytearray_room(buf):
        # room for half as much again: CPython grows a bytearray by an eighth, and a
        # chunk's values reach megabytes, where each growth is a realloc copying them all
        PyByteArray_Resize(buf, used + size + ((used + size) >> 1))
    PyByteArray_Resize(buf, used + size)  # within its room: only the size changes
    memcpy(PyByteArray_AS_STRING(buf) + used, data, size)


cdef inline void _put_i64(bytearray buf, int64_t value) except *:
    _put(buf, &value, 8)  # Arrow buffers are little-endian, as this machine


cdef inline void _put_i32(bytearray buf, int32_t value) except *:
    _put(buf, &value, 4)


cdef class _Binary:
    """An Arrow binary (or utf8) column being built: validity bytes, int32 offsets, data."""

    cdef public bytearray valid, offsets, data
    cdef public Py_ssize_t nulls

    def __init__(self):
        self.valid, self.offsets, self.data, self.nulls = bytearray(), bytearray(), bytearray(), 0
        _put_i32(self.offsets, 0)

    cdef void add(self, const uint8_t *value, Py_ssize_t size, bint present) except *:
        cdef uint8_t flag = present
        _put(self.valid, &flag, 1)
        if present:
            _put(self.data, value, size)
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
        _put(self.control, &control, 1)
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
        if not _batch_base(batch, &b):
            return -1
        return self._decode(&b, count, &view[0] if view.shape[0] else NULL, view.shape[0],
                            start, batch_row)

    cdef Py_ssize_t _decode(self, const BatchBase *b, int32_t count, const uint8_t *buf,
                            Py_ssize_t size_, Py_ssize_t start, int32_t batch_row) except -2:
        """``decode`` of the records in ``buf[start:size_]`` of a batch with header
        fields ``b`` and ``count`` records."""
        cdef Cursor c
        cdef int64_t timestamp_delta, offset, timestamp
        cdef int32_t length, offset_delta, sequence, n, size, headers, h
        cdef int32_t key_size, value_size
        cdef Py_ssize_t end, full_end, key_at, value_at, payload = 0, rows0 = self.rows, i
        cdef Py_ssize_t headers0 = len(self.header_key.valid)
        c.buf = buf
        c.end = size_
        c.pos = start
        c.bad = count <= 0 or start < 0 or start > c.end
        for n in range(count):
            if c.bad:
                break
            length = _varint(&c)
            if c.bad or length <= 0 or length > c.end - c.pos:
                c.bad = True
                break
            end = c.pos + length
            c.pos += 1  # attributes
            full_end, c.end = c.end, end
            timestamp_delta = _varlong(&c)
            offset_delta = _varint(&c)
            key_size = _varint(&c)
            key_at = c.pos
            if not c.bad and key_size > 0:
                if key_size > end - c.pos:
                    c.bad = True
                else:
                    c.pos += key_size
            value_size = _varint(&c)
            value_at = c.pos
            if not c.bad and value_size > 0:
                if value_size > end - c.pos:
                    c.bad = True
                else:
                    c.pos += value_size
            if c.bad:
                c.end = full_end
                break
            self.key.add(c.buf + key_at, key_size, key_size >= 0)
            self.value.add(c.buf + value_at, value_size, value_size >= 0)
            payload += (key_size if key_size > 0 else 0) + (value_size if value_size > 0 else 0)
            headers = _varint(&c)
            if c.bad or headers < 0 or headers > end - c.pos:
                c.bad = True
            for h in range(headers if not c.bad else 0):
                size = _varint(&c)
                if c.bad or size < 0 or size > end - c.pos:
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
                size = _varint(&c)
                if c.bad or size > end - c.pos:
                    c.bad = True
                    break
                self.header_value.add(c.buf + c.pos, size, size >= 0)
                if size > 0:
                    c.pos += size
            c.end = full_end
            if c.bad or c.pos != end:
                c.bad = True
                break
            if not _record_fields(b, offset_delta, timestamp_delta, &offset, &timestamp,
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

FULL = STOP_FULL  # extract_clean_batches: the chunk is full (the reader flushes it, goes on)


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
    cdef int reason = READABLE
    if has_base and not (0 <= base_of_segment <= SAFE_OFFSET):
        return position, READABLE, rows, payload
    while True:
        if position >= range_end:
            break  # the range ends here: the readable walk says so
        total = _whole_v2_entry(&window[0], window_size, at, position, end, &reason)
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
        if not _crc_matches(entry + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET,
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
            klog_be64(entry + 43), klog_be16(entry + 51), bool(attributes & 0x10), False,
            labels[2], 2, klog_be32(entry + 12),
        ) + padding)
        rows += count
        payload += added
        position += total
        at += total
        if rows >= max_rows or payload >= max_bytes:
            reason = FULL
            break
    return position, reason, rows, payload


# --- a leader's append (log/log_validator.py: analyze_and_validate_records, then
# assign_offsets_as_leader) ---------------------------------------------------------------

cdef enum:
    MAX_TIMESTAMP_OFFSET = 35
    PRODUCER_ID_OFFSET = 43
    BASE_SEQUENCE_OFFSET = 53
    RECORDS_COUNT_OFFSET = 57
    NO_TIMESTAMP = -1


cdef inline void _skip_bytes(Cursor *c, Py_ssize_t limit) noexcept nogil:
    """_bytes_or_none without the object: a varint length (negative: null), those bytes."""
    cdef int32_t size = _varint(c)
    if c.bad or size < 0:
        return
    if size > limit - c.pos:
        c.bad = True
        return
    c.pos += size


cdef inline void _skip_headers(Cursor *c, Py_ssize_t end) noexcept nogil:
    """_headers without the objects: the same checks."""
    cdef int32_t count = _varint(c)
    cdef int32_t i, key_size
    if c.bad or count == 0:
        return
    if count < 0 or count > end - c.pos:
        c.bad = True
        return
    for i in range(count):
        key_size = _varint(c)
        if c.bad or key_size < 0 or key_size > end - c.pos:
            c.bad = True
            return
        c.pos += key_size
        _skip_bytes(c, end)
        if c.bad:
            return


cdef bint _create_time_records(
    Cursor *c, int32_t count, int64_t base_timestamp, int64_t *max_timestamp
) noexcept nogil:
    """``decode_records`` of a CreateTime batch's ``count`` records, kept to what the
    append needs: whether the kernel's ``decode_records`` would take them (every record
    well formed, the bytes ending with the last), and their largest timestamp (-1 at
    least, as ``assign_offsets_as_leader`` takes it)."""
    cdef int32_t n, length
    cdef int64_t timestamp_delta, timestamp
    cdef Py_ssize_t end, full_end = c.end
    max_timestamp[0] = NO_TIMESTAMP
    for n in range(count):
        length = _varint(c)
        if c.bad or length <= 0 or length > c.end - c.pos:
            return False
        end = c.pos + length
        c.pos += 1  # attributes: read, unused (REC-4)
        c.end = end  # no field may run past the record
        timestamp_delta = _varlong(c)
        _varint(c)  # offsetDelta: not required consecutive in a v2 batch (REC-11)
        _skip_bytes(c, end)  # key
        _skip_bytes(c, end)  # value
        _skip_headers(c, end)
        c.end = full_end
        if c.bad or c.pos != end:
            return False
        if klog_add_overflow(base_timestamp, timestamp_delta, &timestamp):
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
    if not _crc_matches(data + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET, klog_beu32(data + 17)):
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
        klog_put32(out + 17, <int32_t>_crc32c(out + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET))
    # Kafka's uncompressed path names the max-timestamp offset only when a record has a
    # timestamp (LogAppendTime always does)
    shallow = last_offset if max_timestamp > NO_TIMESTAMP else -1
    return out_bytes, last_offset, max_timestamp, shallow, client_epoch, last_offset_delta


# --- index entries of an append (log/segment.py: LogSegment.append, with
# offset_index.py's OffsetIndex.append and time_index.py's TimeIndex.maybe_append) -----------

def append_index_entries(
    bytearray offset_slots, Py_ssize_t offset_max_entries, bytearray time_slots,
    Py_ssize_t time_max_entries, int64_t base_offset, int64_t last_offset, int64_t position,
    int64_t timestamp, int64_t timestamp_offset,
):
    """The entries ``LogSegment.append`` places when an append is due an index entry:
    ``(offset_entry, time_entry)``, the bytes ``OffsetIndex.append(last_offset, position)``
    and ``TimeIndex.maybe_append(timestamp, timestamp_offset)`` write (``time_entry`` None
    when the timestamp is not above the last entry's), or None when either would refuse
    (full, out of order, a relative offset past int32): the readable methods judge."""
    cdef Py_ssize_t offset_entries = len(offset_slots) // 8
    cdef Py_ssize_t time_entries = len(time_slots) // 12
    cdef const uint8_t *slots
    cdef int64_t relative = last_offset - base_offset
    cdef int64_t time_relative = timestamp_offset - base_offset
    cdef int64_t last_timestamp = NO_TIMESTAMP
    cdef uint8_t entry[12]
    if offset_entries >= offset_max_entries or time_entries >= time_max_entries - 1:
        return None
    if relative < 0 or relative > INT32_MAX or position < 0 or position > INT32_MAX:
        return None
    if offset_entries:
        slots = <const uint8_t *>PyByteArray_AS_STRING(offset_slots)
        if relative <= klog_be32(slots + (offset_entries - 1) * 8):
            return None  # INDEX-13: offsets strictly increase
    if time_entries:
        slots = <const uint8_t *>PyByteArray_AS_STRING(time_slots)
        last_timestamp = klog_be64(slots + (time_entries - 1) * 12)
        if time_relative < klog_be32(slots + (time_entries - 1) * 12 + 8) or \
                timestamp < last_timestamp:
            return None  # INDEX-10's order
    klog_put32(entry, <int32_t>relative)
    klog_put32(entry + 4, <int32_t>position)
    offset_entry = PyBytes_FromStringAndSize(<const char *>entry, 8)
    if timestamp <= last_timestamp:
        return offset_entry, None
    if time_relative < 0 or time_relative > INT32_MAX:
        return None
    klog_put64(entry, timestamp)
    klog_put32(entry + 8, <int32_t>time_relative)
    return offset_entry, PyBytes_FromStringAndSize(<const char *>entry, 12)
