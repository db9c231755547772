"""``klogspec dump`` through click's CliRunner: Kafka's DumpLogSegmentsTest cases on generated
segments, every output field, problems reported without a traceback, exit statuses, and the
whole real-broker corpus."""

from __future__ import annotations

import base64
import json
import struct
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import reference_impl.formats.index_entries as index
from klogspec import cli
from reference_impl.formats.checkpoints import (
    EpochEntry,
    PartitionMetadata,
    TopicPartitionOffset,
    write_clean_shutdown,
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
    write_partition_metadata,
)
from reference_impl.formats.index_entries import AbortedTxn, OffsetPosition, TimestampOffset
from reference_impl.formats.producer_snapshot import ProducerSnapshotEntry, write_snapshot
from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    SimpleRecord,
    TimestampType,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
)
from reference_impl.records.checksums import crc32c

BATCH_FIELDS = {
    "file", "type", "baseOffset", "lastOffset", "count", "magic", "compression", "crc",
    "crcValid", "position", "sizeBytes", "partitionLeaderEpoch", "producerId", "producerEpoch",
    "baseSequence", "lastSequence", "isTransactional", "isControl", "timestampType",
    "maxTimestamp", "deleteHorizonMs",
}  # fmt: skip
SUMMARY_FIELDS = {
    "type", "file", "kind", "sizeBytes", "batches", "entries", "validBytes", "trailingBytes",
    "mismatches", "errors", "ioErrors", "ok",
}  # fmt: skip
NOW = 1_700_000_000_000


def run(*args, expect: int | None = None):
    result = CliRunner().invoke(cli.main, ["dump", *map(str, args)], catch_exceptions=False)
    if expect is not None:
        assert result.exit_code == expect, result.output
    return result


def run_json(*args, expect: int | None = 0) -> list[dict]:
    result = run("--json", *args, expect=expect)
    return [json.loads(line) for line in result.stdout.splitlines()]


def summaries(events: list[dict]) -> dict[str, dict]:
    return {Path(e["file"]).name: e for e in events if e["type"] == "summary"}


# --- a segment written as DumpLogSegmentsTest writes one -----------------------------------------


def dump_log_segments_test_batches() -> list[list[SimpleRecord]]:
    """DumpLogSegmentsTest's four batches: keys and values, keys only, values only, neither."""
    return [
        [SimpleRecord(f"message value {i}".encode(), f"message key {i}".encode(), NOW + i * 2)
         for i in range(10)],
        [SimpleRecord(None, f"message key {i}".encode(), NOW + i * 3) for i in range(10, 30)],
        [SimpleRecord(f"message value {i}".encode(), None, NOW + i * 5) for i in range(30, 50)],
        [SimpleRecord(None, None, NOW + i * 7) for i in range(50, 60)],
    ]  # fmt: skip


def write_segment(
    directory: Path,
    batches: list[bytes],
    *,
    base: int = 0,
    interval: int = 128,
    preallocate: int = 1024,
) -> Path:
    """Write ``batches`` as leader appends of one batch each, with the offset and time index
    entries Kafka's append path makes (index.interval.bytes = ``interval``), flushed but not
    closed: both indexes keep their zero-filled preallocated tail."""  # fmt: skip
    from reference_impl.records import read_batch

    directory.mkdir(parents=True, exist_ok=True)
    log, offsets, times = bytearray(), [], []
    since_last_entry, max_ts, offset_of_max = 0, -1, base
    for raw in batches:
        batch = read_batch(raw)
        if batch.max_timestamp > max_ts:
            max_ts, offset_of_max = batch.max_timestamp, batch.last_offset
        if since_last_entry > interval:
            offsets.append(OffsetPosition(batch.last_offset, len(log)))
            if not times or max_ts > times[-1].timestamp:
                times.append(TimestampOffset(max_ts, offset_of_max))
            since_last_entry = 0
        log += raw
        since_last_entry += len(raw)
    name = f"{base:020d}"
    (directory / f"{name}.log").write_bytes(log)
    offset_bytes = b"".join(index.encode_offset_index_entry(e, base) for e in offsets)
    time_bytes = b"".join(index.encode_time_index_entry(e, base) for e in times)
    (directory / f"{name}.index").write_bytes(offset_bytes.ljust(preallocate // 8 * 8, b"\0"))
    (directory / f"{name}.timeindex").write_bytes(time_bytes.ljust(preallocate // 12 * 12, b"\0"))
    return directory / f"{name}.log"


@pytest.fixture
def segment(tmp_path) -> Path:
    raws, offset = [], 0
    for records in dump_log_segments_test_batches():
        raws.append(build_record_batch(records, base_offset=offset, partition_leader_epoch=0))
        offset += len(records)
    return write_segment(tmp_path / "test-0", raws)


# --- DumpLogSegmentsTest ------------------------------------------------------------------------


@pytest.mark.req("OIDX-10", "OIDX-9")
def test_dump_index_mismatches(segment):
    """DumpLogSegmentsTest#testDumpIndexMismatches: a flushed, untrimmed index has none."""
    events = run_json("--verify-index-only", segment.with_suffix(".index"))
    summary = summaries(events)["00000000000000000000.index"]
    assert summary["mismatches"] == [] and summary["ok"]
    assert summary["entries"] == 3 and summary["slots"] == 128 and summary["unusedSlots"] == 125
    assert [e for e in events if e["type"] != "summary"] == []  # verify-only prints no entries


@pytest.mark.req("TIDX-12")
def test_dump_time_index_errors(segment):
    """DumpLogSegmentsTest#testDumpTimeIndexErrors: no mismatch, out-of-order or missing offset."""
    summary = summaries(run_json("--verify-index-only", segment.with_suffix(".timeindex")))
    assert summary["00000000000000000000.timeindex"]["mismatches"] == []
    assert summary["00000000000000000000.timeindex"]["entries"] == 3


def test_dump_empty_index(segment):
    """DumpLogSegmentsTest#testDumpEmptyIndex: a 0-byte index is reported empty."""
    empty = segment.with_suffix(".index")
    empty.write_bytes(b"")
    summary = summaries(run_json("--verify-index-only", empty))["00000000000000000000.index"]
    assert (summary["entries"], summary["mismatches"], summary["ok"]) == (0, [], True)
    assert "empty" in run(empty, expect=0).stdout


@pytest.mark.req("FRAME-7", "FRAME-9")
def test_print_data_log_partial_batches(segment):
    """DumpLogSegmentsTest#testPrintDataLogPartialBatches: --max-bytes N reads the batches that
    fit in N bytes, and reports no tail; without it, bytes after the last batch are reported."""
    batches = [e for e in run_json(segment) if e["type"] == "batch"]
    half = batches[: len(batches) // 2]
    limit = sum(b["sizeBytes"] for b in half)
    events = run_json("--max-bytes", limit + 30, segment)  # part of the next batch too
    assert [e for e in events if e["type"] == "batch"] == half
    assert summaries(events)["00000000000000000000.log"]["trailingBytes"] is None

    torn = segment.read_bytes() + build_record_batch([SimpleRecord(b"x" * 50)], base_offset=60)[:40]
    segment.write_bytes(torn)
    events = run_json(segment, expect=1)
    summary = summaries(events)["00000000000000000000.log"]
    assert (summary["batches"], summary["trailingBytes"]) == (4, 40)
    assert summary["validBytes"] == len(torn) - 40
    assert [(e["category"], e["position"], e["offset"]) for e in summary["errors"]] == [
        ("truncated_batch", len(torn) - 40, None)
    ]
    assert "40 invalid bytes at the end" in run(segment, expect=1).stdout


def test_max_bytes_says_it_stopped_the_dump(segment):
    """Issue 16: --max-bytes below the first batch printed "empty, 0 batches"; it says what
    was read, that the limit stopped it, and how long the next batch is."""
    first = next(e for e in run_json(segment) if e["type"] == "batch")["sizeBytes"]
    text = run("--max-bytes", 100, segment, expect=0).stdout
    assert "empty" not in text
    assert "0 batches in the first 100 bytes" in text
    assert "--max-bytes stopped the dump" in text and f"the next batch is {first} bytes" in text
    summary = summaries(run_json("--max-bytes", 100, segment))["00000000000000000000.log"]
    assert (summary["readBytes"], summary["maxBytesReached"]) == (100, True)
    assert summary["nextEntryBytes"] == first
    whole = run("--max-bytes", 1 << 20, segment, expect=0).stdout  # the limit not reached
    assert "--max-bytes" not in whole and "4 batches" in whole


def test_print_data_escapes_unprintable_bytes(tmp_path):
    """Issue 16: a control record's key and value (\\x00\\x00\\x00\\x01...) were written raw,
    NUL bytes and all; text shows every unprintable character escaped."""
    raws = [
        build_record_batch(
            [SimpleRecord(b"tab\there\\ and \x07bell", b"\xff\xfe", NOW)], base_offset=0,
            producer_id=42, producer_epoch=3, base_sequence=0, is_transactional=True,
        ),
        build_control_batch(
            ControlRecordType.COMMIT, producer_id=42, producer_epoch=3, coordinator_epoch=5,
            base_offset=1, timestamp=NOW + 9,
        ),
    ]  # fmt: skip
    text = run("--print-data", write_segment(tmp_path / "t-0", raws), expect=0).stdout
    assert "\0" not in text and "\x07" not in text
    assert "key: \\x00\\x00\\x00\\x01 payload: \\x00\\x00\\x00\\x00\\x00\\x05" in text
    assert "key: 0xfffe payload: tab\\there\\\\ and \\x07bell" in text


def test_print_data_log(segment):
    """DumpLogSegmentsTest#testPrintDataLog: records only with --deep or --print-data, keys and
    values only with --print-data."""
    shallow = [e for e in run_json(segment) if e["type"] == "batch"]
    assert all("records" not in b for b in shallow)
    deep = [e for e in run_json("--deep", segment) if e["type"] == "batch"]
    assert all("key" not in r and "value" not in r for b in deep for r in b["records"])
    data = [e for e in run_json("--print-data", segment) if e["type"] == "batch"]
    expected = dump_log_segments_test_batches()
    offset = 0
    for batch, records in zip(data, expected, strict=True):
        assert batch["baseOffset"] == offset
        for record, sent in zip(batch["records"], records, strict=True):
            assert record["offset"] == offset and record["timestamp"] == sent.timestamp
            assert record["key"] == (sent.key and base64.b64encode(sent.key).decode())
            assert record["value"] == (sent.value and base64.b64encode(sent.value).decode())
            assert record["keySize"] == (-1 if sent.key is None else len(sent.key))
            offset += 1
    text = run("--print-data", segment, expect=0).stdout
    assert "key: message key 3 payload: message value 3" in text
    assert "key: null payload: message value 40" in text


# --- output fields ----------------------------------------------------------------------------


def test_json_lines_have_the_documented_fields(tmp_path):
    headers = (Header(b"trace", b"abc"), Header(b"empty", None))
    raws = [
        build_record_batch(
            [SimpleRecord(b"v1", b"k1", NOW, headers), SimpleRecord(b"v2", None, NOW + 5)],
            base_offset=0, producer_id=42, producer_epoch=3, base_sequence=7,
            is_transactional=True, partition_leader_epoch=9,
        ),
        build_control_batch(
            ControlRecordType.COMMIT, producer_id=42, producer_epoch=3, coordinator_epoch=5,
            base_offset=2, timestamp=NOW + 9,
        ),
        build_record_batch(
            [SimpleRecord(b"z" * 100, timestamp=NOW + 10)], base_offset=3,
            compression=Compression.GZIP, timestamp_type=TimestampType.LOG_APPEND_TIME,
            log_append_time=NOW + 20, delete_horizon_ms=NOW + 99,
        ),
    ]  # fmt: skip
    log = write_segment(tmp_path / "t-0", raws)
    events = run_json("--print-data", log)
    batches = [e for e in events if e["type"] == "batch"]
    assert all(set(b) == BATCH_FIELDS | {"records"} for b in batches)
    txn, commit, gzip = batches
    assert {k: txn[k] for k in ("producerId", "producerEpoch", "baseSequence", "lastSequence",
                                "isTransactional", "partitionLeaderEpoch", "count", "magic")} == {
        "producerId": 42, "producerEpoch": 3, "baseSequence": 7, "lastSequence": 8,
        "isTransactional": True, "partitionLeaderEpoch": 9, "count": 2, "magic": 2,
    }  # fmt: skip
    assert txn["records"][0]["headers"] == [
        {"key": "trace", "value": base64.b64encode(b"abc").decode()},
        {"key": "empty", "value": None},
    ]
    assert [r["sequence"] for r in txn["records"]] == [7, 8]
    assert commit["isControl"] and commit["records"][0]["control"] == {
        "type": "COMMIT", "coordinatorEpoch": 5
    }  # fmt: skip
    assert (gzip["compression"], gzip["timestampType"], gzip["maxTimestamp"]) == (
        "gzip",
        "LogAppendTime",
        NOW + 20,
    )
    assert gzip["deleteHorizonMs"] == NOW + 99 and txn["deleteHorizonMs"] is None
    assert gzip["records"][0]["timestamp"] == NOW + 20  # LogAppendTime stamps every record
    assert set(summaries(events)["00000000000000000000.log"]) >= SUMMARY_FIELDS
    deep = [e for e in run_json("--deep", log) if e["type"] == "batch"]
    assert deep[0]["records"][0]["headers"] == [
        {"key": "trace", "valueSize": 3}, {"key": "empty", "valueSize": -1}
    ]  # fmt: skip
    entries = [e for e in run_json(log.with_suffix(".index")) if e["type"] != "summary"]
    assert all(set(e) == {"file", "type", "slot", "offset", "position"} for e in entries)


def test_legacy_batches(tmp_path):
    v0 = build_legacy_message_set([SimpleRecord(b"a"), SimpleRecord(b"b")], magic=0)
    wrapper = build_legacy_message_set(
        [SimpleRecord(b"c", timestamp=NOW), SimpleRecord(b"d", timestamp=NOW + 1)],
        magic=1, base_offset=2, compression=Compression.GZIP,
    )  # fmt: skip
    log = tmp_path / "old-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(v0 + wrapper)
    batches = [e for e in run_json(log) if e["type"] == "batch"]
    assert [(b["baseOffset"], b["lastOffset"], b["magic"], b["count"], b["timestampType"])
            for b in batches] == [
        (0, 0, 0, None, "NoTimestampType"), (1, 1, 0, None, "NoTimestampType"),
        (None, 3, 1, None, "CreateTime"),  # a wrapper's first offset needs decompressing
    ]  # fmt: skip
    deep = [e for e in run_json("--deep", log) if e["type"] == "batch"]
    assert deep[2]["baseOffset"] == 2 and [r["offset"] for r in deep[2]["records"]] == [2, 3]


def test_text_output_is_aligned(segment):
    lines = run(segment, expect=0).stdout.splitlines()
    table = [line for line in lines if line.startswith("  ") and "batches" not in line]
    assert len(table) == 5 and len({len(line) for line in table}) == 1
    assert table[0].split()[:3] == ["baseOffset", "lastOffset", "count"]


# --- problems are reported, never raised ------------------------------------------------------


def three_batches() -> list[bytes]:
    return [
        build_record_batch([SimpleRecord(f"v{i}".encode(), timestamp=NOW)], base_offset=i)
        for i in range(3)
    ]


def dump_log(tmp_path, data: bytes, *args, expect=1) -> tuple[list[dict], dict]:
    log = tmp_path / "bad-0" / "00000000000000000000.log"
    log.parent.mkdir(exist_ok=True)
    log.write_bytes(data)
    events = run_json(*args, log, expect=expect)
    return [e for e in events if e["type"] == "batch"], summaries(events)[log.name]


@pytest.mark.req("ERR-1", "ERR-3", "ERR-4")
def test_crc_failure_is_reported_and_the_dump_goes_on(tmp_path):
    raws = three_batches()
    bad = bytearray(raws[1])
    bad[-1] ^= 0xFF
    batches, summary = dump_log(tmp_path, raws[0] + bytes(bad) + raws[2])
    assert [b["crcValid"] for b in batches] == [True, False, True]
    assert summary["crcFailures"] == 1
    assert [(e["category"], e["position"], e["offset"]) for e in summary["errors"]] == [
        ("crc_mismatch", len(raws[0]), 1)
    ]


@pytest.mark.req("ERR-5")
def test_one_error_per_batch_in_err5_order(tmp_path):
    """A batch with a bad CRC and an unknown codec reports the CRC; fix the CRC and the codec
    comes first; records are only looked at after both."""
    raw = bytearray(three_batches()[0])
    struct.pack_into(">h", raw, 21, 5)  # codec id 5, CRC now stale
    _, summary = dump_log(tmp_path, bytes(raw), "--deep")
    assert [e["category"] for e in summary["errors"]] == ["crc_mismatch"]
    raw[17:21] = crc32c(bytes(raw[21:])).to_bytes(4, "big")
    batches, summary = dump_log(tmp_path, bytes(raw), "--deep")
    assert [e["category"] for e in summary["errors"]] == ["unsupported_compression"]
    assert batches[0]["compression"] == "unknown(5)" and batches[0]["records"] is None


def test_bad_records_in_deep_mode(tmp_path):
    raw = bytearray(three_batches()[0])
    raw[61] = 0x7E  # the record's length varint now overruns the batch; CRC fixed below
    raw[17:21] = crc32c(bytes(raw[21:])).to_bytes(4, "big")
    batches, summary = dump_log(tmp_path, bytes(raw) + three_batches()[1], "--deep")
    assert [b["records"] is None for b in batches] == [True, False]
    assert [(e["category"], e["position"], e["offset"]) for e in summary["errors"]] == [
        ("invalid_record", 0, 0)
    ]
    assert run_json(tmp_path / "bad-0", expect=0)  # the shallow dump does not read records


@pytest.mark.req("FRAME-6", "FRAME-3")
def test_bad_magic_is_stepped_over_but_a_bad_size_stops(tmp_path):
    raws = three_batches()
    bad = bytearray(raws[1])
    bad[16] = 7
    batches, summary = dump_log(tmp_path, raws[0] + bytes(bad) + raws[2])
    assert [b["baseOffset"] for b in batches] == [0, 2]
    assert [(e["category"], e["position"]) for e in summary["errors"]] == [
        ("bad_magic", len(raws[0]))
    ]
    assert (summary["validBytes"], summary["trailingBytes"]) == (3 * len(raws[0]), 0)

    batches, summary = dump_log(tmp_path, raws[0] + bytes(40) + raws[2])  # size field 0
    assert [b["baseOffset"] for b in batches] == [0]
    assert [(e["category"], e["position"]) for e in summary["errors"]] == [
        ("invalid_batch_size", len(raws[0]))
    ]
    assert (summary["validBytes"], summary["trailingBytes"]) == (
        len(raws[0]), 40 + len(raws[2])
    )  # fmt: skip


def test_no_traceback_on_garbage(tmp_path):
    for name in ("00000000000000000000.log", "00000000000000000000.index",
                 "00000000000000000000.timeindex", "00000000000000000000.txnindex",
                 "00000000000000000000.snapshot", "leader-epoch-checkpoint", "partition.metadata",
                 "meta.properties", "recovery-point-offset-checkpoint"):  # fmt: skip
        path = tmp_path / name
        path.write_bytes(bytes(range(256)) * 3)
        result = run("--json", "--deep", "--index-sanity-check", path)
        assert result.exit_code == 1, (name, result.output)
        assert summaries([json.loads(x) for x in result.stdout.splitlines()])[name]["errors"]


def test_unreadable_file_is_an_io_error(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.symlink_to(tmp_path / "nowhere")
    summary = summaries(run_json(tmp_path, expect=1))[log.name]
    assert summary["errors"] == [] and "No such file" in summary["ioErrors"][0]["message"]


# --- index files --------------------------------------------------------------------------


def test_index_entries_and_sanity_check(segment):
    events = run_json(segment.with_suffix(".index"), segment.with_suffix(".timeindex"))
    offsets = [(e["offset"], e["position"]) for e in events if e["type"] == "offset_index_entry"]
    times = [(e["timestamp"], e["offset"]) for e in events if e["type"] == "time_index_entry"]
    assert len(offsets) == len(times) == 3 and offsets[0][1] > 0
    checked = summaries(
        run_json("--index-sanity-check", segment.with_suffix(".index"),
                 segment.with_suffix(".timeindex"), expect=1)
    )  # fmt: skip
    assert checked["00000000000000000000.index"]["sanityCheck"] == "passed"
    # an untrimmed time index fails its own sanity check: the broker rebuilds it
    time_summary = checked["00000000000000000000.timeindex"]
    assert time_summary["sanityCheck"] == "failed"
    assert time_summary["errors"][0]["category"] == "corrupt_index"


@pytest.mark.req("OIDX-2")
def test_index_with_a_partial_entry(tmp_path, segment):
    path = segment.with_suffix(".index")
    path.write_bytes(path.read_bytes()[:27])
    summary = summaries(run_json(path, expect=1))[path.name]
    assert (summary["entries"], summary["trailingBytes"]) == (3, 3)
    assert [(e["category"], e["position"]) for e in summary["errors"]] == [("corrupt_index", 0)]


def test_verify_finds_an_index_that_points_inside_a_batch(segment):
    path = segment.with_suffix(".index")
    data = bytearray(path.read_bytes())
    struct.pack_into(">i", data, 4, struct.unpack_from(">i", data, 4)[0] + 1)
    path.write_bytes(bytes(data))
    summary = summaries(run_json("--verify-index-only", path, expect=1))[path.name]
    assert [
        (m["kind"], m["slot"], m["logValue"], m["allowedBy"]) for m in summary["mismatches"]
    ] == [("no_batch_at_position", 0, -1, None)]


def test_txn_index(tmp_path):
    path = tmp_path / "00000000000000000010.txnindex"
    txns = [AbortedTxn(7, 3, 12, 13), AbortedTxn(8, 11, 20, 21)]
    path.write_bytes(b"".join(index.encode_aborted_txn(t) for t in txns))
    checked = summaries(run_json("--index-sanity-check", path))[path.name]
    assert (checked["sanityCheck"], checked["entries"]) == ("passed", 2)
    events = run_json(path)
    assert [e for e in events if e["type"] == "txn_index_entry"][1] == {
        "file": str(path), "type": "txn_index_entry", "producerId": 8, "firstOffset": 11,
        "lastOffset": 20, "lastStableOffset": 21, "version": 0,
    }  # fmt: skip
    path.write_bytes(path.read_bytes() + b"\x01" + bytes(33) + b"\x00" * 5)
    summary = summaries(run_json(path, expect=1))[path.name]
    assert summary["trailingBytes"] == 5 and summary["entries"] == 2
    assert [e["category"] for e in summary["errors"]] == ["corrupt_index", "corrupt_index"]


# --- snapshots and text files -------------------------------------------------------------


def test_producer_snapshot_and_text_files(tmp_path):
    partition = tmp_path / "orders-0"
    partition.mkdir()
    entry = ProducerSnapshotEntry(1000, 2, 5, 40, 3, NOW, 1, -1)
    (partition / "00000000000000000041.snapshot").write_bytes(write_snapshot([entry]))
    (partition / "leader-epoch-checkpoint").write_bytes(
        write_leader_epoch_checkpoint([EpochEntry(0, 0), EpochEntry(4, 30)])
    )
    (partition / "partition.metadata").write_bytes(
        write_partition_metadata(PartitionMetadata(0, "fbWXoc3ESZOLSadDZCYFYQ"))
    )
    (tmp_path / "replication-offset-checkpoint").write_bytes(
        write_offset_checkpoint([TopicPartitionOffset("orders", 0, 41)])
    )
    (tmp_path / "meta.properties").write_text("#\nversion=1\nnode.id=3\ncluster.id=\n")
    (tmp_path / ".kafka_cleanshutdown").write_bytes(write_clean_shutdown(77))
    events = [e for e in run_json(tmp_path) if e["type"] != "summary"]
    by_type = {}
    for event in events:
        by_type.setdefault(event["type"], []).append(
            {k: v for k, v in event.items() if k not in ("file", "type")}
        )
    assert by_type == {
        "clean_shutdown": [{"version": 0, "brokerEpoch": 77, "readable": True}],
        "property": [{"key": "version", "value": "1"}, {"key": "node.id", "value": "3"},
                     {"key": "cluster.id", "value": ""}],
        "offset_checkpoint_entry": [{"topic": "orders", "partition": 0, "offset": 41}],
        "producer_snapshot_entry": [{
            "producerId": 1000, "producerEpoch": 2, "lastSequence": 5, "lastOffset": 40,
            "offsetDelta": 3, "timestamp": NOW, "coordinatorEpoch": 1,
            "currentTxnFirstOffset": -1, "firstSequence": 2,
        }],
        "leader_epoch_entry": [{"epoch": 0, "startOffset": 0}, {"epoch": 4, "startOffset": 30}],
        "partition_metadata": [{"version": 0, "topicId": "fbWXoc3ESZOLSadDZCYFYQ"}],
    }  # fmt: skip


@pytest.mark.req("CKPT-7", "ERR-3", "CLEAN-2")
def test_broken_text_files(tmp_path):
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n2\nfoo 0 1\n")
    (tmp_path / ".kafka_cleanshutdown").write_text("not json")
    summary = summaries(run_json(tmp_path, expect=1))
    error = summary["recovery-point-offset-checkpoint"]["errors"][0]
    assert (error["category"], error["line"], error["position"]) == ("corrupt_checkpoint", 2, 2)
    assert summary[".kafka_cleanshutdown"]["ok"]  # a marker counts whatever it holds


# --- walking directories, warnings and exit statuses ---------------------------------------------


def test_directories_are_walked_in_a_stable_order(tmp_path, segment):
    root = tmp_path
    for name in ("test-10", "test-2", "other.topic-0"):
        write_segment(root / name, three_batches(), base=0)
    write_segment(root / "test-2", [build_record_batch([SimpleRecord(b"x")], base_offset=100)],
                  base=100)  # fmt: skip
    (root / "test-2" / "00000000000000000100.snapshot").write_bytes(write_snapshot([]))
    (root / "recovery-point-offset-checkpoint").write_bytes(write_offset_checkpoint([]))
    (root / ".lock").write_bytes(b"")
    (root / "notes.txt").write_text("hello")
    result = run("--json", root, expect=0)
    files = [
        Path(e["file"]).relative_to(root).as_posix()
        for e in map(json.loads, result.stdout.splitlines())
        if e["type"] == "summary"
    ]
    segment_files = ["00000000000000000000.log", "00000000000000000000.index",
                     "00000000000000000000.timeindex"]  # fmt: skip
    assert files == [
        "recovery-point-offset-checkpoint",
        *(f"other.topic-0/{f}" for f in segment_files),
        *(f"test-0/{f}" for f in segment_files),
        *(f"test-2/{f}" for f in segment_files),
        "test-2/00000000000000000100.log", "test-2/00000000000000000100.index",
        "test-2/00000000000000000100.timeindex", "test-2/00000000000000000100.snapshot",
        *(f"test-10/{f}" for f in segment_files),
    ]  # fmt: skip
    assert "notes.txt" in result.stderr and ".lock" not in result.stderr


def test_exit_statuses(tmp_path, segment):
    assert run(tmp_path / "missing.log").exit_code == 2
    assert run().exit_code == 2
    unknown = tmp_path / "notes.txt"
    unknown.write_text("hello")
    # issue 16: a file named that dump cannot decode is a command that cannot run (the CLI
    # page says 2), with a hint; the other files named are still dumped
    result = run(unknown, segment, expect=2)
    assert f"cannot dump {unknown}: unknown files are not dumped (--type" in result.stderr
    assert "4 batches" in result.stdout
    assert run(segment, expect=0).exit_code == 0
    # found in a directory walk, an unknown file is only a warning
    (segment.parent / "notes.txt").write_text("hello")
    assert "ignoring" in run(segment.parent, expect=0).stderr


def test_progress_bar_for_large_files(segment, monkeypatch):
    import klogspec.progress as cli_progress

    monkeypatch.setattr(cli_progress, "PROGRESS_THRESHOLD", 100)
    assert run_json(segment) == run_json(segment)  # the bar goes to stderr, stdout unchanged


def test_klogspec_group_lists_dump():
    result = CliRunner().invoke(cli.main, ["--help"])
    assert result.exit_code == 0 and "dump" in result.output


# --- the real-broker corpus ---------------------------------------------------------------------


@pytest.mark.corpus
def test_dump_exits_0_on_every_corpus_file(corpus):
    """Every .log, index, snapshot, checkpoint, partition.metadata, meta.properties, KRaft
    .checkpoint, quorum-state and .kafka_cleanshutdown of the corpus, in one walk, in text and
    as JSON."""
    started = time.monotonic()
    text = run(corpus, expect=0)
    assert "Traceback" not in text.output
    events = run_json(corpus)
    kinds: dict[str, int] = {}
    for summary in (e for e in events if e["type"] == "summary"):
        assert summary["ok"] and not summary["errors"], summary
        assert set(summary) >= SUMMARY_FIELDS
        kinds[summary["kind"]] = kinds.get(summary["kind"], 0) + 1
    assert kinds == {
        "log": 629, "offset_index": 222, "time_index": 222, "producer_snapshot": 67,
        "kraft_snapshot": 14, "bootstrap_snapshot": 6, "leader_epoch_checkpoint": 559,
        "partition_metadata": 400, "recovery_point_checkpoint": 16,
        "replication_offset_checkpoint": 16, "log_start_offset_checkpoint": 15,
        "cleaner_offset_checkpoint": 16, "meta_properties": 16, "clean_shutdown": 4,
        "quorum_state": 6,
    }  # fmt: skip
    batches = sum(1 for e in events if e["type"] == "batch")
    assert batches == sum(s["batches"] or 0 for s in events if s["type"] == "summary")
    assert time.monotonic() - started < 60


@pytest.mark.corpus
def test_deep_dump_of_the_corpus(corpus):
    lines = run("--json", "--print-data", corpus, expect=0).stdout.splitlines()
    wanted = ('"type":"summary"', '"isControl":true')  # parse only what the test looks at
    events = [json.loads(line) for line in lines if any(w in line for w in wanted)]
    summary = [e for e in events if e["type"] == "summary"]
    assert all(s["ok"] for s in summary)
    gaps = {Path(s["file"]).parent.name: s["nonConsecutiveOffsets"] for s in summary
            if s.get("nonConsecutiveOffsets")}  # fmt: skip
    assert gaps == {"__consumer_offsets-39": [[4, 16]]}  # compacted: 4..17 in 3 records
    controls = [r["control"]["type"] for e in events if e["type"] == "batch" and e["isControl"]
                for r in e["records"]]  # fmt: skip
    assert controls.count("COMMIT") == 5
    assert controls.count("SNAPSHOT_HEADER") == controls.count("SNAPSHOT_FOOTER") == 20


MULTISEG = "kafka-3.x-3brokers-multiseg/tmp"


@pytest.mark.corpus
@pytest.mark.req("OIDX-7")
def test_follower_offset_index_entries_lie_beyond_the_batch_at_their_position(corpus):
    """SOURCES.md oddity 1: a follower indexes a fetched chunk of several batches with the
    chunk's last offset and start position; Kafka's check reports each such entry."""
    follower = corpus / MULTISEG / "kafka-logs-1/invoice-0"
    events = run_json("--verify-index-only", follower, expect=0)
    found = {name: [(m["kind"], m["slot"], m["indexValue"], m["logValue"], m["allowedBy"])
                    for m in s["mismatches"]]
             for name, s in summaries(events).items() if s["mismatches"]}  # fmt: skip
    beyond = "offset_beyond_batch"
    assert found == {
        "00000000000000000000.index": [
            (beyond, 1, 5664, 5152, "OIDX-7"), (beyond, 7, 9248, 8736, "OIDX-7"),
            (beyond, 15, 12509, 12460, "OIDX-7"), (beyond, 16, 12615, 12559, "OIDX-7"),
            (beyond, 27, 15273, 15200, "OIDX-7"), (beyond, 29, 15607, 15517, "OIDX-7"),
            (beyond, 49, 21248, 21205, "OIDX-7"), (beyond, 51, 22520, 22457, "OIDX-7"),
            (beyond, 55, 23393, 23359, "OIDX-7"), (beyond, 66, 25753, 25740, "OIDX-7"),
            (beyond, 84, 29350, 29340, "OIDX-7"),
        ],
        "00000000000000030626.index": [(beyond, 0, 60610, 36306, "OIDX-7")],
        "00000000000000060611.index": [(beyond, 0, 90866, 62594, "OIDX-7")],
    }  # fmt: skip
    broker0 = summaries(run_json("--verify-index-only", corpus / MULTISEG / "kafka-logs/invoice-0"))
    assert len(broker0["00000000000000000000.index"]["mismatches"]) == 16
    assert broker0["00000000000000030626.index"]["entries"] == 0  # oddity 2: 0-byte .index
    assert broker0["00000000000000030626.timeindex"]["mismatches"] == []  # lookup from 0


@pytest.mark.corpus
def test_leader_time_index_entries_point_inside_batches(corpus):
    """Not in SOURCES.md: the leader (broker 2) indexes the record that carries a batch's max
    timestamp, so most of its time-index offsets are not a batch's last offset; its followers
    index batch last offsets. Kafka's dumpTimeIndex reports these as offsets not found."""
    leader = summaries(
        run_json("--verify-index-only", corpus / MULTISEG / "kafka-logs-2/invoice-0")
    )
    counts = {name: [m["kind"] for m in s["mismatches"]] for name, s in leader.items()}
    assert {n: (len(k), set(k)) for n, k in counts.items() if k} == {
        "00000000000000000000.timeindex": (100, {"offset_inside_batch"}),
        "00000000000000030626.timeindex": (58, {"offset_inside_batch"}),
        "00000000000000060611.timeindex": (59, {"offset_inside_batch"}),
    }
    first = leader["00000000000000000000.timeindex"]["mismatches"][0]
    assert (first["indexValue"], first["logValue"], first["allowedBy"]) == (1175, 1177, "TIDX-2")


@pytest.mark.corpus
@pytest.mark.req("TIDX-9")
def test_time_index_entry_of_an_offset_removed_by_compaction(corpus):
    """SOURCES.md oddity 3: (1776190309898, 20) in a segment whose first batch is offset 23."""
    path = corpus / "kraft-metadata-multiseg/kafka-data/__consumer_offsets-13"
    path = path / "00000000000000000000.timeindex"
    summary = summaries(run_json("--verify-index-only", path, expect=0))[path.name]
    assert summary["mismatches"] == [
        {"kind": "offset_not_found", "slot": 0, "indexValue": 20, "logValue": 23,
         "allowedBy": "TIDX-9"}
    ]  # fmt: skip
    entries = [e for e in run_json(path) if e["type"] == "time_index_entry"]
    assert [(e["timestamp"], e["offset"]) for e in entries] == [(1776190309898, 20)]


@pytest.mark.corpus
def test_index_without_its_log_cannot_be_verified(corpus):
    """kraft-ksql-transactional's __cluster_metadata-0 index has no .log in the corpus."""
    path = corpus / "kraft-ksql-transactional/kafka-data/__cluster_metadata-0"
    path = path / "00000000000000000000.index"
    assert summaries(run_json(path))[path.name]["entries"] == 1081
    summary = summaries(run_json("--verify-index-only", path, expect=1))[path.name]
    assert summary["errors"] == [] and "cannot check against" in summary["ioErrors"][0]["message"]
