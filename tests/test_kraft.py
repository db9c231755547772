"""The KRaft metadata partition: snapshot files and what a controller's restart does with them,
the quorum-state file, and their checks in ``klogspec verify`` and ``dump``
(spec/formats/internal-topics/cluster-metadata.md §5, §6)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from klogspec import cli
from klogspec.verify.findings import Findings
from klogspec.verify.kraft import check_metadata_partition
from reference_impl.formats.kraft_snapshots import SnapshotId, plan_snapshots
from reference_impl.messages import MessageDecodeError
from reference_impl.messages.quorum_state import read_quorum_state
from reference_impl.records import ControlRecordType, SimpleRecord, build_record_batch
from reference_impl.records.control import encode_control_key

TOPIC_RECORD = b"\x01\x02\x00\x02t" + bytes(16) + b"\x00"  # frame 1, TopicRecord v0, "t"


def control(kind: ControlRecordType, value: bytes, base_offset: int) -> bytes:
    record = SimpleRecord(value, encode_control_key(kind), 1)
    return build_record_batch([record], base_offset=base_offset, is_control=True)


HEADER = control(ControlRecordType.SNAPSHOT_HEADER, struct.pack(">hq", 0, 5) + b"\x00", 0)
DATA = build_record_batch([SimpleRecord(TOPIC_RECORD, None, 1)], base_offset=1)
FOOTER = control(ControlRecordType.SNAPSHOT_FOOTER, struct.pack(">h", 0) + b"\x00", 2)


@pytest.fixture
def metadata_partition(tmp_path: Path) -> Path:
    """Log start 100 (one segment), snapshots at 50 (below it), 150 (the latest) and 120
    (deletion scheduled), a partial one, and quorum-state version 1."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    (part / "00000000000000000100.log").write_bytes(
        build_record_batch([SimpleRecord(TOPIC_RECORD, None, 1)], base_offset=100)
    )
    for name in ("00000000000000000050-0000000001.checkpoint",
                 "00000000000000000150-0000000002.checkpoint",
                 "00000000000000000120-0000000002.checkpoint.deleted",
                 "00000000000000000160-0000000002-123456.checkpoint.part"):  # fmt: skip
        (part / name).write_bytes(HEADER + DATA + FOOTER)
    state = {"leaderId": 1, "leaderEpoch": 7, "votedId": -1, "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA",
             "data_version": 1}  # fmt: skip
    (part / "quorum-state").write_text(json.dumps(state))
    return part


def findings_of(part: Path, log_start: int = 100, log_end: int = 101) -> dict[str, list[str]]:
    findings = Findings()
    check_metadata_partition(str(part), log_start, log_end, findings)
    out: dict[str, list[str]] = {}
    for f in findings.done():
        out.setdefault(f.rule, []).append(f"{Path(f.file).name}: {f.message}")
    return out


@pytest.mark.req("KRAFT-2", "KRAFT-4")
def test_a_restart_deletes_partial_deleted_and_old_snapshots_and_loads_the_latest(
    metadata_partition,
):
    found = findings_of(metadata_partition)
    deleted = sorted(m.split(":")[0] for m in found["KRAFT-2"])
    assert deleted == ["00000000000000000050-0000000001.checkpoint",
                       "00000000000000000120-0000000002.checkpoint.deleted",
                       "00000000000000000160-0000000002-123456.checkpoint.part"]  # fmt: skip
    assert "below the log start offset 100" in " ".join(found["KRAFT-2"])
    assert found["KRAFT-4"] == [
        "__cluster_metadata-0: a restart loads the snapshot ending at 150 (epoch 2); the log "
        "ends at 101, before it, and is emptied to start there"
    ]
    assert "KRAFT-1" not in found and "KRAFT-3" not in found


@pytest.mark.req("KRAFT-4")
def test_the_latest_snapshot_is_the_highest_offset_then_epoch():
    files = {
        "a": (SnapshotId(10, 3), None),
        "b": (SnapshotId(20, 1), None),
        "c": (SnapshotId(20, 2), None),
    }
    assert plan_snapshots(files, 0).latest == SnapshotId(20, 2)
    assert plan_snapshots({}, 0).latest is None


@pytest.mark.req("KRAFT-3")
def test_a_log_start_beyond_every_snapshot_is_inconsistent(metadata_partition):
    found = findings_of(metadata_partition, log_start=200, log_end=300)
    assert "the log starts at 200 but the latest snapshot is none" in found["KRAFT-3"][0]
    assert plan_snapshots({}, 0).inconsistent is None  # a log from offset 0 needs none


@pytest.mark.req("KRAFT-1")
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (DATA + FOOTER, "starts with no batch or a data batch"),
        (HEADER + DATA, "ends with no batch or a data batch"),
        (HEADER + DATA + HEADER, "ends with a SNAPSHOT_HEADER control batch"),
    ],
)
def test_a_snapshot_is_framed_by_header_and_footer(metadata_partition, content, words):
    (metadata_partition / "00000000000000000150-0000000002.checkpoint").write_bytes(content)
    found = findings_of(metadata_partition, log_start=0)
    assert [m for m in found["KRAFT-1"] if words in m], found


@pytest.mark.req("KRAFT-5", "KRAFT-6", "KRAFT-7")
@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("", "KRAFT-5"),
        ("[1, 2]", "KRAFT-5"),
        ('{"leaderId": 1}', "KRAFT-6"),
        ('{"leaderId": 1, "data_version": 2}', "KRAFT-6"),
        ('{"leaderId": 1, "leaderEpoch": 1, "votedId": -1, "data_version": 1}', "KRAFT-7"),
        ('{"leaderId": "1", "leaderEpoch": 1, "votedId": -1, "votedDirectoryId": "x", "data_version": 1}',
         "KRAFT-7"),
    ],
)  # fmt: skip
def test_quorum_state_is_one_line_of_quorum_state_data(text, rule):
    with pytest.raises(MessageDecodeError) as caught:
        read_quorum_state(text)
    assert caught.value.rule == rule


@pytest.mark.req("KRAFT-5", "KRAFT-6")
def test_quorum_state_versions_0_and_1_and_only_the_first_line():
    v0 = ('{"clusterId":"","leaderId":1,"leaderEpoch":39,"votedId":-1,"appliedOffset":0,'
          '"currentVoters":[{"voterId":1}],"data_version":0}')  # fmt: skip
    assert read_quorum_state(v0 + "\nnot json")["leaderEpoch"] == 39


def test_verify_and_dump_report_them(metadata_partition):
    (metadata_partition / "quorum-state").write_text('{"data_version": 9}')
    result = CliRunner().invoke(cli.main, ["verify", "--json", str(metadata_partition)])
    rules = json.loads(result.stdout.splitlines()[-1])["rules"]
    assert {"KRAFT-2", "KRAFT-4", "KRAFT-6"} <= set(rules) and result.exit_code == 1
    result = CliRunner().invoke(
        cli.main, ["dump", "--json", str(metadata_partition / "quorum-state")]
    )
    summary = json.loads(result.stdout.splitlines()[-1])
    assert result.exit_code == 1 and "KRAFT-6" in summary["errors"][0]["message"]


@pytest.mark.req("KRAFT-1")
def test_dump_reports_a_snapshot_without_its_footer(metadata_partition):
    snapshot = metadata_partition / "00000000000000000150-0000000002.checkpoint"
    result = CliRunner().invoke(cli.main, ["dump", "--json", str(snapshot)])
    assert (
        result.exit_code == 0
        and json.loads(result.stdout.splitlines()[-1])["snapshotFrame"] is None
    )
    snapshot.write_bytes(HEADER + DATA)
    result = CliRunner().invoke(cli.main, ["dump", "--json", str(snapshot)])
    summary = json.loads(result.stdout.splitlines()[-1])
    assert result.exit_code == 1 and "not a SNAPSHOT_FOOTER" in summary["snapshotFrame"]
    result = CliRunner().invoke(cli.main, ["dump", "--no-progress", str(snapshot)])
    assert "KRAFT-1: snapshot ends with no batch or a data batch" in result.stdout


@pytest.mark.req("KRAFT-5")
@settings(max_examples=300, deadline=None)
@given(
    text=st.text(max_size=80)
    | st.builds(
        json.dumps,
        st.dictionaries(
            st.sampled_from(
                [
                    "data_version",
                    "leaderId",
                    "leaderEpoch",
                    "votedId",
                    "clusterId",
                    "appliedOffset",
                    "currentVoters",
                    "votedDirectoryId",
                ]
            ),
            st.none()
            | st.booleans()
            | st.integers()
            | st.text(max_size=5)
            | st.lists(st.integers()),
        ),
    )  # fmt: skip
)
def test_hostile_quorum_state_never_raises_anything_else(text):
    """Whatever the file holds: its state, or a MessageDecodeError with one of the rules."""
    try:
        assert isinstance(read_quorum_state(text), dict)
    except MessageDecodeError as exc:
        assert exc.rule in ("KRAFT-5", "KRAFT-6", "KRAFT-7")


def test_a_partition_that_is_not_a_local_directory_is_left_alone():
    """The scan job's partitions may be URLs: the KRaft checks list local directories only."""
    findings = Findings()
    check_metadata_partition("s3://bucket/logs/__cluster_metadata-0", 0, 0, findings)
    assert findings.done() == []
