"""File and directory naming: reference_impl/formats/file_naming.py against Kafka's LocalLogTest cases,
LogFileUtils and Snapshots naming, and every name in the real-broker corpus."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reference_impl.errors import Category, InvalidFileNameError
from reference_impl.formats.file_naming import (
    DirKind,
    FileKind,
    PartitionDirName,
    classify,
    filename_prefix_from_offset,
    kraft_snapshot_file_name,
    kraft_snapshot_id,
    log_dir_name,
    log_dir_name_with_suffix,
    log_file_name,
    offset_from_file_name,
    offset_index_file_name,
    parse_partition_dir_name,
    producer_snapshot_file_name,
    time_index_file_name,
    txn_index_file_name,
)

UUID32 = "0123456789abcdef0123456789abcdef"


# --- segment file names ---------------------------------------------------------------------


@pytest.mark.req("NAME-1")
@pytest.mark.parametrize(
    ("offset", "prefix"),
    [
        (0, "00000000000000000000"),
        (2147483650, "00000000002147483650"),
        (2**63 - 1, "9223372036854775807".rjust(20, "0")),
        (10**20, "100000000000000000000"),  # 21 digits: padded to at least 20, never cut
    ],
)
def test_prefix_is_the_offset_zero_padded_to_at_least_20_digits(offset, prefix):
    assert filename_prefix_from_offset(offset) == prefix


def test_negative_offsets_have_no_file_name():
    with pytest.raises(ValueError):
        filename_prefix_from_offset(-1)


@pytest.mark.req("NAME-1", "NAME-4", "NAME-5")
def test_segment_file_names_share_the_prefix():
    assert log_file_name(38) == "00000000000000000038.log"
    assert offset_index_file_name(38) == "00000000000000000038.index"
    assert time_index_file_name(38) == "00000000000000000038.timeindex"
    assert txn_index_file_name(38) == "00000000000000000038.txnindex"
    assert producer_snapshot_file_name(38) == "00000000000000000038.snapshot"
    assert log_file_name(38, ".deleted") == "00000000000000000038.log.deleted"
    assert time_index_file_name(0, ".swap") == "00000000000000000000.timeindex.swap"


@pytest.mark.req("NAME-7")
def test_kraft_snapshot_name_as_in_the_corpus():
    assert kraft_snapshot_file_name(17073, 4) == "00000000000000017073-0000000004.checkpoint"


@pytest.mark.req("NAME-2")
def test_offset_from_file_name_kafka_local_log_test():
    """LocalLogTest#testOffsetFromFile, plus prefixes of other widths and markers."""
    for name in (log_file_name, offset_index_file_name, time_index_file_name):
        assert offset_from_file_name(name(23423423)) == 23423423
    assert offset_from_file_name("00000000000000000000.log.deleted") == 0
    assert offset_from_file_name("5.log") == 5
    assert offset_from_file_name("000000000000000000000000042.index") == 42


@pytest.mark.req("NAME-2", "NAME-3")
@pytest.mark.parametrize(
    "name", ["abc.log", ".log", "+5.log", "-5.log", " 5.log", "1_0.log", "9223372036854775808.log"]
)
def test_offset_prefix_must_be_unsigned_decimal_within_int64(name):
    with pytest.raises(InvalidFileNameError) as caught:
        offset_from_file_name(name)
    assert caught.value.category is Category.INVALID_FILE_NAME


@pytest.mark.req("NAME-8")
def test_kraft_snapshot_id_is_read_by_position():
    assert kraft_snapshot_id("00000000000000078270-0000000035.checkpoint") == (78270, 35)
    with pytest.raises(InvalidFileNameError):
        kraft_snapshot_id("000000000000000782x0-0000000035.checkpoint")
    with pytest.raises(InvalidFileNameError):
        kraft_snapshot_id("foo.checkpoint")


# --- classify ---------------------------------------------------------------------------------


@pytest.mark.req("NAME-4", "NAME-6", "NAME-9")
@pytest.mark.parametrize(
    ("name", "kind", "base_offset", "marker"),
    [
        ("00000000000000000000.log", FileKind.LOG, 0, None),
        ("00000000000000021236.index", FileKind.OFFSET_INDEX, 21236, None),
        ("00000000000000021236.timeindex", FileKind.TIME_INDEX, 21236, None),
        ("00000000000000000007.txnindex", FileKind.TXN_INDEX, 7, None),
        ("00000000000000000009.snapshot", FileKind.PRODUCER_SNAPSHOT, 9, None),
        ("00000000000000000009.log.deleted", FileKind.LOG, 9, "deleted"),
        ("00000000000000000009.index.cleaned", FileKind.OFFSET_INDEX, 9, "cleaned"),
        ("00000000000000000009.timeindex.swap", FileKind.TIME_INDEX, 9, "swap"),
        ("00000000000000000009.snapshot.deleted", FileKind.PRODUCER_SNAPSHOT, 9, "deleted"),
        ("abc.log", FileKind.LOG, None, None),  # a .log whose name does not parse (NAME-2)
        ("-5.log", FileKind.LOG, None, None),
        ("00000000000000017073-0000000004.checkpoint", FileKind.KRAFT_SNAPSHOT, 17073, None),
        (
            "00000000000000017073-0000000004.checkpoint.deleted",
            FileKind.KRAFT_SNAPSHOT,
            17073,
            "deleted",
        ),
        (
            "00000000000000017073-0000000004-123456.checkpoint.part",
            FileKind.KRAFT_SNAPSHOT,
            17073,
            "part",
        ),
        ("bootstrap.checkpoint", FileKind.BOOTSTRAP_SNAPSHOT, None, None),
        ("recovery-point-offset-checkpoint", FileKind.RECOVERY_POINT_CHECKPOINT, None, None),
        ("log-start-offset-checkpoint", FileKind.LOG_START_OFFSET_CHECKPOINT, None, None),
        ("replication-offset-checkpoint", FileKind.REPLICATION_OFFSET_CHECKPOINT, None, None),
        ("cleaner-offset-checkpoint", FileKind.CLEANER_OFFSET_CHECKPOINT, None, None),
        ("leader-epoch-checkpoint", FileKind.LEADER_EPOCH_CHECKPOINT, None, None),
        ("partition.metadata", FileKind.PARTITION_METADATA, None, None),
        ("meta.properties", FileKind.META_PROPERTIES, None, None),
        (".kafka_cleanshutdown", FileKind.CLEAN_SHUTDOWN, None, None),
        (".lock", FileKind.LOCK, None, None),
        ("quorum-state", FileKind.QUORUM_STATE, None, None),
        ("00000000000000000000.log.tmp", FileKind.UNKNOWN, None, None),
        ("00000000000000000000.foo", FileKind.UNKNOWN, None, None),
        ("partition.metadata.tmp", FileKind.UNKNOWN, None, None),
        ("SOURCES.md", FileKind.UNKNOWN, None, None),
    ],
)
def test_classify(name, kind, base_offset, marker):
    info = classify(Path("some/dir") / name)
    assert (info.kind, info.base_offset, info.marker, info.name) == (
        kind,
        base_offset,
        marker,
        name,
    )


def test_classify_kraft_snapshot_epoch():
    assert classify("00000000000000078270-0000000035.checkpoint").epoch == 35


def test_batch_files_are_logs_and_kraft_snapshots():
    assert {k for k in FileKind if k.holds_batches} == {
        FileKind.LOG,
        FileKind.KRAFT_SNAPSHOT,
        FileKind.BOOTSTRAP_SNAPSHOT,
    }


# --- partition directories (LocalLogTest#testParseTopicPartitionName*) -----------------------


@pytest.mark.req("DIR-1", "DIR-5")
def test_parse_topic_partition_name():
    assert parse_partition_dir_name("test_topic-143") == PartitionDirName("test_topic", 143)


@pytest.mark.req("DIR-2", "DIR-4")
def test_parse_topic_partition_name_with_period_for_deleted_topic():
    """KAFKA-5232: a topic with '.' and '-' in a -delete name."""
    name = log_dir_name_with_suffix("foo.bar-testtopic", 42, DirKind.DELETE, UUID32)
    parsed = parse_partition_dir_name(name)
    assert (parsed.topic, parsed.partition, parsed.kind) == (
        "foo.bar-testtopic",
        42,
        DirKind.DELETE,
    )
    assert parsed.unique_id == UUID32


@pytest.mark.req("DIR-3", "DIR-4", "DIR-5")
@pytest.mark.parametrize(
    "name",
    [
        "",  # ForEmptyName
        "test_topic1999",  # ForMissingSeparator
        "test_topic1999.-delete",
        "-1999",  # ForMissingTopic
        f"-1999.{UUID32}-delete",
        "test_topic-",  # ForMissingPartition
        "test_topic-.-delete",
        "test_topic-1999a",  # ForInvalidPartition
        "test_topic1999a.-delete",
        "non_kafka_dir",  # ForExistingInvalidDir
        "non_kafka_dir-delete",
        "test_topic-2147483648",  # not an int32
        "my topic-0.abc-stray",  # \S+ does not match a space
        "foo-1.-future",
    ],
)
def test_invalid_partition_dir_names(name):
    with pytest.raises(InvalidFileNameError) as caught:
        parse_partition_dir_name(name)
    assert caught.value.category is Category.INVALID_FILE_NAME


@pytest.mark.req("DIR-2", "DIR-4")
@pytest.mark.parametrize("kind", [DirKind.FUTURE, DirKind.STRAY, DirKind.DELETE])
def test_suffixed_dir_names_round_trip(kind):
    name = log_dir_name_with_suffix("orders.v2-eu", 7, kind, UUID32)
    assert name == f"orders.v2-eu-7.{UUID32}-{kind.value}"
    assert parse_partition_dir_name(name) == PartitionDirName("orders.v2-eu", 7, kind, UUID32)


@pytest.mark.req("DIR-2")
def test_log_delete_dir_name_is_capped_at_255():
    """LocalLogTest#testLogDeleteDirName: 'n' + 248 'o's, partition 5."""
    topic = "n" + "o" * 248
    name = log_dir_name_with_suffix(topic, 5, DirKind.DELETE, UUID32)
    assert len(name) == 255
    assert re.fullmatch(r"n[o]{212}-5\.[0-9a-z]{32}-delete", name)
    assert len(log_dir_name_with_suffix(topic, 5, DirKind.STRAY, UUID32)) == 255
    future = log_dir_name_with_suffix(topic, 5, DirKind.FUTURE, UUID32)
    assert future.startswith(topic + "-5.") and len(future) > 255  # future names are not cut
    assert parse_partition_dir_name(name).topic == "n" + "o" * 212  # only what was kept of it


def test_plain_dir_name():
    assert log_dir_name("__consumer_offsets", 49) == "__consumer_offsets-49"
    assert parse_partition_dir_name("__consumer_offsets-49").partition == 49
    assert parse_partition_dir_name("topic--1") == PartitionDirName("topic-", 1)


# --- the corpus -------------------------------------------------------------------------------


@pytest.mark.corpus
def test_every_corpus_file_is_known_except_the_corpus_notes(corpus):
    unknown = {
        p.relative_to(corpus).as_posix()
        for p in corpus.rglob("*")
        if p.is_file() and classify(p).kind is FileKind.UNKNOWN
    }
    notes = {p for p in unknown if p.endswith((".md", ".txt")) or "/golden/" in p}
    assert unknown == notes


@pytest.mark.corpus
@pytest.mark.req("DIR-1", "DIR-5", "NAME-1")
def test_every_corpus_partition_dir_parses_and_every_segment_name_is_canonical(corpus):
    partition_dirs = {p.parent for p in corpus.rglob("*.log")} | {
        p.parent for p in corpus.rglob("partition.metadata")
    }
    assert len(partition_dirs) > 500
    for directory in partition_dirs:
        parsed = parse_partition_dir_name(directory.name)
        assert log_dir_name(parsed.topic, parsed.partition) == directory.name
    for path in corpus.rglob("*"):
        info = classify(path)
        if info.kind in (FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX):
            assert path.name.split(".")[0] == f"{info.base_offset:020d}"
        if info.kind is FileKind.KRAFT_SNAPSHOT:
            assert path.name == kraft_snapshot_file_name(info.base_offset, info.epoch)


@pytest.mark.corpus
@pytest.mark.req("DIR-6")
def test_every_subdirectory_of_a_corpus_log_dir_is_a_partition_dir(corpus):
    log_dirs = [p.parent for p in corpus.rglob("meta.properties")]
    assert len(log_dirs) == 16
    subdirs = [d for log_dir in log_dirs for d in log_dir.iterdir() if d.is_dir()]
    assert len(subdirs) == 612
    for directory in subdirs:
        parse_partition_dir_name(directory.name)
    root_files = [f for d in log_dirs for f in d.iterdir() if f.is_file()]
    assert all(classify(f).kind is not FileKind.UNKNOWN for f in root_files)
