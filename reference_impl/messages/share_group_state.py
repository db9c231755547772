"""``__share_group_state``: the share coordinator's log: per share-partition snapshots and updates of acquired record state (ShareSnapshotKey/Value, ShareUpdateKey/Value) (spec/formats/internal-topics/share-group-state.md, rules SHST-1 to SHST-2)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("share_group_state")
