"""``klogspec verify``: clean partitions give no findings, each kind of damage gives exactly
its rule, the real-broker corpus gives its documented findings, and memory stays flat on a
big segment."""

from __future__ import annotations

import json
import pickle
import random
import shutil
import struct
import time
import tomllib
import tracemalloc
from collections import Counter
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from klogspec import cli
from klogspec.verify.cli import verify as verify_command
from klogspec.verify.files import partition_files
from klogspec.verify.findings import Finding, Severity, rule_for_error
from klogspec.verify.partition import verify_partition
from klogspec.verify.run import VerifyStats, discover, verify_paths
from klogspec.verify.segment import SegmentFiles, verify_segment
from reference_impl.errors import Category, CorruptRecordError
from reference_impl.formats.checkpoints import (
    EpochEntry,
    PartitionMetadata,
    TopicPartitionOffset,
    write_clean_shutdown,
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
    write_partition_metadata,
)
from reference_impl.formats.index_entries import (
    AbortedTxn,
    OffsetPosition,
    TimestampOffset,
    encode_aborted_txn,
    encode_offset_index_entry,
    encode_time_index_entry,
)
from reference_impl.formats.producer_snapshot import ProducerSnapshotEntry, write_snapshot
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.unified_log import Log
from reference_impl.records import (
    Compression,
    ControlRecordType,
    SimpleRecord,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
    read_batch,
)
from reference_impl.records.batch import set_base_offset
from reference_impl.records.checksums import crc32c

req = pytest.mark.req
REQUIREMENTS = Path(__file__).parent.parent / "spec" / "requirements.yaml"
NOW = 1_700_000_000_000
INTERVAL = 300  # index.interval.bytes of the generated segments: several entries each
TOPIC_ID = "bQyJ_ZYaSA6dEv8UbXmzWA"
CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4,
          Compression.ZSTD]  # fmt: skip


# --- building partition directories the way a broker writes them ------------------------


def data_batch(offset: int, n: int = 2, *, ts: int | None = None, codec=Compression.NONE, **kw):
    ts = NOW + offset * 10 if ts is None else ts
    records = [
        SimpleRecord(key=b"k%d" % i, value=b"value-%d" % (offset + i) * 4, timestamp=ts + i)
        for i in range(n)
    ]
    return build_record_batch(records, base_offset=offset, compression=codec, **kw)


def segment_batches(base: int, count: int = 12) -> list[bytes]:
    """``count`` batches of 2 records from ``base``, cycling through every codec."""
    return [data_batch(base + 2 * i, codec=CODECS[i % len(CODECS)]) for i in range(count)]


def transaction(offset: int, *, abort: bool) -> list[bytes]:
    """A transactional data batch and its marker: offsets offset..offset+2."""
    data = data_batch(
        offset, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True
    )
    marker = build_control_batch(
        ControlRecordType.ABORT if abort else ControlRecordType.COMMIT,
        producer_id=7, producer_epoch=0, base_offset=offset + 2, timestamp=NOW + offset * 10,
    )  # fmt: skip
    return [data, marker]


def write_segment(
    directory: Path,
    base: int,
    batches: list[bytes],
    *,
    active: bool,
    interval: int = INTERVAL,
    aborted: list[AbortedTxn] = (),
) -> None:
    """The .log, .index and .timeindex a leader appending one batch at a time writes (the
    append rule of facts §2.6), with the roll's time-index entry unless ``active``."""
    prefix = directory / f"{base:020d}"
    index, time_index = bytearray(), bytearray()
    since, position, max_ts, max_ts_offset, last_ts = 0, 0, -1, base, -1
    for raw in batches:
        batch = read_batch(raw)
        if batch.max_timestamp > max_ts:
            max_ts, max_ts_offset = batch.max_timestamp, batch.last_offset
        if since > interval:
            index += encode_offset_index_entry(OffsetPosition(batch.last_offset, position), base)
            if max_ts > last_ts:
                time_index += encode_time_index_entry(TimestampOffset(max_ts, max_ts_offset), base)
                last_ts = max_ts
        since = 0 if since > interval else since
        since += len(raw)
        position += len(raw)
    if not active and max_ts > last_ts:
        time_index += encode_time_index_entry(TimestampOffset(max_ts, max_ts_offset), base)
    prefix.with_suffix(".log").write_bytes(b"".join(batches))
    prefix.with_suffix(".index").write_bytes(bytes(index))
    prefix.with_suffix(".timeindex").write_bytes(bytes(time_index))
    if aborted:
        prefix.with_suffix(".txnindex").write_bytes(b"".join(map(encode_aborted_txn, aborted)))


def build_partition(
    log_dir: Path,
    name: str = "orders-0",
    segments: list[tuple[int, list[bytes]]] | None = None,
    *,
    interval: int = INTERVAL,
    checkpoints: bool = True,
) -> Path:
    """A partition directory (in ``log_dir``, with its root checkpoints unless told not to):
    by default 3 segments, every codec, a committed and an aborted transaction."""
    if segments is None:
        segments = [
            (0, segment_batches(0)),
            (24, segment_batches(24) + transaction(48, abort=False)),
            (51, segment_batches(51, 6) + transaction(63, abort=True) + segment_batches(66, 3)),
        ]
    directory = log_dir / name
    directory.mkdir(parents=True)
    for i, (base, batches) in enumerate(segments):
        aborted = [AbortedTxn(7, 63, 65, 63)] if any(b == 65 for b in _lasts(batches)) else []
        active = i == len(segments) - 1
        write_segment(directory, base, batches, active=active, interval=interval, aborted=aborted)
    leo = _leo(segments)
    (directory / "leader-epoch-checkpoint").write_bytes(
        write_leader_epoch_checkpoint([EpochEntry(0, 0)])
    )
    (directory / "partition.metadata").write_bytes(
        write_partition_metadata(PartitionMetadata(0, TOPIC_ID))
    )
    (directory / f"{leo:020d}.snapshot").write_bytes(
        write_snapshot([ProducerSnapshotEntry(7, 0, 0, 65, 0, NOW, 0, -1)])
    )
    if checkpoints:
        topic, partition = name.rsplit("-", 1)
        entry = [TopicPartitionOffset(topic, int(partition), leo)]
        for checkpoint in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
            (log_dir / checkpoint).write_bytes(write_offset_checkpoint(entry))
        (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    return directory


def _lasts(batches: list[bytes]) -> list[int]:
    return [read_batch(raw).last_offset for raw in batches]


def _leo(segments) -> int:
    base, batches = segments[-1]
    return _lasts(batches)[-1] + 1 if batches else base


def findings(*paths, deep: bool = False) -> list[Finding]:
    return list(verify_paths(paths, deep=deep, warn=lambda message: None))


def rules(*paths, deep: bool = False) -> Counter:
    """(rule, severity) -> count."""
    return Counter((f.rule, f.severity.value) for f in findings(*paths, deep=deep))


def run(*args, expect: int | None = None):
    result = CliRunner().invoke(verify_command, [*map(str, args)], catch_exceptions=False)
    if expect is not None:
        assert result.exit_code == expect, result.output
    return result


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "kafka-logs"


@pytest.fixture
def partition(log_dir: Path) -> Path:
    return build_partition(log_dir)


def seg(partition: Path, base: int, suffix: str = ".log") -> Path:
    return partition / f"{base:020d}{suffix}"


# --- clean directories ---------------------------------------------------------------


@pytest.mark.parametrize("deep", [False, True])
def test_a_clean_partition_has_no_findings(log_dir, partition, deep):
    assert findings(log_dir, deep=deep) == []
    assert findings(partition, deep=deep) == []  # the partition alone, its log dir read


def test_the_reference_log_writes_clean_directories(tmp_path):
    log_dir = tmp_path / "logs"
    clock = ManualClock(NOW)
    log = Log.open(log_dir / "orders-3", LogConfig(segment_bytes=4000, index_interval_bytes=300),
                   clock, topic_id=TOPIC_ID)  # fmt: skip
    for i in range(120):
        log.append_as_leader(
            data_batch(0, 3, ts=clock.milliseconds(), codec=CODECS[i % 5]), i // 40
        )
        clock.sleep(7)
    assert log.number_of_segments > 3
    # open: the active segment's indexes are preallocated; only the unflushed tail shows
    assert rules(log_dir, deep=True) == Counter({("PART-5", "info"): 1})
    log.close()
    # a closed log leaves the clean-shutdown marker (LOAD-3), which verify notes
    assert rules(log_dir, deep=True) == Counter({("CLEAN-1", "info"): 1})


@req("LEGACY-4", "LEGACY-19")
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_segments_are_clean(log_dir, magic):
    records = [SimpleRecord(value=b"m%d" % i, timestamp=NOW + i) for i in range(30)]
    batches = [
        build_legacy_message_set(records[:10], magic=magic, base_offset=0),
        build_legacy_message_set(records[10:], magic=magic, base_offset=10,
                                 compression=Compression.GZIP),
    ]  # fmt: skip
    build_partition(log_dir, "old-0", [(0, batches)], checkpoints=False)
    assert findings(log_dir) == [] and findings(log_dir, deep=True) == []


@req("OIDX-7", "TIDX-2", "INDEX-2")
def test_follower_indexes_leader_quirk_and_preallocated_indexes_are_accepted(log_dir):
    batches = segment_batches(0, 10)
    build_partition(log_dir, "f-0", [(0, batches), (20, segment_batches(20, 3))],
                    checkpoints=False)  # fmt: skip
    directory = log_dir / "f-0"
    positions = [0]
    for raw in batches:
        positions.append(positions[-1] + len(raw))
    last = read_batch(batches[-1])
    # a follower's entry: a chunk of batches 3..9 appended at once, indexed at its start
    seg(directory, 0, ".index").write_bytes(
        encode_offset_index_entry(OffsetPosition(last.last_offset, positions[3]), 0)
    )
    # a Kafka 3.x leader's entry: the offset of the record carrying the max timestamp, inside
    # its batch, then the roll entry
    inside = read_batch(batches[4])
    seg(directory, 0, ".timeindex").write_bytes(
        encode_time_index_entry(TimestampOffset(inside.max_timestamp, inside.base_offset + 1), 0)
        + encode_time_index_entry(TimestampOffset(last.max_timestamp, last.last_offset), 0)
    )
    # the active segment's indexes preallocated (INDEX-2), as after a crash
    for suffix, size in ((".index", 8), (".timeindex", 12)):
        with open(seg(directory, 20, suffix), "ab") as handle:
            handle.write(bytes(size * 4096))
    assert findings(log_dir) == []


# --- damage to a .log ----------------------------------------------------------------


@req("BATCH-4")
def test_a_bit_flip_in_a_batch_is_a_crc_mismatch(log_dir, partition):
    log = seg(partition, 24)
    data = bytearray(log.read_bytes())
    first = read_batch(bytes(data))
    data[first.size_in_bytes + 70] ^= 0x10  # inside the second batch's records
    log.write_bytes(bytes(data))
    finding, unseen = findings(log_dir)
    assert (finding.rule, finding.severity, finding.file) == ("BATCH-4", Severity.ERROR, str(log))
    assert (finding.position, finding.offset) == (first.size_in_bytes, 26)
    # issue 20: below the recovery point, a broker will not notice it; verify says so
    assert (unseen.rule, unseen.severity) == ("RECOV-1", Severity.INFO)
    assert log.name in unseen.message and "will not notice it" in unseen.message
    assert "klogspec recover --from-offset 0" in unseen.message


@req("FRAME-9", "FRAME-4")
def test_a_torn_last_batch_is_a_partial_tail(log_dir):
    directory = build_partition(log_dir, interval=10**9, checkpoints=False)
    log = seg(directory, 51)
    data = log.read_bytes()
    log.write_bytes(data[:-30])
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity) == ("FRAME-9", Severity.WARNING)  # active segment
    assert finding.position == len(data) - len(read_batch_at_end(data))


def read_batch_at_end(data: bytes) -> bytes:
    position = 0
    while True:
        size = struct.unpack_from(">i", data, position + 8)[0] + 12
        if position + size == len(data):
            return data[position:]
        position += size


@req("FRAME-8")
@pytest.mark.parametrize("zeros", [5, 17, 18, 4096])
@pytest.mark.parametrize("base, severity", [(51, "warning"), (24, "error")])
def test_a_zero_filled_tail_is_reported_as_one(log_dir, partition, zeros, base, severity):
    with open(seg(partition, base), "ab") as handle:
        handle.write(bytes(zeros))
    finding, *unseen = findings(log_dir)
    assert (finding.rule, finding.severity.value) == ("FRAME-8", severity)
    assert finding.position == seg(partition, base).stat().st_size - zeros
    # a rolled segment below the recovery point: named as what a broker will not notice
    assert [f.rule for f in unseen] == (["RECOV-1"] if base == 24 else [])


@req("FRAME-3", "FRAME-6", "FRAME-9")
@pytest.mark.parametrize(
    "garbage, rule",
    [
        (b"\xde\xad\xbe\xef" * 2 + struct.pack(">i", 5) + b"\x01" * 20, "FRAME-3"),
        (bytes(8) + struct.pack(">i", 20) + bytes(4) + b"\x07" + b"\x55" * 15, "FRAME-6"),
        (b"\xde\xad\xbe\xef" * 3, "FRAME-9"),
        (bytes(8) + struct.pack(">i", 5000) + b"\x02" * 40, "FRAME-9"),
    ],
)
def test_garbage_after_the_last_batch(log_dir, partition, garbage, rule):
    log = seg(partition, 51)
    end = log.stat().st_size
    with open(log, "ab") as handle:
        handle.write(garbage)
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.position) == (rule, end)


@req("FRAME-13")
def test_offsets_going_back_inside_a_segment(log_dir):
    batches = segment_batches(0, 4) + [data_batch(3)]
    build_partition(log_dir, "o-0", [(0, batches)], checkpoints=False, interval=10**9)
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.offset) == ("FRAME-13", 3)


@req("FRAME-14", "FRAME-12")
def test_a_file_name_that_is_not_the_base_offset(log_dir):
    directory = build_partition(log_dir, "n-0", [(0, segment_batches(0, 5))], checkpoints=False)
    for file in directory.glob("00000000000000000000.*"):
        file.rename(directory / file.name.replace("00000000000000000000", "00000000000000000001"))
    for suffix in (".index", ".timeindex"):
        seg(directory, 1, suffix).write_bytes(b"")  # entries relative to 0 would mislead
    assert rules(log_dir) == Counter({("FRAME-14", "error"): 1})  # the first batch is 0-1
    for file in directory.glob("00000000000000000001.*"):
        file.rename(directory / file.name.replace("00000000000000000001", "00000000000000000100"))
    assert rules(log_dir) == Counter({("FRAME-12", "error"): 5})  # every batch below the base


@req("FRAME-11")
def test_max_message_bytes_is_optional(partition):
    files = partition_files(partition).segments[0]
    assert verify_segment(files).findings == ()
    result = verify_segment(files, max_message_bytes=100)
    assert {f.rule for f in result.findings} == {"FRAME-11"}


@req("REC-10", "VARINT-5", "BATCH-10")
def test_record_damage_under_a_valid_crc_needs_deep(log_dir):
    raw = bytearray(data_batch(0, 3))
    struct.pack_into(">i", raw, 57, 4)  # recordsCount 4, 3 present
    struct.pack_into(">I", raw, 17, crc32c(memoryview(raw)[21:]))
    build_partition(log_dir, "d-0", [(0, [bytes(raw)])], checkpoints=False)
    assert findings(log_dir) == []
    assert rules(log_dir, deep=True) == Counter({("REC-10", "error"): 1})


# --- damage to indexes ---------------------------------------------------------------


@req("OIDX-5")
def test_an_index_entry_pointing_mid_batch(log_dir, partition):
    index = seg(partition, 0, ".index")
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, 12, struct.unpack_from(">i", data, 12)[0] + 1)  # entry 1
    index.write_bytes(bytes(data))
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity, finding.position) == ("OIDX-5", Severity.ERROR, 8)


@req("OIDX-5")
def test_an_index_entry_whose_offset_an_earlier_batch_holds(log_dir, partition):
    index = seg(partition, 0, ".index")
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 0)[0] + 1)  # entry 1
    index.write_bytes(bytes(data))
    assert rules(log_dir) == Counter({("OIDX-5", "error"): 1})


@req("OIDX-2", "TIDX-5")
@pytest.mark.parametrize("suffix, rule", [(".index", "OIDX-2"), (".timeindex", "TIDX-5")])
def test_an_index_truncated_mid_entry(log_dir, partition, suffix, rule):
    index = seg(partition, 51, suffix)  # the active segment: no roll entry lost
    index.write_bytes(index.read_bytes()[:-3])
    assert rules(log_dir) == Counter({(rule, "error"): 1})


@req("TIDX-3")
def test_a_time_index_going_backwards(log_dir, partition):
    index = seg(partition, 0, ".timeindex")
    data = bytearray(index.read_bytes())
    assert len(data) >= 36
    struct.pack_into(">q", data, 12, struct.unpack_from(">q", data, 0)[0] - 1)  # entry 1
    index.write_bytes(bytes(data))
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.position) == ("TIDX-3", 12)


@req("TIDX-2")
def test_a_time_index_entry_below_its_batches_timestamps(log_dir, partition):
    index = seg(partition, 0, ".timeindex")
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, 8, struct.unpack_from(">i", data, 20)[0])  # entry 0 -> offset 1's
    index.write_bytes(bytes(data))
    assert rules(log_dir) == Counter({("TIDX-2", "error"): 1})


@req("OIDX-8", "TIDX-10")
def test_an_untrimmed_index_of_a_rolled_segment(log_dir, partition):
    for suffix, size in ((".index", 8), (".timeindex", 12)):
        with open(seg(partition, 0, suffix), "ab") as handle:
            handle.write(bytes(size * 100))
    assert rules(log_dir) == Counter({("OIDX-8", "warning"): 1, ("TIDX-10", "warning"): 1})


@req("OIDX-4", "OIDX-10")
def test_non_zero_bytes_after_the_stop_slot(log_dir, partition):
    index = seg(partition, 0, ".index")
    index.write_bytes(index.read_bytes() + bytes(8) + struct.pack(">ii", 0, 77))
    assert rules(log_dir) == Counter({("OIDX-4", "error"): 1})


@req("TIDX-4")
def test_a_rolled_segment_without_its_roll_entry(log_dir, partition):
    index = seg(partition, 0, ".timeindex")
    index.write_bytes(index.read_bytes()[:-12])
    assert rules(log_dir) == Counter({("TIDX-4", "warning"): 1})


@req("TXN-1", "TXN-3", "TXN-4", "TXN-7")
def test_transaction_index_damage(log_dir, partition):
    txn = seg(partition, 51, ".txnindex")
    entry = txn.read_bytes()
    txn.write_bytes(b"\x01" + entry[1:])
    assert rules(log_dir) == Counter({("TXN-3", "error"): 1, ("TXN-1", "warning"): 1})
    txn.write_bytes(entry + entry[:10])
    assert rules(log_dir) == Counter({("TXN-4", "warning"): 1})
    txn.write_bytes(entry + entry)
    assert rules(log_dir) == Counter({("TXN-7", "error"): 1})
    txn.unlink()  # the ABORT marker of the active segment has no entry (recovery rebuilds it)
    assert rules(log_dir) == Counter({("TXN-1", "warning"): 1})


@req("TXN-6")
def test_a_transaction_entry_below_the_base_offset(log_dir, partition):
    seg(partition, 51, ".txnindex").write_bytes(
        encode_aborted_txn(AbortedTxn(7, 40, 50, 40))
        + encode_aborted_txn(AbortedTxn(7, 63, 65, 63))
    )
    assert rules(log_dir) == Counter({("TXN-6", "error"): 1})


# --- damage to the partition -----------------------------------------------------------


@req("PART-3")
def test_a_missing_log_with_its_index_left(log_dir):
    directory = build_partition(log_dir, checkpoints=False)
    seg(directory, 51).unlink()
    found = findings(log_dir)
    assert {(f.rule, f.severity.value, Path(f.file).name) for f in found} == {
        ("PART-3", "warning", f"{51:020d}{suffix}")
        for suffix in (".index", ".timeindex", ".txnindex")  # fmt: skip
    }


@req("PART-4", "NAME-4")
@pytest.mark.parametrize("marker", [".swap", ".cleaned", ".deleted"])
def test_a_stale_temporary_file(log_dir, partition, marker):
    shutil.copy(seg(partition, 24), partition / f"{24:020d}.log{marker}")
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity, finding.position) == ("PART-4", Severity.WARNING, 0)


@req("PART-2")
@pytest.mark.parametrize("name, severity", [("orders-0", "warning"),
                                            ("__consumer_offsets-3", "info")])  # fmt: skip
def test_a_gap_between_segments(log_dir, name, severity):
    build_partition(log_dir, name, [(0, segment_batches(0, 3)), (16, segment_batches(16, 3))])
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity.value, finding.offset) == ("PART-2", severity, 6)


@req("PART-2")
def test_a_gap_between_batches_of_a_segment(log_dir):
    batches = segment_batches(0, 3) + segment_batches(10, 2)
    build_partition(log_dir, "g-0", [(0, batches)])
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity.value, finding.offset) == ("PART-2", "warning", 6)
    assert finding.position == sum(len(b) for b in batches[:3])


@req("PART-2")
def test_a_gap_explained_by_compaction_inside_the_partition(log_dir):
    compacted = build_record_batch(
        [SimpleRecord(value=b"a", timestamp=NOW, offset_delta=0),
         SimpleRecord(value=b"b", timestamp=NOW, offset_delta=4)], base_offset=2,
    )  # fmt: skip
    build_partition(log_dir, "t-0", [(0, [compacted]), (10, segment_batches(10, 2))])
    assert rules(log_dir) == Counter({("PART-2", "info"): 2})  # before 2, then 7 to 9


@req("PART-1")
def test_offsets_decreasing_across_segments(log_dir):
    build_partition(log_dir, "x-0", [(0, segment_batches(0, 10)), (10, segment_batches(10, 5))])
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity, finding.offset) == ("PART-1", Severity.ERROR, 10)


@req("NAME-1", "NAME-2")
def test_segment_names(log_dir, partition):
    shutil.copy(seg(partition, 51, ".snapshot" if False else ".log"), partition / "51x.log")
    assert rules(log_dir) == Counter({("NAME-2", "error"): 1})
    (partition / "51x.log").unlink()
    for file in partition.glob(f"{51:020d}.*"):
        file.rename(partition / file.name.replace(f"{51:020d}", "51"))
    assert rules(log_dir) == Counter({("NAME-1", "warning"): 4})


@req("DIR-5", "DIR-6", "DIR-2")
def test_partition_directory_names(log_dir, partition):
    partition.rename(log_dir / "orders-x")
    assert rules(log_dir) == Counter({("DIR-5", "error"): 1})
    (log_dir / "orders-x").rename(log_dir / "orders-0.0123456789abcdef0123456789abcdef-delete")
    assert rules(log_dir) == Counter({("DIR-2", "info"): 1})


# --- checkpoints -----------------------------------------------------------------------


@req("CKPT-7", "CKPT-5", "CKPT-10", "CKPT-11")
@pytest.mark.parametrize(
    "content, rule, severity",
    [
        (b"0\n2\n0 0\n", "CKPT-7", "error"),
        (b"1\n0\n", "CKPT-5", "error"),
        (b"0\n1\n0 x\n", "CKPT-10", "error"),
        (b"0\n2\n3 0\n2 10\n", "CKPT-11", "warning"),
    ],
)
def test_a_bad_leader_epoch_checkpoint(log_dir, partition, content, rule, severity):
    (partition / "leader-epoch-checkpoint").write_bytes(content)
    (finding,) = findings(log_dir)
    assert (finding.rule, finding.severity.value) == (rule, severity)


@req("CKPT-9", "CKPT-6")
@pytest.mark.parametrize("content, rule", [(b"0\n1\norders 0\n", "CKPT-9"), (b"0\n-1\n", "CKPT-6")])
def test_a_bad_offset_checkpoint(log_dir, partition, content, rule):
    (log_dir / "replication-offset-checkpoint").write_bytes(content)
    (finding,) = findings(log_dir)
    assert (finding.rule, Path(finding.file).name) == (rule, "replication-offset-checkpoint")


@req("PMETA-6", "PMETA-2")
@pytest.mark.parametrize("content, rule", [(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
                                            "PMETA-6"), (b"version 0", "PMETA-2")])  # fmt: skip
def test_a_bad_partition_metadata(log_dir, partition, content, rule):
    (partition / "partition.metadata").write_bytes(content)
    assert rules(log_dir) == Counter({(rule, "error"): 1})


@req("SNAP-4", "SNAP-8")
def test_a_bad_producer_snapshot(log_dir, partition):
    (snapshot,) = partition.glob("*.snapshot")
    data = bytearray(snapshot.read_bytes())
    data[20] ^= 1
    snapshot.write_bytes(bytes(data))
    assert rules(log_dir) == Counter({("SNAP-4", "error"): 1})
    data[20] ^= 1
    data += b"\x00\x00"
    struct.pack_into(">I", data, 2, crc32c(memoryview(data)[6:]))
    snapshot.write_bytes(bytes(data))
    assert rules(log_dir) == Counter({("SNAP-8", "warning"): 1})


@req("PART-5", "PART-6", "PART-7")
def test_checkpoints_ahead_of_the_log(log_dir, partition):
    def checkpoint(name: str, offset: int) -> None:
        entry = [TopicPartitionOffset("orders", 0, offset)]
        (log_dir / name).write_bytes(write_offset_checkpoint(entry))

    checkpoint("recovery-point-offset-checkpoint", 100)
    checkpoint("log-start-offset-checkpoint", 100)
    (partition / "leader-epoch-checkpoint").write_bytes(
        write_leader_epoch_checkpoint([EpochEntry(0, 0), EpochEntry(3, 72), EpochEntry(4, 73)])
    )
    assert rules(log_dir) == Counter(
        {("PART-5", "warning"): 1, ("PART-6", "warning"): 1, ("PART-7", "warning"): 1}
    )  # an epoch may start at the LEO (72), not above it
    checkpoint("recovery-point-offset-checkpoint", 51)
    checkpoint("log-start-offset-checkpoint", 3)
    (partition / "leader-epoch-checkpoint").write_bytes(write_leader_epoch_checkpoint([]))
    found = {f.rule: f for f in findings(log_dir)}
    assert {r: f.severity.value for r, f in found.items()} == {"PART-5": "info", "PART-6": "info"}
    assert found["PART-5"].position == 4 and found["PART-5"].offset == 51  # the entry's line


@req("CLEAN-1", "CLEAN-2")
def test_the_clean_shutdown_marker_is_info(log_dir, partition):
    (log_dir / ".kafka_cleanshutdown").write_bytes(write_clean_shutdown(7))
    assert rules(log_dir) == Counter({("CLEAN-1", "info"): 1})
    (log_dir / ".kafka_cleanshutdown").write_bytes(b"not json")
    assert rules(log_dir) == Counter({("CLEAN-1", "info"): 1})


# --- findings, rules, the Spark contract -------------------------------------------------


def test_random_damage_never_crashes_and_cites_known_rules(tmp_path):
    """Bit flips, cuts, zero and random tails in any file of a partition: verify reports
    findings (nearly always some), never a traceback, and only requirement IDs that exist."""
    known = {e["id"] for e in yaml.safe_load(REQUIREMENTS.read_text())["requirements"]}
    clean = build_partition(tmp_path / "clean")
    rng = random.Random(4)
    silent = 0
    for case in range(60):
        log_dir = tmp_path / f"case{case}"
        shutil.copytree(clean.parent, log_dir)
        files = sorted(p for p in (log_dir / clean.name).iterdir() if p.stat().st_size)
        target = rng.choice(files)
        data = bytearray(target.read_bytes())
        damage = case % 4
        if damage == 0:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif damage == 1:
            del data[rng.randrange(len(data)) :]
        else:
            data += bytes(rng.randrange(1, 99)) if damage == 2 else rng.randbytes(99)
        target.write_bytes(bytes(data))
        found = findings(log_dir, deep=bool(case % 2))
        assert {f.rule for f in found} <= known
        silent += not found
        shutil.rmtree(log_dir)
    assert silent < 10  # flips in fields no rule covers (a leader epoch) go unnoticed


def test_findings_and_summaries_are_picklable(partition):
    files = partition_files(partition)
    results = [verify_segment(unit) for unit in pickle.loads(pickle.dumps(files)).units()]
    assert pickle.loads(pickle.dumps(results)) == results
    summaries = [r.summary for r in results]
    assert [s.next_offset for s in summaries] == [24, 51, 72]
    assert verify_partition(files, summaries) == []
    finding = Finding("FRAME-9", Severity.WARNING, "f", 1, None, "m")
    assert list(finding.to_dict()) == ["rule", "severity", "file", "position", "offset", "message"]
    assert Finding.from_dict(json.loads(json.dumps(finding.to_dict()))) == finding


@req("ERR-5")
@pytest.mark.parametrize(
    "category, magic, in_records, rule",
    [
        (Category.CRC_MISMATCH, 2, False, "BATCH-4"), (Category.CRC_MISMATCH, 1, False, "LEGACY-4"),
        (Category.CRC_MISMATCH, 0, True, "LEGACY-19"), (Category.INVALID_BATCH_SIZE, None, False,
        "FRAME-3"), (Category.INVALID_BATCH_SIZE, 2, False, "BATCH-2"),
        (Category.UNSUPPORTED_COMPRESSION, 2, False, "BATCH-10"),
        (Category.OFFSET_OVERFLOW, 2, False, "FRAME-12"),
    ],
)  # fmt: skip
def test_reader_errors_map_to_rules(category, magic, in_records, rule):
    exc = CorruptRecordError(category, "x")
    assert rule_for_error(exc, magic=magic, in_records=in_records) == rule


def test_findings_per_rule_are_capped(log_dir, partition):
    index = seg(partition, 0, ".index")
    entries = [encode_offset_index_entry(OffsetPosition(1 + i, 1 + i), 0) for i in range(300)]
    index.write_bytes(b"".join(entries))
    found = [f for f in findings(log_dir) if f.rule == "OIDX-5"]
    assert len(found) == 101 and found[-1].message.startswith("... and ")


# --- the command ---------------------------------------------------------------------------


def test_the_command_is_registered_as_a_plugin():
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"][cli.COMMAND_GROUP]
    assert declared["verify"] == "klogspec.verify.cli:verify"
    installed = {ep.name: ep.value for ep in entry_points(group=cli.COMMAND_GROUP)}
    if "verify" not in installed:
        pytest.skip("the installed metadata predates verify: run pip install -e .")
    assert cli.main.get_command(None, "verify") is verify_command


def test_json_lines_and_exit_statuses(log_dir, partition):
    result = run("--json", log_dir, expect=0)
    *lines, summary = [json.loads(line) for line in result.output.splitlines()]
    assert lines == [] and summary["type"] == "summary" and summary["exitStatus"] == 0
    assert summary["segments"] == 3 and summary["partitions"] == 1
    shutil.copy(seg(partition, 24), partition / f"{24:020d}.log.swap")
    result = run("--json", log_dir, expect=1)
    finding, summary = [json.loads(line) for line in result.output.splitlines()]
    assert set(finding) == {"rule", "severity", "file", "position", "offset", "message"}
    assert summary["findings"] == {"error": 0, "warning": 1, "info": 0}
    run("--fail-on", "error", log_dir, expect=0)
    (log_dir / ".kafka_cleanshutdown").write_bytes(b"")
    (partition / f"{24:020d}.log.swap").unlink()
    run(log_dir, expect=0)  # info findings never fail


def test_the_table_groups_findings_by_file(log_dir, partition):
    shutil.copy(seg(partition, 24), partition / f"{24:020d}.log.swap")
    result = run(log_dir, expect=1)
    assert f"{24:020d}.log.swap" in result.output and "PART-4" in result.output
    assert "1 warning" in result.output


def test_could_not_run(tmp_path):
    assert run(tmp_path / "missing").exit_code == 2
    (tmp_path / "empty").mkdir()
    assert run(tmp_path / "empty").exit_code == 2


def test_an_unreadable_file_is_exit_status_2(log_dir, partition, monkeypatch):
    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    # the readable walk and the compiled one (klogspec/verify/_compiled_walk.py) open the
    # .log with the same open_regular
    monkeypatch.setattr("klogspec.verify.segment.open_regular", refuse)
    monkeypatch.setattr("klogspec.verify._compiled_walk.open_regular", refuse)
    result = run(log_dir, expect=2)
    assert "Permission denied" in result.output


def test_discovery_order_is_stable(tmp_path):
    for root in ("b", "a"):
        for name in ("t-10", "t-2", "s-0"):
            build_partition(tmp_path / root / "logs", name, [(0, segment_batches(0, 2))])
    plans = discover([tmp_path])
    assert [Path(p.path).parent.name for p in plans] == ["a", "b"]
    assert [Path(p.path).name for p in plans[0].partitions] == ["s-0", "t-2", "t-10"]


# --- the real-broker corpus --------------------------------------------------------------

# Every set's findings as (rule, severity): count. Only kraft-ksql-transactional
# (SOURCES.md oddity 11: __cluster_metadata-0 indexes whose .log was not copied) and
# kraft-3.5.0-and-ksql-txn fail. The latter is not in SOURCES.md: its
# kafka_data/__consumer_offsets-29 has a 0-byte .log while its leader-epoch-checkpoint has
# epochs starting at offsets 2 and 4 (and replication-offset-checkpoint a high watermark of
# 5): the copy lost that log's data, which verify reports (PART-7). Each __cluster_metadata-0
# with a snapshot says which one a restart loads (KRAFT-4); no snapshot of the corpus is
# partial, scheduled for deletion, below its log's start or badly framed (KRAFT-1 to KRAFT-3).
CORPUS = {
    "gzip-idempotent-epochs": (0, {("PART-5", "info"): 1}),
    "gzip-v2-kafkajs": (0, {("PART-5", "info"): 3}),
    "kafka-0.10.1-magic1": (0, {("PART-5", "info"): 4}),
    "kafka-2.7-compacted-offsets": (0, {("PART-5", "info"): 2, ("PART-2", "info"): 3}),
    "kafka-2018-offsets-index": (0, {("CLEAN-1", "info"): 1}),
    "kafka-3.x-3brokers-multiseg": (0, {("PART-5", "info"): 3}),
    "kafkalite-v0": (0, {}),
    "kraft-3.5.0-and-ksql-txn": (1, {("CLEAN-1", "info"): 1, ("PART-5", "info"): 7,
                                     ("PART-6", "info"): 2, ("PART-7", "warning"): 2,
                                     ("KRAFT-4", "info"): 2}),
    "kraft-ksql-transactional": (1, {("CLEAN-1", "info"): 1, ("PART-3", "warning"): 2,
                                     ("KRAFT-4", "info"): 1}),
    "kraft-metadata-multiseg": (0, {("TIDX-9", "info"): 1, ("PART-2", "info"): 1,
                                    ("PART-5", "info"): 2, ("KRAFT-4", "info"): 1}),
    "kraft-snapshots-idempotent": (0, {("PART-5", "info"): 3, ("KRAFT-4", "info"): 1}),
    "lz4-confluent-metrics": (0, {("PART-5", "info"): 3}),
    "snappy-kraft-nonzero-base": (0, {("CLEAN-1", "info"): 1}),
    "snappy-v2": (0, {("PART-5", "info"): 2}),
}  # fmt: skip


@pytest.fixture(scope="module")
def corpus_findings(corpus) -> dict[str, list[dict]]:
    """Each set's findings through the command's JSON output, files relative to the set."""
    out = {}
    for name in sorted(CORPUS):
        result = run("--json", corpus / name)
        *lines, summary = [json.loads(line) for line in result.output.splitlines()]
        assert result.exit_code == summary["exitStatus"], result.output
        for line in lines:
            line["file"] = str(Path(line["file"]).relative_to(corpus / name))
        out[name] = (result.exit_code, lines)
    return out


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_sets_give_their_documented_findings(corpus_findings, name):
    status, lines = corpus_findings[name]
    assert (status, Counter((f["rule"], f["severity"]) for f in lines)) == (
        CORPUS[name][0], Counter(CORPUS[name][1]),
    )  # fmt: skip


def _where(corpus_findings, name: str, rule: str) -> set:
    return {(f["file"], f["offset"]) for f in corpus_findings[name][1] if f["rule"] == rule}


@req("OIDX-7", "TIDX-9", "PART-2", "PART-3", "PART-5", "PART-6", "PART-7")
def test_corpus_oddities(corpus_findings):
    # 1, 2: follower indexes, a 0-byte .index beside a .timeindex: nothing to report
    assert corpus_findings["kafka-3.x-3brokers-multiseg"][1] == [
        f for f in corpus_findings["kafka-3.x-3brokers-multiseg"][1] if f["rule"] == "PART-5"
    ]
    # 3: a time-index entry whose offset compaction removed
    assert _where(corpus_findings, "kraft-metadata-multiseg", "TIDX-9") == {
        ("kafka-data/__consumer_offsets-13/00000000000000000000.timeindex", 20)
    }
    # 4: compacted segments whose first batch is above their base offset, and offsets 5 to
    # 15 missing between the batches of __consumer_offsets-39
    assert _where(corpus_findings, "kafka-2.7-compacted-offsets", "PART-2") == {
        ("kafka-logs/__consumer_offsets-28/00000000000000000000.log", 1),
        ("kafka-logs/__consumer_offsets-39/00000000000000000000.log", 4),
        ("kafka-logs/__consumer_offsets-39/00000000000000000000.log", 5),
    }
    # 6: log start offset 5 above the first offset present (DeleteRecords)
    assert {offset for _, offset in _where(corpus_findings, "kraft-3.5.0-and-ksql-txn",
                                           "PART-6")} == {5}  # fmt: skip
    # 7: recovery point behind the log end offset (90867 on all three brokers)
    assert {o for _, o in _where(corpus_findings, "kafka-3.x-3brokers-multiseg", "PART-5")} == {
        90867
    }
    # 11: index files without their .log
    assert _where(corpus_findings, "kraft-ksql-transactional", "PART-3") == {
        (f"kafka-data/__cluster_metadata-0/00000000000000000000{suffix}", None)
        for suffix in (".index", ".timeindex")
    }
    # not in SOURCES.md: a leader-epoch checkpoint ahead of a 0-byte log
    assert _where(corpus_findings, "kraft-3.5.0-and-ksql-txn", "PART-7") == {
        ("kafka_data/__consumer_offsets-29/leader-epoch-checkpoint", 2),
        ("kafka_data/__consumer_offsets-29/leader-epoch-checkpoint", 4),
    }


def test_deep_verification_of_the_corpus_finds_nothing_more(corpus):
    stats = VerifyStats()
    shallow = Counter((f.rule, f.severity) for f in verify_paths([corpus], stats=stats))
    deep = Counter((f.rule, f.severity) for f in verify_paths([corpus], deep=True))
    assert deep == shallow and stats.segments > 600


# --- memory ------------------------------------------------------------------------------


def test_a_256_mib_segment_is_verified_in_bounded_memory(tmp_path):
    """Batches written in chunks (one template, base offsets patched: they are outside the
    CRC), an index by the append rule; verify must not hold the segment in memory."""
    template = data_batch(0, 40, ts=NOW)  # ~2.6 KiB
    per_chunk = (1 << 20) // len(template)
    directory = tmp_path / "big-0"
    directory.mkdir()
    log, index = directory / f"{0:020d}.log", bytearray()
    offset = position = 0
    with open(log, "wb") as handle:
        for _ in range(256):
            chunk = bytearray()
            for _ in range(per_chunk):
                if offset and offset % 1600 == 0:
                    index += encode_offset_index_entry(OffsetPosition(offset + 39, position), 0)
                chunk += set_base_offset(template, offset)
                offset, position = offset + 40, position + len(template)
            handle.write(chunk)
    (directory / f"{0:020d}.index").write_bytes(bytes(index))
    size = log.stat().st_size
    assert size > 250 << 20
    files = SegmentFiles(str(log), 0, offset_index=str(directory / f"{0:020d}.index"),
                         active=True)  # fmt: skip
    tracemalloc.start()
    try:
        started = time.perf_counter()
        result = verify_segment(files)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        shutil.rmtree(directory)
    assert result.findings == () and result.summary.last_offset == offset - 1
    assert peak < 100 << 20, f"peak {peak >> 20} MiB"
    print(f"256 MiB segment: {size / elapsed / 1e6:.0f} MB/s, peak {peak >> 20} MiB")
