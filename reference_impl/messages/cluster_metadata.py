"""``__cluster_metadata``: KRaft's metadata log and snapshots, one metadata record per record of
a data batch (TopicRecord, PartitionRecord, RegisterBrokerRecord, FeatureLevelRecord...)
(spec/formats/internal-topics/cluster-metadata.md, rules META-1 and META-2;
MetadataRecordSerde.java); its control batches are control_records.py's."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("cluster_metadata")


def described_partitions(value_decoded: dict | None) -> tuple[str | None, str | None, int | None]:
    """(topic name, topic id, partition) a metadata record is about, as far as it says:
    TopicRecord names a topic and its id, PartitionRecord and PartitionChangeRecord a
    partition of a topic id, RemoveTopicRecord a topic id, ConfigRecord of type 2 a topic
    name; None where the record says nothing of it."""
    if not value_decoded:
        return None, None, None
    kind = value_decoded["type"]
    name = value_decoded.get("Name") if kind == "TopicRecord" else None
    if kind == "ConfigRecord" and value_decoded.get("ResourceType") == 2:
        name = value_decoded.get("ResourceName")
    topic_id = value_decoded.get("TopicId")
    partition = value_decoded.get("PartitionId") if kind.startswith("Partition") else None
    return name, topic_id, partition
