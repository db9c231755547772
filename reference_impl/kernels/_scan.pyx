# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled walk of ``klogspec verify`` and ``klogspec scan``: ``_SegmentScan.check_batch``
(klogspec/verify/segment.py) of each clean v2 batch, through ``klogspec/verify/_compiled_walk.py``.
"""

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t

from ._framing cimport (
    ATTRIBUTES_OFFSET, CONTROL_FLAG, DELETE_HORIZON_FLAG, INT32_MAX, LAST_CODEC_ID, SAFE_OFFSET,
    STOP_READABLE, STOP_REFILL, bind_crc32c, crc_matches, klog_be16, klog_be32, klog_be64,
    klog_beu32, whole_v2_entry,
)

CRC_SOURCE = bind_crc32c()
READABLE = STOP_READABLE  # the entry there needs the readable code (or the data ends there)
REFILL = STOP_REFILL  # the entry there is not wholly inside the window: read one from there


def verify_clean_batches(
    const uint8_t[::1] window, Py_ssize_t at, Py_ssize_t position, Py_ssize_t end,
    scan, int64_t offset_index_stop, int64_t time_index_stop,
):
    """``_SegmentScan.check_batch`` of each v2 batch from ``position`` (``window[at]``) on
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
    cdef int reason = STOP_READABLE
    if has_base and not (0 <= segment_base <= SAFE_OFFSET):
        return position, STOP_READABLE
    if has_prev and not (0 <= prev_last <= SAFE_OFFSET):
        return position, STOP_READABLE  # an offset the readable walk took: its sums stay there
    while True:
        total = whole_v2_entry(&window[0], window_size, at, position, end, &reason)
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
        if not crc_matches(entry + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET,
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
