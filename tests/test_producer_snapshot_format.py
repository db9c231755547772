"""The producer-state snapshot codec (reference_impl/formats/producer_snapshot.py) against Kafka's
ProducerStateManagerTest format cases (testReadWriteSnapshot, testLoadFrom{Empty,Truncated,
Corrupt}SnapshotFile) and every snapshot in the real-broker corpus."""

from __future__ import annotations

import struct

import pytest

from reference_impl.errors import Category, CorruptSnapshotError
from reference_impl.formats.producer_snapshot import (
    SNAPSHOT_ENTRY_SIZE,
    ProducerSnapshotEntry,
    read_snapshot,
    snapshot_trailing_bytes,
    write_snapshot,
)
from reference_impl.records.checksums import crc32c

TRANSACTIONAL = ProducerSnapshotEntry(
    producer_id=4001,
    producer_epoch=3,
    last_sequence=11,
    last_offset=23,
    offset_delta=2,
    timestamp=1670068129797,
    coordinator_epoch=7,
    current_txn_first_offset=21,
)
NO_METADATA = ProducerSnapshotEntry(producer_id=2000, producer_epoch=0)


def corrupt(data: bytes) -> CorruptSnapshotError:
    with pytest.raises(CorruptSnapshotError) as caught:
        read_snapshot(data, file="00000000000000000038.snapshot")
    assert caught.value.category is Category.CORRUPT_SNAPSHOT
    assert caught.value.position == 0  # every snapshot error concerns the whole file (ERR-3)
    assert caught.value.file == "00000000000000000038.snapshot"
    return caught.value


@pytest.mark.req("SNAP-1", "SNAP-3", "SNAP-8")
def test_empty_snapshot_is_ten_bytes():
    data = write_snapshot([])
    assert data == b"\x00\x01" + struct.pack(">I", crc32c(b"\x00" * 4)) + b"\x00" * 4
    assert read_snapshot(data) == []


@pytest.mark.req("SNAP-1", "SNAP-3", "SNAP-8")
def test_read_write_snapshot():
    """ProducerStateManagerTest#testReadWriteSnapshot."""
    entries = [TRANSACTIONAL, NO_METADATA]
    data = write_snapshot(entries)
    assert len(data) == 10 + 2 * SNAPSHOT_ENTRY_SIZE and SNAPSHOT_ENTRY_SIZE == 46
    assert read_snapshot(data) == entries
    assert struct.unpack_from(">I", data, 2)[0] == crc32c(data[6:])


@pytest.mark.req("SNAP-1")
def test_entry_layout():
    data = write_snapshot([TRANSACTIONAL])
    entry = data[10:]
    assert struct.unpack(">q", entry[0:8])[0] == 4001  # producerId
    assert struct.unpack(">h", entry[8:10])[0] == 3  # epoch
    assert struct.unpack(">i", entry[10:14])[0] == 11  # lastSequence
    assert struct.unpack(">q", entry[14:22])[0] == 23  # lastOffset
    assert struct.unpack(">i", entry[22:26])[0] == 2  # offsetDelta
    assert struct.unpack(">q", entry[26:34])[0] == 1670068129797  # timestamp
    assert struct.unpack(">i", entry[34:38])[0] == 7  # coordinatorEpoch
    assert struct.unpack(">q", entry[38:46])[0] == 21  # currentTxnFirstOffset


@pytest.mark.req("SNAP-5")
def test_load_from_empty_snapshot_file():
    """ProducerStateManagerTest#testLoadFromEmptySnapshotFile: 0 bytes is corrupt."""
    corrupt(b"")


@pytest.mark.req("SNAP-5")
@pytest.mark.parametrize("cut", [1, 5, 46, 47])
def test_load_from_truncated_snapshot_file(cut):
    """ProducerStateManagerTest#testLoadFromTruncatedSnapshotFile."""
    corrupt(write_snapshot([TRANSACTIONAL, NO_METADATA])[:-cut])


@pytest.mark.req("SNAP-4")
@pytest.mark.parametrize("position", [2, 6, 10, 55])
def test_load_from_corrupt_snapshot_file(position):
    """ProducerStateManagerTest#testLoadFromCorruptSnapshotFile: any flipped byte from the CRC
    on is caught by the CRC-32C."""
    data = bytearray(write_snapshot([TRANSACTIONAL]))
    data[position] ^= 0x01
    error = corrupt(bytes(data))
    assert "CRC" in error.message or "entry count" in error.message


@pytest.mark.req("SNAP-2")
@pytest.mark.parametrize("version", [0, 2, -1])
def test_only_version_1_exists(version):
    data = struct.pack(">h", version) + write_snapshot([NO_METADATA])[2:]
    assert "version" in corrupt(data).message


@pytest.mark.req("SNAP-5")
def test_negative_or_oversized_entry_count():
    def with_count(count: int) -> bytes:
        body = struct.pack(">i", count) + write_snapshot([NO_METADATA])[10:]
        return struct.pack(">hI", 1, crc32c(body)) + body

    assert read_snapshot(with_count(1)) == [NO_METADATA]
    corrupt(with_count(-1))
    corrupt(with_count(2))


def test_structure_is_checked_before_the_version_and_the_crc():
    """Kafka parses the whole struct first, then the version, then the CRC."""
    truncated_v2 = struct.pack(">hIi", 2, 0, 1) + b"\x00" * 10
    assert "entry count" in corrupt(truncated_v2).message
    assert "version" in corrupt(struct.pack(">hIi", 2, 0, 0)).message


def test_bytes_after_the_entries_are_read_past():
    """Covered by the CRC, so Kafka accepts them; no Kafka writer produces them (SNAP-8)."""
    body = write_snapshot([NO_METADATA])[6:] + b"\xab\xcd"
    data = struct.pack(">hI", 1, crc32c(body)) + body
    assert read_snapshot(data) == [NO_METADATA]
    assert snapshot_trailing_bytes(data) == 2
    assert snapshot_trailing_bytes(write_snapshot([NO_METADATA])) == 0


@pytest.mark.req("SNAP-6", "SNAP-7")
def test_batch_metadata_and_ongoing_transaction():
    assert TRANSACTIONAL.has_batch_metadata and TRANSACTIONAL.has_ongoing_transaction
    assert TRANSACTIONAL.first_sequence == 9
    assert not NO_METADATA.has_batch_metadata and not NO_METADATA.has_ongoing_transaction
    assert NO_METADATA.first_sequence is None
    wrapped = ProducerSnapshotEntry(1, 0, last_sequence=1, last_offset=10, offset_delta=3)
    assert wrapped.first_sequence == 2**31 - 2  # BatchMetadata.firstSeq wraps below 0


@pytest.mark.corpus
@pytest.mark.req("SNAP-1", "SNAP-3", "SNAP-8")
def test_every_corpus_snapshot_reads_and_writes_back_byte_for_byte(corpus):
    paths = sorted(corpus.rglob("*.snapshot"))
    assert len(paths) == 67
    with_entries = {}
    for path in paths:
        data = path.read_bytes()
        entries = read_snapshot(data, file=str(path))
        assert write_snapshot(entries) == data
        if entries:
            with_entries[path.relative_to(corpus).as_posix()] = entries
    assert {k: len(v) for k, v in with_entries.items()} == {
        "kafka-2.7-compacted-offsets/kafka-logs/myTopic-0/00000000000000000038.snapshot": 3,
        "kraft-ksql-transactional/kafka-data/_confluent-ksql-default__command_topic-0/"
        "00000000000000000002.snapshot": 1,
        "kraft-snapshots-idempotent/kafka-data/input-topic-0/00000000000000000009.snapshot": 5,
    }
    transactional = next(v for k, v in with_entries.items() if "command_topic" in k)[0]
    assert (transactional.producer_id, transactional.coordinator_epoch) == (0, 0)
    assert not transactional.has_ongoing_transaction  # its COMMIT marker is in the log
    idempotent = with_entries[
        "kafka-2.7-compacted-offsets/kafka-logs/myTopic-0/00000000000000000038.snapshot"
    ]
    assert [e.producer_id for e in idempotent] == [4001, 4002, 4003]
    assert [e.first_sequence for e in idempotent] == [9, 0, 0]
