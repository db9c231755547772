# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled recovery walk: ``LogSegment.recover``'s batch loop (log/segment_recovery.py:
``RecoveryScanner.take`` then ``_recover_batch``) over the batches whose recovery is only
bookkeeping, through ``log/_compiled_recovery.py``. Serves ``Log.open`` after an unclean
shutdown and ``klogspec recover``.
"""

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t

from ._framing cimport (
    ATTRIBUTES_OFFSET, CONTROL_FLAG, INT32_MAX, SAFE_OFFSET, STOP_READABLE, STOP_REFILL,
    TRANSACTIONAL_FLAG, bind_crc32c, crc_matches, klog_be16, klog_be32, klog_be64, klog_beu32,
    klog_put32, klog_put64, put_bytes, whole_v2_entry,
)

CRC_SOURCE = bind_crc32c()
READABLE = STOP_READABLE  # the entry there needs the readable code (or the data ends there)
REFILL = STOP_REFILL  # the entry there is not wholly inside the window: read one from there

KNOWN_PRODUCERS = 64
cdef enum:
    _KNOWN_PRODUCERS = 64  # producers a run replays in bulk (more: the readable path)
    RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN (PSTATE-2)
    REPLAY_FIELDS = 5  # epoch, base sequence, last offset delta, last offset, max timestamp


cdef class RecoveryRun:
    """The state ``recover_batch`` and ``learn_batch`` read and change, for a run of
    ``recover_clean_batches`` calls; the glue (log/_compiled_recovery.py) loads it from the segment
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
    cdef int reason = STOP_READABLE
    cdef uint8_t packed[12]
    cdef int slot
    cdef int64_t *ring
    if not (-SAFE_OFFSET <= run.segment_base <= SAFE_OFFSET):
        return position, STOP_READABLE
    while True:
        total = whole_v2_entry(&window[0], window_size, at, position, end, &reason)
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
            if attributes & (CONTROL_FLAG | TRANSACTIONAL_FLAG) or slot < 0:
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
        if not crc_matches(entry + ATTRIBUTES_OFFSET, total - ATTRIBUTES_OFFSET,
                            klog_beu32(entry + 17)):
            break
        # the batch is taken: commit its effects
        if timestamp > max_ts:
            max_ts, max_ts_offset, max_changed = new_ts, new_ts_offset, True
        if add_offset:
            klog_put32(packed, <int32_t>(last - run.segment_base))
            klog_put32(packed + 4, <int32_t>position)
            put_bytes(run.offset_entries, packed, 8)
            run.offset_room -= 1
            run.offset_last, run.offset_has_last = last, True
            if add_time:
                klog_put64(packed, new_ts)
                klog_put32(packed + 8, <int32_t>(new_ts_offset - run.segment_base))
                put_bytes(run.time_entries, packed, 12)
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
