"""``__remote_log_metadata``: the topic-based remote log metadata manager's events about tiered segments (RemoteLogSegmentMetadataRecord and its update, snapshot and partition-delete records) (spec/formats/internal-topics/remote-log-metadata.md, rules RLMM-1 to RLMM-2)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("remote_log_metadata")
