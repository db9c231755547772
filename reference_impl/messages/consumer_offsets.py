"""``__consumer_offsets``: the group coordinator's log: committed offsets, classic groups'
metadata, and the records of the consumer, share and streams groups of the new group
protocol (spec/formats/internal-topics/consumer-offsets.md, rules COFF-1 to COFF-3;
GroupCoordinatorRecordSerde.java)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("consumer_offsets")
# COFF-2: the record types whose key and value are an offset commit
OFFSET_COMMIT_TYPES = frozenset({0, 1})


def offset_commit(key_decoded: dict | None, value_decoded: dict | None) -> dict | None:
    """One committed offset (group, topic, partition, offset, leader epoch, metadata, commit
    and expire time) from a decoded offset-commit record, None for other records; a
    tombstone (the offset deleted) has offset None. Fields a value version lacks are their
    schema defaults (leaderEpoch and expireTimestamp -1)."""
    if key_decoded is None or key_decoded["version"] not in OFFSET_COMMIT_TYPES:
        return None
    value = value_decoded or {}
    return {
        "group": key_decoded["group"],
        "topic": key_decoded["topic"],
        "partition": key_decoded["partition"],
        "offset": value.get("offset"),
        "leader_epoch": value.get("leaderEpoch", -1) if value else None,
        "metadata": value.get("metadata"),
        "commit_timestamp": value.get("commitTimestamp"),
        "expire_timestamp": value.get("expireTimestamp", -1) if value else None,
        "value_version": value_decoded["version"] if value_decoded else None,
    }
