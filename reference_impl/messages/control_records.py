"""Control records, in the control batches of every topic: COMMIT and ABORT markers and
KRaft's LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION and KRAFT_VOTERS
(spec/formats/control-records.md for the key and markers; the KRaft values in
spec/formats/internal-topics/cluster-metadata.md §4, rule MSG-11;
ControlRecordUtils.java)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("control_records")
