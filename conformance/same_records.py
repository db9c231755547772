"""The golden comparison of rewritten compressed batches (COMPACT-28, spec/behaviour/compaction.md §4).

A cleaner rewrites a compressed batch with its codec, through whatever compressor it ships; the
same records may come out in other bytes. So two record streams are **the same records** when
they hold the same batches in the same order and each pair is byte-identical, or the golden's
is a rewrite (some record removed, or a delete horizon stamped) and both are compressed with one
codec, agree on every header field but ``batchLength`` and ``crc``, have a right CRC and decode
to equal records. Whatever follows from such a batch's size (later
positions in the segment and the offset index, byte counters, segment sizes) is then the
testee's own: :func:`same_index_entries` compares offset-index entries by the batch they point
at, and :data:`SIZE_DERIVED` names the response fields that count bytes.
"""

from __future__ import annotations

from reference_impl.errors import KafkaLogError
from reference_impl.records import iter_batches

# Response fields that count the bytes of batches (a compressed batch rewritten by another
# compressor changes them and nothing else): clean's CleanerStats byte counters, a segment's size.
SIZE_DERIVED = {
    "clean": {"bytes_read", "bytes_written", "map_bytes_read"},
}

# The v2 header fields a rewrite keeps (COMPACT-19); batchLength and crc follow the bytes.
_KEPT_FIELDS = (
    "base_offset",
    "partition_leader_epoch",
    "magic",
    "attributes",
    "last_offset_delta",
    "base_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "records_count",
)


def _batches(data: bytes) -> list | None:
    """The whole v2 batches of a .log image, or None when it holds anything else."""
    try:
        found = list(iter_batches(data))
    except KafkaLogError:
        return None
    if sum(b.size_in_bytes for b in found) != len(data) or any(b.magic != 2 for b in found):
        return None
    return found


def _same_batch(mine, theirs) -> bool:
    if mine.raw == theirs.raw:
        return True
    if mine.compression_id == 0 or mine.compression_id != theirs.compression_id:
        return False  # an uncompressed batch, or another codec: its bytes are fixed
    if theirs.records_count == theirs.last_offset_delta + 1 and not theirs.has_delete_horizon:
        return False  # every record kept, no horizon: a copy, byte for byte (COMPACT-18)
    if any(getattr(mine, f) != getattr(theirs, f) for f in _KEPT_FIELDS) or not mine.is_valid:
        return False
    try:
        return mine.records() == theirs.records()
    except KafkaLogError:
        return False


def same_records(mine: bytes, theirs: bytes) -> bool:
    """Whether two .log images (or read results) hold the same records (COMPACT-28)."""
    a, b = _batches(mine), _batches(theirs)
    if a is None or b is None or len(a) != len(b):
        return False
    return all(_same_batch(x, y) for x, y in zip(a, b, strict=True))


def same_index_entries(mine: list, theirs: list, mine_log: bytes, theirs_log: bytes) -> bool:
    """Offset-index entries ``[offset, position]`` of two same-records segments: the same
    offsets, each position the start of the same batch (by its order) in its own segment."""
    a, b = _batches(mine_log), _batches(theirs_log)
    if a is None or b is None or len(mine) != len(theirs):
        return False
    starts_a = {x.position: i for i, x in enumerate(a)}
    starts_b = {y.position: i for i, y in enumerate(b)}
    return all(
        m[0] == t[0] and m[1] in starts_a and starts_a[m[1]] == starts_b.get(t[1])
        for m, t in zip(mine, theirs, strict=True)
    )
