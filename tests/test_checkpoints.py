"""Text files of a log directory (reference_impl/formats/checkpoints.py) against Kafka's
OffsetCheckpointFile/LeaderEpochCheckpointFile, PartitionMetadataFile and
CleanShutdownFileHandler test cases, and every such file in the real-broker corpus."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, CorruptCheckpointError
from reference_impl.formats import checkpoints as ckpt
from reference_impl.formats.checkpoints import (
    CheckpointLineError,
    CleanShutdown,
    EpochEntry,
    PartitionMetadata,
    TopicPartitionOffset,
)
from reference_impl.formats.file_naming import FileKind, classify

OFFSETS = [TopicPartitionOffset("foo", 1, 5), TopicPartitionOffset("bar.baz-qux", 2, 2**40)]
EPOCHS = [EpochEntry(0, 0), EpochEntry(1, 9), EpochEntry(3, 10)]


def line_error(read, data: bytes | str) -> CheckpointLineError:
    with pytest.raises(CheckpointLineError) as caught:
        read(data, file="replication-offset-checkpoint")
    assert caught.value.category is Category.CORRUPT_CHECKPOINT
    assert caught.value.file == "replication-offset-checkpoint"
    assert caught.value.to_dict()["line"] == caught.value.line
    return caught.value


# --- the text checkpoint format -----------------------------------------------------------


@pytest.mark.req("CKPT-1", "CKPT-2", "CKPT-9")
def test_should_persist_and_overwrite_and_reload_file():
    """OffsetCheckpointFileWithFailureHandlerTest#shouldPersistAndOverwriteAndReloadFile."""
    data = ckpt.write_offset_checkpoint(OFFSETS)
    assert data == b"0\n2\nfoo 1 5\nbar.baz-qux 2 1099511627776\n"
    assert ckpt.read_offset_checkpoint(data) == OFFSETS
    overwritten = ckpt.write_offset_checkpoint(OFFSETS[:1])
    assert ckpt.read_offset_checkpoint(overwritten) == OFFSETS[:1]


@pytest.mark.req("CKPT-4")
@pytest.mark.parametrize("data", [b"", b"0", b"0\n"])
def test_should_return_empty_map_for_empty_file(data):
    """...#shouldReturnEmptyMapForEmptyFile, and a file holding only the version line."""
    assert ckpt.read_offset_checkpoint(data) == []
    assert ckpt.read_leader_epoch_checkpoint(data) == []


@pytest.mark.req("CKPT-5")
@pytest.mark.parametrize("version_line", ["1", "-1", "zero", " 0", "0 ", ""])
def test_should_throw_if_version_is_not_recognised(version_line):
    error = line_error(ckpt.read_offset_checkpoint, f"{version_line}\n0\n")
    assert (error.line, error.position) == (1, 0)


@pytest.mark.req("CKPT-9")
def test_should_handle_multiple_lines():
    """...#shouldHandleMultipleLines: many entries, fields split on whitespace runs."""
    entries = [TopicPartitionOffset(f"topic{i}", i, i * 1000) for i in range(100)]
    assert ckpt.read_offset_checkpoint(ckpt.write_offset_checkpoint(entries)) == entries
    assert ckpt.read_offset_checkpoint("0\n1\nfoo \t 1   5  \n") == [
        TopicPartitionOffset("foo", 1, 5)
    ]


@pytest.mark.req("CKPT-3")
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_ends(newline):
    text = newline.join(["0", "2", "foo 1 5", "bar.baz-qux 2 1099511627776"]) + newline
    assert ckpt.read_offset_checkpoint(text) == OFFSETS


@pytest.mark.req("CKPT-6", "CKPT-7")
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("0\n3\nfoo 1 5\n", 2),  # fewer entries than the count
        ("0\n0\nfoo 1 5\n", 2),  # more
        ("0\n-1\n", 2),  # a negative count
        ("0\nmany\nfoo 1 5\n", 2),
        ("0\n2147483648\n", 2),  # not an int32
    ],
)
def test_count_line(text, line):
    assert line_error(ckpt.read_offset_checkpoint, text).line == line


@pytest.mark.req("CKPT-9", "ERR-3")
@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (" foo 1 5", "a leading blank makes an empty first field"),
        ("foo 1", "two fields"),
        ("foo 1 5 6", "four fields"),
        ("", "a blank line is an entry, not an end marker"),
        ("foo one 5", "partition not an int"),
        ("foo 2147483648 5", "partition not an int32"),
        ("foo 1 5.0", "offset not a long"),
        ("foo 1 9223372036854775808", "offset not a long"),
    ],
)
def test_malformed_offset_entries(entry, why):
    text = f"0\n2\nbar 0 0\n{entry}\n"
    error = line_error(ckpt.read_offset_checkpoint, text)
    assert (error.line, error.position) == (4, len("0\n2\nbar 0 0\n")), why


@pytest.mark.req("CKPT-10")
def test_leader_epoch_checkpoint():
    data = ckpt.write_leader_epoch_checkpoint(EPOCHS)
    assert data == b"0\n3\n0 0\n1 9\n3 10\n"
    assert ckpt.read_leader_epoch_checkpoint(data) == EPOCHS
    for entry in ["1", "1 2 3", "-1 5", "1 -5", "x 5", "2147483648 0"]:
        line_error(ckpt.read_leader_epoch_checkpoint, f"0\n1\n{entry}\n")


def test_a_non_utf8_file_is_corrupt():
    with pytest.raises(CorruptCheckpointError) as caught:
        ckpt.read_offset_checkpoint(b"0\n1\nt\xff 0 1\n")
    assert caught.value.position == 5


# --- partition.metadata -------------------------------------------------------------------


@pytest.mark.req("PMETA-1")
def test_partition_metadata_round_trip():
    """PartitionMetadataFileTest#testRead: no newline after the topic id."""
    metadata = PartitionMetadata(0, "fbWXoc3ESZOLSadDZCYFYQ")
    data = ckpt.write_partition_metadata(metadata)
    assert data == b"version: 0\ntopic_id: fbWXoc3ESZOLSadDZCYFYQ"
    assert ckpt.read_partition_metadata(data) == metadata
    assert ckpt.read_partition_metadata(data + b"\n") == metadata
    assert ckpt.read_partition_metadata(data + b"\nanything: else\n") == metadata


@pytest.mark.req("PMETA-4")
def test_partition_metadata_accepts_higher_versions_and_whitespace_runs():
    assert (
        ckpt.read_partition_metadata("version:\t 3\ntopic_id:  AAAAAAAAAAAAAAAAAAAAAQ").version == 3
    )


@pytest.mark.req("PMETA-2", "PMETA-3", "PMETA-5", "PMETA-6")
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("version: 0", 2),  # PMETA-2
        ("version:0\ntopic_id: fbWXoc3ESZOLSadDZCYFYQ", 1),  # PMETA-2: ':' then whitespace
        ("Version: 0\ntopic_id: fbWXoc3ESZOLSadDZCYFYQ", 1),
        ("version: -1\ntopic_id: fbWXoc3ESZOLSadDZCYFYQ", 1),  # PMETA-3
        ("version: x\ntopic_id: fbWXoc3ESZOLSadDZCYFYQ", 1),
        ("version: 0\ntopic: fbWXoc3ESZOLSadDZCYFYQ", 2),
        ("version: 0\ntopic_id: fbWXoc3ESZOLSadDZCYFY", 2),  # PMETA-5: 21 characters
        ("version: 0\ntopic_id: fbWXoc3ESZOLSadDZCYF+Q", 2),  # not URL-safe
        ("version: 0\ntopic_id: 59e89b28-0084-46-5e-ba95-e812b7283840", 2),
        ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 2),  # PMETA-6: the zero Uuid
    ],
)
def test_invalid_partition_metadata(text, line):
    assert line_error(ckpt.read_partition_metadata, text).line == line


def test_uuid_text_form():
    """Kafka's Uuid: URL-safe base64 of 16 bytes, unpadded (Java's decoder takes '==')."""
    assert ckpt.format_uuid(bytes(15) + b"\x01") == "AAAAAAAAAAAAAAAAAAAAAQ"  # ONE_UUID
    assert ckpt.parse_uuid("AAAAAAAAAAAAAAAAAAAAAQ==") == bytes(15) + b"\x01"
    raw = bytes(range(250, 256)) + bytes(range(10))
    assert ckpt.parse_uuid(ckpt.format_uuid(raw)) == raw
    assert ckpt.format_uuid(b"\xfb\xff\xbf" * 5 + b"\x00") == "-_-_" * 5 + "AA"  # URL-safe


# --- .kafka_cleanshutdown ---------------------------------------------------------------


@pytest.mark.req("CLEAN-3")
def test_clean_shutdown_file_basic():
    """CleanShutdownFileHandlerTest#testCleanShutdownFileBasic."""
    data = ckpt.write_clean_shutdown(53326)
    assert data == b'{"version":0,"brokerEpoch":53326}'
    assert ckpt.read_clean_shutdown(data) == CleanShutdown(0, 53326)


@pytest.mark.req("CLEAN-4")
def test_clean_shutdown_can_parse_with_unknown_fields():
    """CleanShutdownFileHandlerTest#testCleanShutdownFileCanParseWithUnknownFields."""
    data = b'{"version":0,"brokerEpoch":10,"unknownField":"x"}'
    assert ckpt.read_clean_shutdown(data) == CleanShutdown(0, 10)


@pytest.mark.req("CLEAN-1", "CLEAN-2", "CLEAN-4")
@pytest.mark.parametrize(
    "data", [b"garbage", b"[1]", b'{"version":0}', b'{"version":0,"brokerEpoch":"7"}', b"\xff"]
)
def test_clean_shutdown_marker_counts_whatever_its_content(data):
    assert ckpt.read_clean_shutdown(data) == CleanShutdown(None, None, readable=False)


def test_empty_marker_of_older_kafka():
    assert ckpt.read_clean_shutdown(b"") == CleanShutdown(None, None, readable=True)


# --- meta.properties ----------------------------------------------------------------------


def test_meta_properties_as_kafka_writes_them():
    text = (
        "#\n#Mon Apr 13 08:19:15 GMT 2026\n"
        "cluster.id=\ndirectory.id=gIODMx0B20PHQLXVLoRD7w\nnode.id=1\nversion=1\n"
    )
    assert ckpt.read_meta_properties(text) == {
        "cluster.id": "",
        "directory.id": "gIODMx0B20PHQLXVLoRD7w",
        "node.id": "1",
        "version": "1",
    }


def test_java_properties_syntax():
    text = (
        "! bang comment\n  key1 = value one  \nkey2:v2\nkey3 v3\n"
        "key\\=4=a\\tb\\u0041\nlong=a\\\n    b\\\n  c\nbare\n"
    )
    assert ckpt.read_properties(text) == {
        "key1": "value one  ",
        "key2": "v2",
        "key3": "v3",
        "key=4": "a\tbA",
        "long": "abc",
        "bare": "",
    }


@pytest.mark.parametrize("text", ["broker.id=0\n", "version=one\n", "version=\n"])
def test_meta_properties_need_an_integer_version(text):
    with pytest.raises(CorruptCheckpointError):
        ckpt.read_meta_properties(text)


# --- the corpus -------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.req("CKPT-1", "CKPT-2", "CKPT-9", "CKPT-10", "PMETA-1", "CLEAN-3")
def test_every_corpus_text_file_reads_and_writes_back_byte_for_byte(corpus):
    counts: dict[FileKind, int] = {}
    for path in sorted(corpus.rglob("*")):
        kind = classify(path).kind
        data = path.read_bytes() if path.is_file() else b""
        if kind.is_offset_checkpoint:
            entries = ckpt.read_offset_checkpoint(data, file=str(path))
            assert not data or ckpt.write_offset_checkpoint(entries) == data
        elif kind is FileKind.LEADER_EPOCH_CHECKPOINT:
            entries = ckpt.read_leader_epoch_checkpoint(data, file=str(path))
            assert not data or ckpt.write_leader_epoch_checkpoint(entries) == data
        elif kind is FileKind.PARTITION_METADATA:
            assert ckpt.write_partition_metadata(ckpt.read_partition_metadata(data)) == data
        elif kind is FileKind.CLEAN_SHUTDOWN:
            marker = ckpt.read_clean_shutdown(data)
            assert marker.readable and (
                not data or ckpt.write_clean_shutdown(marker.broker_epoch) == data
            )
        elif kind is FileKind.META_PROPERTIES:
            assert ckpt.read_meta_properties(data)["version"] in ("0", "1")
        else:
            continue
        counts[kind] = counts.get(kind, 0) + 1
    assert counts == {
        FileKind.CLEANER_OFFSET_CHECKPOINT: 16,
        FileKind.LOG_START_OFFSET_CHECKPOINT: 15,
        FileKind.RECOVERY_POINT_CHECKPOINT: 16,
        FileKind.REPLICATION_OFFSET_CHECKPOINT: 16,
        FileKind.LEADER_EPOCH_CHECKPOINT: 559,
        FileKind.PARTITION_METADATA: 400,
        FileKind.CLEAN_SHUTDOWN: 4,
        FileKind.META_PROPERTIES: 16,
    }


@pytest.mark.corpus
def test_corpus_examples(corpus):
    epochs = corpus / "gzip-idempotent-epochs/data/lsx1-0/leader-epoch-checkpoint"
    assert ckpt.read_leader_epoch_checkpoint(epochs.read_bytes()) == [
        EpochEntry(0, 0), EpochEntry(1, 9), EpochEntry(3, 10),
        EpochEntry(5, 12), EpochEntry(6, 13), EpochEntry(7, 14),
    ]  # fmt: skip
    cleaner = corpus / "kafka-2.7-compacted-offsets/kafka-logs/cleaner-offset-checkpoint"
    cleaned = ckpt.read_offset_checkpoint(cleaner.read_bytes())
    assert {(e.partition, e.offset) for e in cleaned} == {(17, 1), (28, 2), (39, 18)}
    assert {e.topic for e in cleaned} == {"__consumer_offsets"}
    kraft = corpus / "snappy-kraft-nonzero-base/kafka-data"
    assert ckpt.read_meta_properties((kraft / "meta.properties").read_bytes())["cluster.id"] == (
        "universe-labs-cluster"
    )
    assert ckpt.read_clean_shutdown((kraft / ".kafka_cleanshutdown").read_bytes()) == CleanShutdown(
        0, 7118
    )
    metadata = kraft / "__cluster_metadata-0/partition.metadata"
    assert ckpt.read_partition_metadata(metadata.read_bytes()).topic_id == "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.mark.corpus
@pytest.mark.req("CKPT-11")
def test_corpus_leader_epochs_strictly_increase(corpus):
    paths = sorted(corpus.rglob("leader-epoch-checkpoint"))
    assert len(paths) == 559
    for path in paths:
        entries = ckpt.read_leader_epoch_checkpoint(path.read_bytes())
        for earlier, later in zip(entries, entries[1:], strict=False):
            assert earlier.epoch < later.epoch and earlier.start_offset < later.start_offset
