"""``__remote_log_metadata``: the topic-based remote log metadata manager's events about
tiered segments (RemoteLogSegmentMetadataRecord, its update and snapshot records,
RemotePartitionDeleteMetadataRecord; spec/formats/internal-topics/remote-log-metadata.md,
RLMM-1; RemoteLogMetadataSerde.java)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("remote_log_metadata")
