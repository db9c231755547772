"""``__share_group_state``: the share coordinator's log, snapshots and updates of each
share-partition's delivery state (ShareSnapshotKey/Value, ShareUpdateKey/Value;
spec/formats/internal-topics/share-group-state.md, SHST-1; ShareCoordinatorRecordSerde.java)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("share_group_state")
