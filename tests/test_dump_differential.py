"""``klogspec dump`` against Kafka's own DumpLogSegments (issue 21 item 4).

The parser and the comparison are checked on Kafka's text as DumpLogSegments 4.4.0 prints it
(no Java needed); the differential itself (marker ``broker``: Kafka's release jars, Java 17+ and
Maven) runs Kafka's tool and ours on every file of the real-broker corpus and of the shared
corpus, and finds no difference outside conformance.dump_differential.FORMAT_DIFFERENCES.
"""

from __future__ import annotations

import base64
import copy
import os
from pathlib import Path

import pytest

from conformance import dump_differential, kafka_broker
from conformance import kafka_dump as kd

# The releases to compare with (test_broker_corpus.py's variable): the newest by default.
VERSIONS = os.environ.get("KLOGSPEC_KAFKA_VERSIONS", kafka_broker.NEWEST).split(",")

# DumpLogSegments 4.4.0 --deep-iteration --print-data-log, as DumpFiles frames it: a data batch
# whose one payload holds a newline and bytes that are not UTF-8, a commit marker, a torn tail.
KAFKA_TEXT = """\
### klogspec-file /x/00000000000000000000.log
Dumping /x/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 5 \
producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false \
deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000001 size: 95 magic: 2 \
compresscodec: zstd crc: 3266338035 isvalid: true
| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 3 sequence: 0 headerKeys: [h1,h2] \
key: k0 payload: a
b
| offset: 1 CreateTime: 1700000000001 keySize: -1 valueSize: 3 sequence: 1 headerKeys: [] \
payload: \ufffdz\ufffd
baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: 5 \
producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true \
deleteHorizonMs: OptionalLong[17] position: 95 CreateTime: 1700000000002 size: 78 magic: 2 \
compresscodec: none crc: 509223313 isvalid: false
| offset: 2 CreateTime: 1700000000002 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] \
endTxnMarker: COMMIT coordinatorEpoch: 3
Found 20 invalid bytes at the end of 00000000000000000000.log
### stderr Non-consecutive offsets in /x/00000000000000000000.log
### klogspec-end
"""


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _batch(**fields) -> dict:
    return {
        "type": "batch", "magic": 2, "producerId": 5, "producerEpoch": 0,
        "partitionLeaderEpoch": 0, "isTransactional": True, "timestampType": "CreateTime",
        **fields,
    }  # fmt: skip


# What klogspec dump --json --print-data gives for the same bytes.
OURS = [
    _batch(baseOffset=0, lastOffset=1, count=2, baseSequence=0, lastSequence=1, isControl=False,
           deleteHorizonMs=None, position=0, maxTimestamp=1700000000001, sizeBytes=95,
           compression="zstd", crc=3266338035, crcValid=True, records=[
        {"offset": 0, "timestamp": 1700000000000, "keySize": 2, "valueSize": 3, "sequence": 0,
         "key": _b64(b"k0"), "value": _b64(b"a\nb"), "headers": [{"key": "h1"}, {"key": "h2"}]},
        {"offset": 1, "timestamp": 1700000000001, "keySize": -1, "valueSize": 3, "sequence": 1,
         "key": None, "value": _b64(b"\xff\xfez\xc3"), "headers": []},
    ]),
    _batch(baseOffset=2, lastOffset=2, count=1, baseSequence=-1, lastSequence=-1, isControl=True,
           deleteHorizonMs=17, position=95, maxTimestamp=1700000000002, sizeBytes=78,
           compression="none", crc=509223313, crcValid=False, records=[
        {"offset": 2, "timestamp": 1700000000002, "keySize": 4, "valueSize": 6, "sequence": -1,
         "key": _b64(b"\0\0\0\1"), "value": _b64(b"\0\0\0\0\0\3"), "headers": [],
         "control": {"type": "COMMIT", "coordinatorEpoch": 3}},
    ]),
    {"type": "summary", "trailingBytes": 20},
]  # fmt: skip


def kafka_dump() -> kd.KafkaFileDump:
    return kd.split_by_file(KAFKA_TEXT)["/x/00000000000000000000.log"]


def test_kafkas_text_is_parsed_field_by_field():
    parsed = kd.parse_log(kafka_dump())
    first, marker = parsed["batches"]
    assert (first["baseOffset"], first["count"], first["compresscodec"]) == (0, 2, "zstd")
    assert first["deleteHorizonMs"] is None and marker["deleteHorizonMs"] == 17
    assert marker["isvalid"] is False and marker["crc"] == 509223313
    assert first["records"][0]["rest"] == " key: k0 payload: a\nb"  # the payload's newline
    assert first["records"][0]["headerKeys"] == "h1,h2"
    assert marker["records"][0]["rest"] == " endTxnMarker: COMMIT coordinatorEpoch: 3"
    assert parsed["trailingBytes"] == 20 and parsed["unparsed"] == []
    assert kafka_dump().stderr == ["Non-consecutive offsets in /x/00000000000000000000.log"]


def test_the_same_dump_both_ways_has_no_difference():
    counts = {"batches": 0, "records": 0}
    assert dump_differential._compare_log(kafka_dump(), OURS, counts) == []
    assert counts == {"batches": 2, "records": 3}


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda o: o[0].update(crc=1), "batch at position 0 crc: Kafka 3266338035, klogspec 1"),
        (lambda o: o[1].update(crcValid=True), "isvalid: Kafka False, klogspec True"),
        (lambda o: o[1].update(deleteHorizonMs=None), "deleteHorizonMs: Kafka 17"),
        (lambda o: o[0]["records"][1].update(sequence=7), "record 1 sequence: Kafka 1"),
        (lambda o: o[0]["records"][0].update(value=_b64(b"a b")), "record 0 rest"),
        (lambda o: o[0]["records"][0]["headers"].pop(), "record 0 headerKeys"),
        (lambda o: o[1]["records"][0]["control"].update(type="ABORT"), "record 2 rest"),
        (lambda o: o[0]["records"].pop(), "2 records in Kafka's dump, 1 in ours"),
        (lambda o: o[2].update(trailingBytes=0), "trailing bytes: Kafka 20, klogspec 0"),
    ],
)
def test_a_difference_in_any_field_is_reported(change, expected):
    ours = copy.deepcopy(OURS)
    change(ours)
    found = dump_differential._compare_log(kafka_dump(), ours, {"batches": 0, "records": 0})
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.broker
@pytest.mark.parametrize("version", VERSIONS)
def test_dump_agrees_with_kafka_on_the_broker_corpus(version, kafka_or_skip):
    corpus = kafka_or_skip(f"{version} broker", kafka_broker.broker_corpus, version)
    files = sorted(p for p in corpus.root.rglob("*") if p.is_file())
    differences, counts = kafka_or_skip(
        f"{version} DumpLogSegments", dump_differential.differential, version, files
    )
    assert differences == []
    assert counts["files"] >= 100 and counts["records"] > 6000 and counts["entries"] > 100


@pytest.mark.broker
@pytest.mark.corpus
@pytest.mark.parametrize("version", VERSIONS)
def test_dump_agrees_with_kafka_on_the_shared_corpus(corpus, version, kafka_or_skip):
    """Every file of ../shared/kafka-corpus DumpLogSegments reads (Kafka 0.8 to 4.0 brokers,
    legacy formats, damaged files), about 2 minutes."""
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    differences, counts = kafka_or_skip(
        f"{version} DumpLogSegments", dump_differential.differential, version, files
    )
    assert differences == []
    assert counts["batches"] > 150_000 and counts["files"] > 1000


def test_the_cli_page_shows_one_file_both_ways_and_the_differences():
    import sys

    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo / "docs" / "hooks"))
    try:
        import generated
    finally:
        sys.path.remove(str(repo / "docs" / "hooks"))
    page = generated.cli_page(repo)
    assert "## `klogspec dump` and Kafka's `kafka-dump-log`" in page
    assert "baseOffset: 30 lastOffset: 30 count: 1" in page  # Kafka's text
    assert '"isControl":true' in page  # ours, as JSON
    for what in dump_differential.FORMAT_DIFFERENCES:
        assert f"| {what} |" in page


@pytest.mark.parametrize("brace", ["", "}"])
def test_a_legacy_message_line_of_every_release_is_read(brace):
    """Kafka 4.0 to 4.2's Scala tool prints `crc: N}` after a v0/v1 message, 4.3 on `crc: N`."""
    dump = kd.KafkaFileDump("x", lines=[
        "offset: 0 position: 0 CreateTime: -1 size: 62 magic: 1 compresscodec: none "
        "crc: 4034048038 isvalid: true",
        f"| offset: 0 CreateTime: -1 keySize: 4 valueSize: 24 isValid: true crc: 4034048038{brace}"
        " key: 1000 payload: hello",
    ])  # fmt: skip
    (batch,) = kd.parse_log(dump)["batches"]
    assert batch["lastOffset"] == 0 and batch["magic"] == 1
    (record,) = batch["records"]
    assert (record["crc"], record["rest"]) == (4034048038, " key: 1000 payload: hello")
