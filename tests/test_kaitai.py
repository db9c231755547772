"""The Kaitai Struct specs (kaitai/*.ksy) as a second, independent reading of the formats.

The parsers generated from the specs must read every file of the real-broker corpus
and agree field by field with ``reference_impl`` on every batch and record. Small
synthetic inputs pin down what the generated parsers do with damaged files: Kaitai
Struct has no "stop quietly", so a torn or garbage tail raises ``EOFError`` (the
runtime's ``EndOfStreamError``) or a ``ValidationFailedError`` where Kafka's reader
stops or rejects (kaitai/README.md has the table).
"""

from __future__ import annotations

import importlib
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
import pytest
from kaitaistruct import BytesIO, KaitaiStream, ValidationFailedError, ValidationLessThanError

from kaitai.generated.kafka_control_record import KafkaControlRecord
from kaitai.generated.kafka_log_segment import KafkaLogSegment
from kaitai.generated.kafka_offset_index import KafkaOffsetIndex
from kaitai.generated.kafka_producer_snapshot import KafkaProducerSnapshot
from kaitai.generated.kafka_time_index import KafkaTimeIndex
from kaitai.generated.kafka_transaction_index import KafkaTransactionIndex
from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.file_naming import offset_from_file_name
from reference_impl.formats.index_entries import (
    read_offset_index,
    read_time_index,
    read_txn_index,
    sanity_check_offset_index,
    sanity_check_time_index,
)
from reference_impl.formats.producer_snapshot import (
    ProducerSnapshotEntry,
    read_snapshot,
    write_snapshot,
)
from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    SimpleRecord,
    TimestampType,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
    decompress,
    iter_batches,
    parse_control_key,
    parse_end_txn_marker,
)
from reference_impl.records.legacy import encode_message

REPO_ROOT = Path(__file__).resolve().parent.parent
GENERATED_MODULES = (
    "kafka_control_record",
    "kafka_log_segment",
    "kafka_offset_index",
    "kafka_producer_snapshot",
    "kafka_time_index",
    "kafka_transaction_index",
)

# Batches per kind of batch file in the corpus: .log files and KRaft snapshots as in the
# per-file tables of ../shared/kafka-corpus/SOURCES.md; the 6 bootstrap.checkpoint files
# (3 batches each) are not in those tables.
CORPUS_BATCHES = {"log": 157_716, "kraft_snapshot": 42, "bootstrap": 18}
V2_HEADER_SIZE = 61
INT32_MAX = 2**31 - 1
MAX_REPORTED = 20
REQUIREMENT_ID = re.compile(r"\b[A-Z]+-\d+\b")


def with_req_marks(cases) -> list:
    """Parametrize over case names, marking each with the requirement IDs its name cites."""
    return [
        pytest.param(name, id=name, marks=pytest.mark.req(*REQUIREMENT_ID.findall(name)))
        for name in cases
    ]


def batch_file_kind(path: Path) -> str | None:
    """Files made of record batches: segments, KRaft snapshots, bootstrap.checkpoint."""
    name = path.name
    if name.endswith(".log") and len(name) == 24 and name[:20].isdigit():
        return "log"
    if name.endswith(".checkpoint") and len(name) == 42 and name[20] == "-":
        return "kraft_snapshot"
    if name == "bootstrap.checkpoint":
        return "bootstrap"
    return None


def corpus_files(corpus: Path, suffix: str) -> list[Path]:
    return sorted(p for p in corpus.rglob(f"*{suffix}") if p.is_file())


# --- what the generated parser reads, in reference_impl's vocabulary --------------------

# One tuple per batch, compared position by position with reference_fields().
BATCH_FIELDS = (
    "position",
    "base_offset",
    "last_offset",
    "size_in_bytes",
    "magic",
    "crc",
    "attributes",
    "compression",
    "timestamp_type",
    "partition_leader_epoch",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "records_count",
    "base_timestamp",
    "max_timestamp",
    "last_offset_delta",
    "is_transactional",
    "is_control",
    "has_delete_horizon",
    "key",
    "value",
    "compressed_records",
)
# One tuple per record, compared with reference_record().
RECORD_FIELDS = (
    "offset_delta",
    "timestamp_delta",
    "attributes",
    "key",
    "value",
    "headers",
    "control",
    "offset",
    "timestamp",
    "sequence",
)
# What Kafka reports for every legacy batch (AbstractLegacyRecordBatch): no leader epoch,
# producer or sequence, no record count, never transactional or control.
LEGACY_CONSTANTS = {
    "partition_leader_epoch": -1,
    "producer_id": -1,
    "producer_epoch": -1,
    "base_sequence": -1,
    "records_count": None,
    "is_transactional": False,
    "is_control": False,
    "has_delete_horizon": False,
}


@dataclass(slots=True)
class KaitaiBatch:
    """One entry as the generated parser read it: BATCH_FIELDS values, and the records of
    an uncompressed v2 batch as (offset_delta, timestamp_delta, attributes, key, value,
    headers, control) tuples."""

    fields: tuple
    records: list[tuple] | None

    def value_of(self, name: str):
        return self.fields[BATCH_FIELDS.index(name)]


def sized(obj, name: str) -> bytes | None:
    """A sized field's bytes. Kaitai keeps them as ``_raw_<name>`` when it parsed them
    further (control keys, markers); a field with a negative (null) length is absent."""
    raw = getattr(obj, f"_raw_{name}", None)
    return raw if raw is not None else getattr(obj, name, None)


def kaitai_record(body) -> tuple:
    control = None
    if body.is_control:
        control_type = getattr(getattr(body, "key", None), "type", None)
        if control_type is not None and not isinstance(
            control_type, KafkaControlRecord.ControlRecordType
        ):
            control_type = -1  # an id Kafka does not know is UNKNOWN
        marker = getattr(body, "value", None)
        control = (
            None if control_type is None else int(control_type),
            getattr(marker, "coordinator_epoch", None),
        )
    return (
        body.offset_delta.value,
        body.timestamp_delta.value,
        body.attributes,
        sized(body, "key"),
        sized(body, "value"),
        tuple((h.key, getattr(h, "value", None)) for h in body.headers),
        control,
    )


def kaitai_batch(entry) -> KaitaiBatch:
    body = entry.body
    if entry.magic in (0, 1):
        v1 = body.magic == 1
        legacy = {
            "position": entry.ofs_entry,
            "base_offset": entry.base_offset,
            "last_offset": entry.base_offset,  # a legacy entry's offset is its last offset
            "size_in_bytes": 12 + entry.len_batch,
            "magic": body.magic,
            "crc": body.crc,
            "attributes": body.attributes,
            "compression": int(body.compression),
            "timestamp_type": int(body.timestamp_type) if v1 else -1,
            "base_timestamp": None,
            "max_timestamp": body.timestamp if v1 else -1,
            "last_offset_delta": None,
            "key": sized(body, "key"),
            "value": sized(body, "value"),
            "compressed_records": None,
            **LEGACY_CONSTANTS,
        }
        return KaitaiBatch(tuple(legacy[name] for name in BATCH_FIELDS), None)
    compressed = body.records if isinstance(body.records, bytes) else None
    records = (
        None if compressed is not None else [kaitai_record(r.body) for r in body.records.records]
    )
    fields = (
        entry.ofs_entry,
        entry.base_offset,
        entry.base_offset + body.last_offset_delta,
        12 + entry.len_batch,
        body.magic,
        body.crc,
        body.attributes,
        int(body.compression),
        int(body.timestamp_type),
        body.partition_leader_epoch,
        body.producer_id,
        body.producer_epoch,
        body.base_sequence,
        body.num_records,
        body.base_timestamp,
        body.max_timestamp,
        body.last_offset_delta,
        body.is_transactional,
        body.is_control,
        body.has_delete_horizon_ms,
        None,
        None,
        compressed,
    )
    return KaitaiBatch(fields, records)


def kaitai_batches(data: bytes) -> list[KaitaiBatch]:
    return [kaitai_batch(e) for e in KafkaLogSegment(KaitaiStream(BytesIO(data))).entries]


def kaitai_record_set(data: bytes, count: int, is_control: bool) -> list[tuple]:
    """Parse decompressed v2 records with the generated parser."""
    record_set = KafkaLogSegment.RecordSet(count, is_control, KaitaiStream(BytesIO(data)))
    return [kaitai_record(r.body) for r in record_set.records]


def with_derived(batch: KaitaiBatch, record: tuple) -> tuple:
    """Add offset, timestamp and sequence, which a record only holds as deltas (REC rules)."""
    offset_delta, timestamp_delta = record[0], record[1]
    if batch.value_of("timestamp_type") == TimestampType.LOG_APPEND_TIME:
        timestamp = batch.value_of("max_timestamp")
    else:
        timestamp = batch.value_of("base_timestamp") + timestamp_delta
    base_sequence = batch.value_of("base_sequence")
    sequence = -1 if base_sequence < 0 else (base_sequence + offset_delta) % (INT32_MAX + 1)
    return (*record, batch.value_of("base_offset") + offset_delta, timestamp, sequence)


# --- the same values as reference_impl reads them --------------------------------------


def reference_fields(batch) -> tuple:
    values = {name: getattr(batch, name, None) for name in BATCH_FIELDS}
    values["compression"] = int(batch.compression)
    values["timestamp_type"] = int(batch.timestamp_type)
    values["key"] = values["value"] = values["compressed_records"] = None
    if batch.magic in (0, 1):
        values["base_offset"] = batch.offset  # as stored; .base_offset decompresses a wrapper
        values["key"], values["value"] = batch.key, batch.value
        values["has_delete_horizon"] = False  # the flag exists only in v2 attributes
    elif batch.compression is not Compression.NONE:
        values["compressed_records"] = batch.raw[V2_HEADER_SIZE:]
    return tuple(values[name] for name in BATCH_FIELDS)


def reference_record(batch, record) -> tuple:
    control = None
    if batch.is_control:
        control_type = parse_control_key(record.key)
        epoch = None
        if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            epoch = parse_end_txn_marker(record.key, record.value).coordinator_epoch
        control = (int(control_type), epoch)
    return (
        record.offset_delta,
        record.timestamp_delta,
        record.attributes,
        record.key,
        record.value,
        tuple((h.key, h.value) for h in record.headers),
        control,
        record.offset,
        record.timestamp,
        record.sequence,
    )


# --- the cross-check ----------------------------------------------------------------------


@dataclass
class CrossCheck:
    """Compares reference_impl's reading of one batch file with Kaitai's, collecting
    mismatches (up to MAX_REPORTED) and counts."""

    batches: int = 0
    records: int = 0
    compressed_records: int = 0
    legacy_inner_messages: int = 0
    mismatches: list[str] = field(default_factory=list)

    def differ(self, where: str, names, expected: tuple, actual: tuple) -> None:
        for name, want, got in zip(names, expected, actual, strict=True):
            if want != got and len(self.mismatches) < MAX_REPORTED:
                self.mismatches.append(f"{where}: {name}: reference {want!r} != kaitai {got!r}")

    def file(self, name: str, data: bytes, kaitai: list[KaitaiBatch]) -> None:
        reference = list(iter_batches(data, file=name))
        if len(reference) != len(kaitai):
            self.mismatches.append(f"{name}: {len(reference)} batches vs kaitai {len(kaitai)}")
            return
        for ref, ks in zip(reference, kaitai, strict=True):
            where = f"{name}@{ref.position}"
            self.batches += 1
            self.differ(where, BATCH_FIELDS, reference_fields(ref), ks.fields)
            if ref.magic in (0, 1):
                if ref.compression is not Compression.NONE:
                    self.legacy_wrapper(where, ref)
                continue
            ref_records = [reference_record(ref, r) for r in ref.records()]
            if ks.records is not None:
                ks_records = ks.records
                self.records += len(ks_records)
            else:
                payload = decompress(ref.compression, ref.raw[V2_HEADER_SIZE:], magic=2)
                ks_records = kaitai_record_set(payload, ref.records_count, ref.is_control)
                self.compressed_records += len(ks_records)
            if len(ref_records) != len(ks_records):
                self.mismatches.append(f"{where}: {len(ref_records)} vs {len(ks_records)} records")
                continue
            for i, (want, got) in enumerate(zip(ref_records, ks_records, strict=True)):
                self.differ(f"{where} record {i}", RECORD_FIELDS, want, with_derived(ks, got))

    def legacy_wrapper(self, where: str, wrapper) -> None:
        """Decompress with reference_impl, parse the inner message set with Kaitai, and
        derive absolute offsets and timestamps (LEGACY wrapper rules)."""
        inner = kaitai_batches(decompress(wrapper.compression, wrapper.value, magic=wrapper.magic))
        last_inner = inner[-1].value_of("base_offset")
        actual = []
        for message in inner:
            offset = message.value_of("base_offset")
            if wrapper.magic == 1 and wrapper.offset != 0:
                offset = wrapper.offset - last_inner + offset  # v1 inner offsets are relative
            timestamp = message.value_of("max_timestamp")
            if wrapper.timestamp_type is TimestampType.LOG_APPEND_TIME:
                timestamp = wrapper.timestamp
            actual.append((offset, timestamp, message.value_of("key"), message.value_of("value")))
        expected = [(r.offset, r.timestamp, r.key, r.value) for r in wrapper.records()]
        self.legacy_inner_messages += len(actual)
        if len(expected) != len(actual):
            self.mismatches.append(f"{where}: {len(expected)} vs {len(actual)} inner messages")
            return
        names = ("offset", "timestamp", "key", "value")
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            self.differ(f"{where} inner message {i}", names, want, got)
        self.differ(where, ("base_offset",), (wrapper.base_offset,), (actual[0][0],))


# --- index and snapshot entries, both ways ---------------------------------------------


def base_offset_of(path: Path) -> int:
    return offset_from_file_name(path.name)


def kaitai_aborted_txns(data: bytes) -> list[tuple]:
    return [
        (e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset, e.version_byte)
        for e in KafkaTransactionIndex.from_bytes(data).entries
    ]


def reference_aborted_txns(data: bytes) -> list[tuple]:
    return [
        (t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset, t.version)
        for t in read_txn_index(data)
    ]


def kaitai_snapshot_entries(snapshot) -> list[tuple]:
    return [
        (
            e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
            e.offset_delta, e.timestamp, e.coordinator_epoch, e.current_txn_first_offset,
        )
        for e in snapshot.entries
    ]  # fmt: skip


def reference_snapshot_entries(data: bytes) -> list[tuple]:
    return [
        (
            e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset,
            e.offset_delta, e.timestamp, e.coordinator_epoch, e.current_txn_first_offset,
        )
        for e in read_snapshot(data)
    ]  # fmt: skip


# --- synthetic inputs -------------------------------------------------------------------


def synthetic_log() -> bytes:
    """Every kind of entry the specs describe, written by reference_impl's encoder."""
    headers = (Header(b"trace", b"\x00\x01"), Header(b"null-value", None))
    return b"".join(
        [
            build_record_batch(
                [
                    SimpleRecord(b"v0", key=b"k0", timestamp=1_000, headers=headers),
                    SimpleRecord(None, key=None, timestamp=990),
                    SimpleRecord(b"x" * 300, key=b"", timestamp=2**40),
                ],
                base_offset=0,
                producer_id=7,
                producer_epoch=1,
                base_sequence=INT32_MAX - 1,  # sequences wrap past 2^31-1 to 0
                is_transactional=True,
                partition_leader_epoch=3,
            ),
            build_control_batch(
                ControlRecordType.COMMIT,
                producer_id=7,
                producer_epoch=1,
                coordinator_epoch=9,
                base_offset=3,
                timestamp=3_000,
            ),
            build_record_batch(
                [SimpleRecord(b"zipped", key=b"k", timestamp=4_000)] * 3,
                base_offset=4,
                compression=Compression.GZIP,
                timestamp_type=TimestampType.LOG_APPEND_TIME,
                log_append_time=5_000,
            ),
            build_record_batch(
                [SimpleRecord(b"kept", timestamp=6_000, offset_delta=4)],
                base_offset=7,
                delete_horizon_ms=86_400_000,
            ),
            build_record_batch([], base_offset=12, empty_max_timestamp=7_000),
            build_legacy_message_set(
                [SimpleRecord(b"v0 message", key=b"k")], magic=0, base_offset=13
            ),
            build_legacy_message_set(
                [SimpleRecord(b"a", timestamp=8_000), SimpleRecord(b"b", timestamp=8_001)],
                magic=1,
                base_offset=14,
                compression=Compression.GZIP,
            ),
        ]
    )


def kaitai_valid_prefix(data: bytes) -> int:
    """Kafka's reading of a file with a damaged tail: parse entry by entry, stop at the
    first one that does not parse, return where the last whole entry ended."""
    io = KaitaiStream(BytesIO(data))
    end = 0
    while not io.is_eof():
        try:
            KafkaLogSegment.LogEntry(end, io)
        except (EOFError, ValidationFailedError):
            break
        end = io.pos()
    return end


# --- the compile pipeline -----------------------------------------------------------------


def test_generated_code_is_fresh() -> None:
    """kaitai/generated/ is what kaitai/build.mjs makes of kaitai/*.ksy today."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: cannot run kaitai/build.mjs --check")
    if not (REPO_ROOT / "kaitai" / "node_modules" / "kaitai-struct-compiler").is_dir():
        pytest.skip("kaitai/node_modules is missing: run npm ci --prefix kaitai")
    result = subprocess.run(
        [node, "kaitai/build.mjs", "--check"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("module", GENERATED_MODULES)
def test_generated_module_imports_as_package(module: str) -> None:
    imported = importlib.import_module(f"kaitai.generated.{module}")
    assert imported.__name__ == f"kaitai.generated.{module}"


# --- synthetic inputs: the specs against reference_impl's encoder ------------------------


@pytest.mark.req("VARINT-1", "VARINT-2", "VARINT-3")
def test_varint_vectors_from_kafka_bytesutilstest() -> None:
    varints = {
        0: "00", -1: "01", 1: "02", 63: "7e", -64: "7f", 64: "8001", -65: "8101",
        8191: "fe7f", -8192: "ff7f", 8192: "808001", 1048576: "80808001",
        134217728: "8080808001", INT32_MAX: "feffffff0f", -(2**31): "ffffffff0f",
    }  # fmt: skip
    varlongs = {17179869184: "808080808001", 2199023255552: "80808080808001"}
    varlongs |= {2**63 - 1: "fe" + "ff" * 8 + "01", -(2**63): "ff" * 9 + "01"}

    def decode(hex_bytes: str, num_bits: int) -> KafkaLogSegment.VlqZigzag:
        return KafkaLogSegment.VlqZigzag(num_bits, KaitaiStream(BytesIO(bytes.fromhex(hex_bytes))))

    for value, encoded in varints.items():
        assert decode(encoded, 32).value == value, encoded
    for value, encoded in (varints | varlongs).items():
        parsed = decode(encoded, 64)
        assert (parsed.value, parsed.len) == (value, len(encoded) // 2), encoded
    # Java drops the bits above 32 that a 5-byte varint's last byte can carry.
    assert decode("ffffffff7f", 32).value == -(2**31)
    for too_long, num_bits in (("ffffffffff01", 32), ("ff" * 10 + "01", 64)):
        with pytest.raises(ValidationFailedError):
            decode(too_long, num_bits)


@pytest.mark.req(
    "FRAME-5",
    "BATCH-5",
    "BATCH-6",
    "BATCH-11",
    "BATCH-12",
    "REC-5",
    "REC-6",
    "LEGACY-6",
    "LEGACY-7",
    "LEGACY-14",
    "LEGACY-17",
    "CTRL-1",
)
def test_synthetic_log_matches_reference() -> None:
    data = synthetic_log()
    check = CrossCheck()
    check.file("synthetic.log", data, kaitai_batches(data))
    assert check.mismatches == []
    assert (check.batches, check.records, check.compressed_records) == (7, 5, 3)
    assert check.legacy_inner_messages == 2


def test_cross_check_reports_each_differing_field() -> None:
    data = synthetic_log()
    kaitai = kaitai_batches(data)
    batch = kaitai[0]
    record = batch.records[0]
    crc = BATCH_FIELDS.index("crc")
    kaitai[0] = KaitaiBatch(
        (*batch.fields[:crc], batch.fields[crc] ^ 1, *batch.fields[crc + 1 :]),
        [(*record[:3], b"another key", *record[4:]), *batch.records[1:]],
    )
    check = CrossCheck()
    check.file("synthetic.log", data, kaitai)
    assert [m.split(": ")[1] for m in check.mismatches] == ["crc", "key"]
    assert check.mismatches[1].startswith("synthetic.log@0 record 0: key: reference b'k0'")


@pytest.mark.req("FRAME-2", "FRAME-4", "FRAME-7")
def test_torn_tail_raises_eof_where_kafka_stops() -> None:
    data = synthetic_log()
    for cut in (1, 11, len(data) - 16):
        torn = data[:-cut]
        with pytest.raises(EOFError):
            KafkaLogSegment(KaitaiStream(BytesIO(torn)))
        scanner = iter_batches(torn)
        list(scanner)  # Kafka's reader stops quietly (FRAME-2, FRAME-4)
        assert kaitai_valid_prefix(torn) == scanner.valid_bytes


@pytest.mark.req("FRAME-3", "FRAME-8")
def test_zero_filled_tail_fails_validation_like_kafka() -> None:
    data = synthetic_log() + bytes(64)
    with pytest.raises(ValidationLessThanError):  # len_batch 0 < 14 (FRAME-3, FRAME-8)
        KafkaLogSegment(KaitaiStream(BytesIO(data)))
    with pytest.raises(KafkaLogError) as reference:
        list(iter_batches(data))
    assert reference.value.category == Category.INVALID_BATCH_SIZE
    assert kaitai_valid_prefix(data) == len(data) - 64


@pytest.mark.req("FRAME-6")
def test_unknown_magic_fails_validation() -> None:
    data = bytearray(synthetic_log())
    data[16] = 3
    with pytest.raises(ValidationFailedError):
        KafkaLogSegment(KaitaiStream(BytesIO(bytes(data))))
    with pytest.raises(KafkaLogError) as reference:
        list(iter_batches(bytes(data)))
    assert reference.value.category == Category.BAD_MAGIC


@pytest.mark.req("REC-10")
@pytest.mark.parametrize(("count_change", "error"), [(1, EOFError), (-1, ValidationFailedError)])
def test_record_count_must_match_the_records(count_change: int, error: type) -> None:
    data = bytearray(synthetic_log())
    (count,) = struct.unpack_from(">i", data, 57)
    struct.pack_into(">i", data, 57, count + count_change)
    with pytest.raises(error):
        KafkaLogSegment(KaitaiStream(BytesIO(bytes(data))))


def with_codec_bits(entry: bytes, codec: int, attributes_at: int) -> bytes:
    data = bytearray(entry)
    data[attributes_at] = (data[attributes_at] & ~0x07) | codec
    return bytes(data)


def read_everything_with_reference(data: bytes) -> None:
    """Every check reference_impl makes of a file: entries, codecs, records, control keys,
    transaction markers (CRCs aside, which Kaitai cannot compute)."""
    for batch in iter_batches(data):
        for record in batch.records():
            if batch.is_control:
                control_type = parse_control_key(record.key)
                if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
                    parse_end_txn_marker(record.key, record.value)


def with_byte(entry: bytes, position: int, value: int) -> bytes:
    return entry[:position] + bytes([value]) + entry[position + 1 :]


COMMIT_KEY = struct.pack(">hh", 0, ControlRecordType.COMMIT)
# Damage that both readings reject, with the category reference_impl gives it.
REJECTED = {
    "codec id 5 in a v2 batch (BATCH-10)": (
        with_codec_bits(build_record_batch([SimpleRecord(b"v")]), 5, attributes_at=22),
        Category.UNSUPPORTED_COMPRESSION,
    ),
    "record with a negative length (REC-2)": (
        with_byte(build_record_batch([SimpleRecord(b"v")]), V2_HEADER_SIZE, 0x01),  # zigzag -1
        Category.INVALID_RECORD,
    ),
    "zstd in a v0 message (LEGACY-8)": (
        with_codec_bits(encode_message(0, 0, None, b"v"), 4, attributes_at=17),
        Category.UNSUPPORTED_COMPRESSION,
    ),
    "compressed wrapper with a null value (LEGACY-9)": (
        encode_message(0, 1, None, None, attributes=int(Compression.GZIP)),
        Category.INVALID_RECORD,
    ),
    "control record with a null key (CTRL-2)": (
        build_record_batch([SimpleRecord(b"v", key=None)], is_control=True),
        Category.INVALID_CONTROL_RECORD,
    ),
    "COMMIT marker with a null value (CTRL-6)": (
        build_record_batch([SimpleRecord(None, key=COMMIT_KEY)], is_control=True),
        Category.INVALID_CONTROL_RECORD,
    ),
}


@pytest.mark.parametrize("case", with_req_marks(REJECTED))
def test_damage_rejected_by_both_readings(case: str) -> None:
    data, category = REJECTED[case]
    with pytest.raises(ValidationFailedError):
        KafkaLogSegment.from_bytes(data)
    with pytest.raises(KafkaLogError) as reference:
        read_everything_with_reference(data)
    assert reference.value.category == category


@pytest.mark.req("BATCH-8")
def test_empty_batch_bytes_are_not_looked_at() -> None:
    """BATCH-8: a batch with recordsCount 0 has no records, whatever follows its header."""
    data = bytearray(build_record_batch([], base_offset=5) + b"junk")
    struct.pack_into(">i", data, 8, len(data) - 12)
    (entry,) = KafkaLogSegment.from_bytes(bytes(data)).entries
    assert entry.body.records.records == []
    (batch,) = iter_batches(bytes(data))
    assert batch.records() == []


@pytest.mark.req("CTRL-3", "CTRL-4")
def test_negative_control_key_version_is_invalid() -> None:
    with pytest.raises(ValidationFailedError):
        KafkaControlRecord(KaitaiStream(BytesIO(struct.pack(">hh", -1, 1))))
    key = KafkaControlRecord(KaitaiStream(BytesIO(struct.pack(">hh", 3, 1))))
    assert key.type == KafkaControlRecord.ControlRecordType.commit  # higher versions read as 0


def offset_index(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">ii", *entry) for entry in entries)


def time_index(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">qi", *entry) for entry in entries)


INDEXES = {
    # name: (file bytes, accepted by Kafka's sanityCheck with base offset 0)
    "offset index (OIDX-1)": (offset_index((5, 0), (9, 4096)), True),
    "offset index, zero-filled preallocated slots (OIDX-9)": (
        offset_index((5, 0), (9, 4096), (0, 0), (0, 0)),
        True,
    ),
    "offset index, partial entry (OIDX-2)": (offset_index((5, 0)) + b"\x00" * 3, False),
    "offset index, last offset below base (OIDX-3)": (offset_index((5, 0), (-1, 4096)), False),
    "offset index, negative offset before the last (OIDX-3)": (
        offset_index((-1, 0), (9, 4096)),
        True,
    ),
    "time index (TIDX-1)": (time_index((1_000, 5), (2_000, 9)), True),
    "time index, zero-filled slot after a positive timestamp (TIDX-6)": (
        time_index((1_000, 5), (0, 0)),
        False,
    ),
    "time index, partial entry (TIDX-5)": (time_index((1_000, 5)) + bytes(8), False),
    "time index, last offset below base (TIDX-7)": (time_index((1_000, 5), (2_000, -1)), False),
}


@pytest.mark.parametrize("case", with_req_marks(INDEXES))
def test_index_sanity_checks_agree_with_reference(case: str) -> None:
    """Kafka's sanityCheck of an opened index, as Kaitai validations and in reference_impl."""
    data, accepted = INDEXES[case]
    if case.startswith("offset"):
        parse, sanity_check = KafkaOffsetIndex.from_bytes, sanity_check_offset_index
    else:
        parse, sanity_check = KafkaTimeIndex.from_bytes, sanity_check_time_index
    if accepted:
        assert len(parse(data).entries) == len(data) // (8 if case.startswith("offset") else 12)
        sanity_check(data, 0)
        return
    with pytest.raises(ValidationFailedError):
        parse(data)
    with pytest.raises(KafkaLogError) as reference:
        sanity_check(data, 0)
    assert reference.value.category == Category.CORRUPT_INDEX


@pytest.mark.parametrize(
    ("version", "accepted"), [(0, True), (0x00FF, True), (-256, True), (0x0100, False)]
)
@pytest.mark.req("TXN-2", "TXN-3")
def test_transaction_index_version_is_read_as_its_first_byte(version: int, accepted: bool) -> None:
    entry = struct.pack(">hqqqq", version, 42, 100, 130, 131)
    if not accepted:
        with pytest.raises(ValidationFailedError):
            KafkaTransactionIndex.from_bytes(entry * 2)
        with pytest.raises(KafkaLogError):
            read_txn_index(entry * 2)
        return
    assert kaitai_aborted_txns(entry * 2) == reference_aborted_txns(entry * 2)
    assert kaitai_aborted_txns(entry)[0][:4] == (42, 100, 130, 131)


@pytest.mark.req("TXN-4")
def test_transaction_index_partial_entry_is_ignored() -> None:
    """TXN-4: a trailing partial entry is ignored."""
    data = struct.pack(">hqqqq", 0, 42, 100, 130, 131) * 2
    assert len(kaitai_aborted_txns(data[:-1])) == len(reference_aborted_txns(data[:-1])) == 1
    assert len(KafkaTransactionIndex.from_bytes(data[:-1]).partial_entry) == 33


@pytest.mark.req("SNAP-1", "SNAP-2", "SNAP-3", "SNAP-5")
def test_producer_snapshot_layout_and_damage() -> None:
    good = write_snapshot(
        [
            ProducerSnapshotEntry(1000, 2, 41, 77, 4, 1_700_000_000_000, 5, -1),
            ProducerSnapshotEntry(2000, 0),
        ]
    )
    snapshot = KafkaProducerSnapshot.from_bytes(good)
    assert snapshot.crc == crc32c.crc32c(good[6:])
    assert kaitai_snapshot_entries(snapshot) == reference_snapshot_entries(good)
    assert kaitai_snapshot_entries(snapshot)[0] == (1000, 2, 41, 77, 4, 1_700_000_000_000, 5, -1)
    # Bytes after the declared entries are not read by either reader.
    assert kaitai_snapshot_entries(KafkaProducerSnapshot.from_bytes(good + b"\x00")) == (
        kaitai_snapshot_entries(snapshot)
    )
    for damaged, error in (
        (b"\x00\x02" + good[2:], ValidationFailedError),  # only version 1 exists
        (good[:6] + struct.pack(">i", -1), ValidationFailedError),
        (good[:-1], EOFError),
    ):
        with pytest.raises(error):
            KafkaProducerSnapshot.from_bytes(damaged)
        with pytest.raises(KafkaLogError):
            read_snapshot(damaged)


# --- the corpus ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kaitai_segments(corpus: Path) -> dict[Path, list[KaitaiBatch]]:
    """Every batch file of the corpus, parsed once by the generated parser."""
    return {
        path: kaitai_batches(path.read_bytes())
        for path in sorted(corpus.rglob("*"))
        if path.is_file() and batch_file_kind(path)
    }


@pytest.mark.req("FRAME-1", "FRAME-2", "FRAME-5")
@pytest.mark.corpus
def test_corpus_batch_files_parse(corpus: Path, kaitai_segments) -> None:
    """Every .log, KRaft snapshot and bootstrap.checkpoint parses whole, to the last byte."""
    batches = dict.fromkeys(CORPUS_BATCHES, 0)
    empty = 0
    for path, parsed in kaitai_segments.items():
        batches[batch_file_kind(path)] += len(parsed)
        if parsed:
            last = parsed[-1]
            assert last.value_of("position") + last.value_of("size_in_bytes") == path.stat().st_size
        else:
            assert path.stat().st_size == 0, path  # FRAME-2: a 0-byte .log has no entries
            empty += 1
    assert batches == CORPUS_BATCHES
    print(f"kaitai parsed {len(kaitai_segments) - empty} batch files ({empty} empty): {batches}")


@pytest.mark.req(
    "BATCH-1", "BATCH-5", "REC-1", "REC-5", "LEGACY-1", "LEGACY-13", "COMP-2", "CTRL-1"
)
@pytest.mark.corpus
def test_corpus_matches_reference_impl(corpus: Path, kaitai_segments) -> None:
    """Every header field of every batch, and every record of every v2 batch (uncompressed
    as Kaitai parses it; compressed after reference_impl decompresses it), agrees."""
    check = CrossCheck()
    batches_by_kind = dict.fromkeys(CORPUS_BATCHES, 0)
    for path, parsed in kaitai_segments.items():
        before = check.batches
        check.file(str(path.relative_to(corpus)), path.read_bytes(), parsed)
        batches_by_kind[batch_file_kind(path)] += check.batches - before
    assert check.mismatches == []
    assert batches_by_kind == CORPUS_BATCHES
    print(
        f"cross-checked {check.batches} batches, {check.records} records of uncompressed "
        f"v2 batches, {check.compressed_records} records of compressed v2 batches, "
        f"{check.legacy_inner_messages} inner messages of legacy wrappers"
    )


@pytest.mark.req("OIDX-1", "OIDX-2", "OIDX-3", "OIDX-5")
@pytest.mark.corpus
def test_corpus_offset_indexes(corpus: Path, kaitai_segments) -> None:
    """Each .index parses, agrees with reference_impl.formats.index_entries, and points at batch starts."""
    checked = empty = entries = 0
    for path in corpus_files(corpus, ".index"):
        data = path.read_bytes()
        base = base_offset_of(path)
        parsed = [
            (base + e.relative_offset, e.position)
            for e in KafkaOffsetIndex.from_bytes(data).entries
        ]
        assert parsed == [(e.offset, e.position) for e in read_offset_index(data, base)], path
        sanity_check_offset_index(data, base, file=str(path))  # Kaitai's validations passed too
        if not data:
            empty += 1
            continue
        checked += 1
        entries += len(parsed)
        log = kaitai_segments.get(path.with_suffix(".log"))
        if log is not None:  # else the index's .log is not in the corpus (SOURCES oddity 11)
            starts = {batch.value_of("position") for batch in log}
            assert {position for _, position in parsed} <= starts, path
    assert (checked, entries) == (20, 3470)
    print(f"kaitai parsed {checked} .index files with {entries} entries ({empty} empty)")


@pytest.mark.req("TIDX-1", "TIDX-5", "TIDX-6", "TIDX-7")
@pytest.mark.corpus
def test_corpus_time_indexes(corpus: Path) -> None:
    """Each .timeindex parses and agrees with reference_impl.formats.index_entries."""
    checked = empty = entries = 0
    for path in corpus_files(corpus, ".timeindex"):
        data = path.read_bytes()
        base = base_offset_of(path)
        parsed = [
            (e.timestamp, base + e.relative_offset) for e in KafkaTimeIndex.from_bytes(data).entries
        ]
        assert parsed == [(e.timestamp, e.offset) for e in read_time_index(data, base)], path
        sanity_check_time_index(data, base, file=str(path))
        checked += bool(data)
        empty += not data
        entries += len(parsed)
    assert (checked, entries) == (30, 3505)
    print(f"kaitai parsed {checked} .timeindex files with {entries} entries ({empty} empty)")


@pytest.mark.req("TXN-1")
@pytest.mark.corpus
def test_corpus_transaction_indexes(corpus: Path) -> None:
    """The corpus has no .txnindex (no abort was ever indexed, SOURCES.md); any that
    appears must parse and agree with reference_impl.formats.index_entries."""
    for path in corpus_files(corpus, ".txnindex"):
        data = path.read_bytes()
        assert kaitai_aborted_txns(data) == reference_aborted_txns(data), path


@pytest.mark.req("SNAP-1", "SNAP-3")
@pytest.mark.corpus
def test_corpus_producer_snapshots(corpus: Path) -> None:
    """Each .snapshot parses, its crc field is the CRC-32C of the rest, and its entries
    agree with reference_impl.formats.producer_snapshot."""
    files = entries = 0
    for path in corpus_files(corpus, ".snapshot"):
        data = path.read_bytes()
        snapshot = KafkaProducerSnapshot.from_bytes(data)
        assert snapshot.crc == crc32c.crc32c(data[6:]), path
        assert kaitai_snapshot_entries(snapshot) == reference_snapshot_entries(data), path
        files += 1
        entries += snapshot.num_entries
    assert (files, entries) == (67, 9)
    print(f"kaitai parsed {files} producer snapshots holding {entries} entries")
