"""The cleaner's offset map: Kafka's SkimpyOffsetMap (spec/behaviour/compaction.md §2).

[storage/.../internals/log/SkimpyOffsetMap.java] One pass of the log cleaner first reads
the dirty section and remembers, per key, the offset of its latest record; the pass then
keeps a record only if it is that latest one. Kafka stores not the key but its MD5 digest
(16 bytes) and the offset (8 bytes) in a fixed buffer of ``log.cleaner.dedupe.buffer.size``
bytes, so the map holds ``buffer // 24`` slots, of which a pass fills at most
``slots * log.cleaner.io.buffer.load.factor`` (COMPACT-9). Two keys with the same MD5 count
as one key, as in Kafka.

Kafka probes the buffer by open addressing; where an entry sits is not observable (a map
that is never full answers the same ``get`` whatever its layout), so the reference keeps
a dict from digest to offset with Kafka's capacity.
"""

from __future__ import annotations

import hashlib

HASH_SIZE = 16  # MD5, CleanerConfig.HASH_ALGORITHM
BYTES_PER_ENTRY = HASH_SIZE + 8  # the digest and a long offset


class OffsetMapFullError(Exception):
    """SkimpyOffsetMap.put on a map whose slots are all taken (the cleaner never lets it)."""


class SkimpyOffsetMap:
    """COMPACT-9, COMPACT-10: key -> latest offset, in ``memory`` bytes."""

    def __init__(self, memory: int) -> None:
        self.slots = memory // BYTES_PER_ENTRY
        self._offsets: dict[bytes, int] = {}
        self._latest_offset = -1

    @staticmethod
    def _hash(key: bytes) -> bytes:
        return hashlib.md5(key).digest()

    def put(self, key: bytes, offset: int) -> None:
        """Remember ``offset`` as ``key``'s; it also becomes the map's latest offset."""
        digest = self._hash(key)
        if digest not in self._offsets and len(self._offsets) >= self.slots:
            raise OffsetMapFullError("attempt to add a new entry to a full offset map")
        self._offsets[digest] = offset
        self._latest_offset = offset

    def get(self, key: bytes) -> int:
        """The offset remembered for ``key``, -1 if none."""
        return self._offsets.get(self._hash(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        """COMPACT-10: the map covers the dirty section up to ``offset`` (a batch's last offset,
        or a segment's end: offsets with no record still count as read)."""
        self._latest_offset = offset

    @property
    def latest_offset(self) -> int:
        """The last offset the map covers: the pass's end offset is this + 1 (COMPACT-10)."""
        return self._latest_offset

    def clear(self) -> None:
        self._offsets.clear()
        self._latest_offset = -1

    @property
    def size(self) -> int:
        return len(self._offsets)

    def utilization(self) -> float:
        return len(self._offsets) / self.slots if self.slots else 0.0
