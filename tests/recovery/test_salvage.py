"""``klogspec salvage`` (RECOV-27): the intact records of recover's quarantine, as JSON Lines a
client can produce again, with their original keys, values, headers and timestamps; damaged
bytes skipped (a broken length field too), control batches and aborted transactions left out,
open transactions marked."""

from __future__ import annotations

import base64
import json
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec.recover.cli import recover as recover_command
from klogspec.recover.salvage_cli import salvage as salvage_command
from reference_impl.records import (
    ControlRecordType,
    Header,
    SimpleRecord,
    TimestampType,
    build_record_batch,
)
from reference_impl.records.builder import build_control_batch

T0 = 1_700_000_000_000


def plain(offset: int, n: int, **options) -> tuple[bytes, list[dict]]:
    """A batch of ``n`` records with keys, values, a header and their own timestamps, and the
    records as salvage must write them."""
    records = [
        SimpleRecord(
            key=b"k%d" % (offset + i), value=b"\x00v%d\xff" % (offset + i),
            timestamp=T0 + offset + i, headers=(Header(b"trace", b"h%d" % (offset + i)),),
        )
        for i in range(n)
    ]  # fmt: skip
    batch = build_record_batch(records, base_offset=offset, partition_leader_epoch=0, **options)
    append_time = options.get("log_append_time")
    expected = [
        {
            "offset": offset + i, "key": r.key, "value": r.value, "headers": r.headers,
            "timestamp": append_time if append_time is not None else r.timestamp,
        }
        for i, r in enumerate(records)
    ]  # fmt: skip
    return batch, expected


def txn(offset: int, n: int, producer: int) -> tuple[bytes, list[dict]]:
    return plain(offset, n, producer_id=producer, producer_epoch=0, base_sequence=0,
                 is_transactional=True)  # fmt: skip


def marker(offset: int, kind: ControlRecordType, producer: int) -> bytes:
    return build_control_batch(
        kind, producer_id=producer, producer_epoch=0, base_offset=offset, timestamp=T0,
        partition_leader_epoch=0,
    )  # fmt: skip


def partition(root: Path) -> tuple[Path, int, dict[int, dict], dict[int, str | None]]:
    """Two segments, no checkpoints (recovery point 0): segment 0 holds the batch to damage
    at offsets 2-3, then transactions; segment 14 is intact (deleted after the cut, RECOV-5)."""
    dir = root / "orders-3"
    dir.mkdir(parents=True)
    b0, r0 = plain(0, 2)
    b1, _ = plain(2, 2)
    b2, r2 = txn(4, 2, producer=7)  # committed at 8
    b3, _ = txn(6, 2, producer=8)  # aborted at 9
    b4, b5 = marker(8, ControlRecordType.COMMIT, 7), marker(9, ControlRecordType.ABORT, 8)
    b6, r6 = txn(10, 2, producer=9)  # no marker: open
    b7, r7 = plain(12, 2, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=T0 + 99)
    b8, r8 = plain(14, 3)
    (dir / f"{0:020d}.log").write_bytes(b"".join([b0, b1, b2, b3, b4, b5, b6, b7]))
    (dir / f"{14:020d}.log").write_bytes(b8)
    for base in (0, 14):  # empty indexes: no LOAD-13 recovery, so the unflushed one (RECOV-1)
        for suffix in (".index", ".timeindex"):
            (dir / f"{base:020d}{suffix}").write_bytes(b"")
    expected = {r["offset"]: r for r in r2 + r6 + r7 + r8}
    verdicts = {**dict.fromkeys([4, 5], "committed"), 10: "open", 11: "open"}
    return dir, len(b0), expected, verdicts


def recover_and_salvage(dir: Path, out: Path, expect: int = 1):
    recovered = CliRunner().invoke(recover_command, [str(dir), "--yes", "--json"])
    assert recovered.exit_code == 1, recovered.output
    result = CliRunner().invoke(salvage_command, [str(dir), "--out", str(out), "--json"])
    assert result.exit_code == expect, result.output
    return json.loads(recovered.output), json.loads(result.output)


def b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode()


@pytest.mark.req("RECOV-27")
@pytest.mark.parametrize("damage_at", [30, 9], ids=["a record byte", "the length field"])
def test_the_intact_records_come_back_as_they_were(tmp_path, damage_at):
    dir, b1_at, expected, verdicts = partition(tmp_path)
    segment = dir / f"{0:020d}.log"
    data = bytearray(segment.read_bytes())
    data[b1_at + damage_at] ^= 0x40
    segment.write_bytes(bytes(data))
    out = tmp_path / "salvaged.jsonl"
    recovered, summary = recover_and_salvage(dir, out)
    assert recovered["logEndOffset"] == 2  # RECOV-3, RECOV-5: everything from offset 2 went
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["offset"] for r in lines] == sorted(expected)
    for line in lines:
        want = expected[line["offset"]]
        assert (line["topic"], line["partition"]) == ("orders", 3)
        assert line["key"] == b64(want["key"]) and line["value"] == b64(want["value"])
        assert line["headers"] == [
            {"key": h.key.decode(), "value": b64(h.value)} for h in want["headers"]
        ]
        assert line["timestamp"] == want["timestamp"]
        assert line["transaction"] == verdicts.get(line["offset"])
    types = {line["offset"]: line["timestampType"] for line in lines}
    assert (types[12], types[13], types[14]) == ("LogAppendTime", "LogAppendTime", "CreateTime")
    assert summary["skipped"] == [
        {"file": segment.name, "from": b1_at, "to": b1_at + len(plain(2, 2)[0])}
    ]
    assert summary["abortedRecords"] == 2 and summary["controlBatches"] == 2
    assert summary["openRecords"] == 2 and summary["records"] == len(expected)


def test_a_quarantine_without_damage_exits_0_and_an_existing_file_is_refused(tmp_path):
    dir, _, expected, _ = partition(tmp_path)
    segment = dir / f"{0:020d}.log"
    segment.write_bytes(segment.read_bytes() + b"\x00" * 7 + b"\x01")  # a torn tail, no damage
    out = tmp_path / "salvaged.jsonl"
    CliRunner().invoke(recover_command, [str(dir), "--yes"])
    folder = next((dir / ".klogspec-quarantine").iterdir())
    result = CliRunner().invoke(salvage_command, [str(folder), "--out", str(out)])
    assert result.exit_code == 1 and "skipped bytes" in result.output  # the 8 torn bytes
    again = CliRunner().invoke(salvage_command, [str(folder), "--out", str(out)])
    assert again.exit_code == 2 and "exists" in again.output
    nothing = CliRunner().invoke(salvage_command, [str(tmp_path), "--out", str(tmp_path / "x")])
    assert nothing.exit_code == 2 and "neither a quarantine folder" in nothing.output
    assert not (tmp_path / "x").exists() and not (tmp_path / "x.partial").exists()


def test_the_command_is_registered_as_a_plugin():
    from klogspec import cli

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"][cli.COMMAND_GROUP]
    assert declared["salvage"] == "klogspec.recover.salvage_cli:salvage"
    installed = {ep.name for ep in entry_points(group=cli.COMMAND_GROUP)}
    if "salvage" not in installed:
        pytest.skip("the installed metadata predates salvage: run pip install -e .")
    assert cli.main.get_command(None, "salvage") is salvage_command


def test_the_operator_guide_produces_each_salvaged_record(tmp_path, monkeypatch):
    """docs/operations.md's recipe, run against a stand-in for kafka-python's KafkaProducer:
    every record of the file is sent as it was, except those of open transactions."""
    import re
    import sys
    import types

    guide = (Path(__file__).parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    (recipe,) = re.findall(r"```python\n(.*?)```", guide, re.S)
    dir, b1_at, expected, verdicts = partition(tmp_path)
    segment = dir / f"{0:020d}.log"
    data = bytearray(segment.read_bytes())
    data[b1_at + 30] ^= 0x40
    segment.write_bytes(bytes(data))
    recover_and_salvage(dir, tmp_path / "orders-0.jsonl")
    sent = []

    class KafkaProducer:
        def __init__(self, **config):
            assert config["acks"] == "all"

        def send(self, topic, **fields):
            sent.append((topic, fields))

        def flush(self):
            sent.append("flushed")

    monkeypatch.setitem(sys.modules, "kafka", types.SimpleNamespace(KafkaProducer=KafkaProducer))
    monkeypatch.chdir(tmp_path)
    exec(compile(recipe, "docs/operations.md", "exec"), {})
    assert sent.pop() == "flushed"
    produced = [o for o in sorted(expected) if verdicts.get(o) != "open"]
    assert len(sent) == len(produced)
    for (topic, fields), offset in zip(sent, produced, strict=True):
        want = expected[offset]
        assert (topic, fields["partition"]) == ("orders", 3)
        assert (fields["key"], fields["value"]) == (want["key"], want["value"])
        assert fields["headers"] == [(h.key.decode(), h.value) for h in want["headers"]]
        assert fields["timestamp_ms"] == want["timestamp"]


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_piece_that_is_no_regular_file_is_an_error_not_a_hang(tmp_path, kind):
    import os

    dir, b1_at, _, _ = partition(tmp_path)
    segment = dir / f"{0:020d}.log"
    data = bytearray(segment.read_bytes())
    data[b1_at + 30] ^= 0x40
    segment.write_bytes(bytes(data))
    CliRunner().invoke(recover_command, [str(dir), "--yes"])
    folder = next((dir / ".klogspec-quarantine").iterdir())
    piece = folder / f"{14:020d}.log"
    piece.unlink()
    if kind == "fifo":
        os.mkfifo(piece)
    else:
        piece.symlink_to(segment)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(salvage_command, [str(folder), "--out", str(out)])
    assert result.exit_code == 2 and str(piece) in result.output
    assert "Traceback" not in result.output and not out.exists()
