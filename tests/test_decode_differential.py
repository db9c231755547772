"""``klogspec dump --decode`` against DumpLogSegments' own decoders (issue 23 item 4).

The parser and the comparison are checked on Kafka's text as DumpLogSegments 4.4.0 prints it
with each decoder (no Java needed); the differential itself (marker ``broker``: Kafka's
release jars, Java 17+ and Maven) runs Kafka's three decoders and ``klogspec dump --decode
auto`` on every internal-topic ``.log`` of the real-broker corpus and of the shared corpus, and
finds no difference outside conformance.decode_differential.DECODE_FORMAT_DIFFERENCES.
"""

from __future__ import annotations

import base64
import copy
import os
from pathlib import Path

import pytest

from conformance import decode_differential as dd
from conformance import kafka_broker
from conformance import kafka_dump as kd

VERSIONS = os.environ.get("KLOGSPEC_KAFKA_VERSIONS", kafka_broker.NEWEST).split(",")

_RECORD = "| offset: {} CreateTime: 1 keySize: 1 valueSize: 1 sequence: -1 headerKeys: []"
_BATCH = (
    "baseOffset: {0} lastOffset: {0} count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
    "producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false "
    "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 9 magic: 2 "
    "compresscodec: none crc: 1 isvalid: true"
)
# Kafka 4.4.0's text for one record of each shape (copied from real output on the corpus)
KAFKA_RESTS = [
    ' key: {"type":"1","data":{"group":"g","topic":"t","partition":0}} payload: {"version":"3",'
    '"data":{"offset":9,"leaderEpoch":-1,"metadata":"","commitTimestamp":1685814551579}}',
    ' key: {"type":"2","data":{"group":"g"}} payload: <DELETE>',
    ' key: {"type":"2","data":{"group":"g"}} payload: {"version":"3","data":{"protocolType":'
    '"consumer","generation":1,"protocol":"range","leader":"m","currentStateTimestamp":5,'
    '"members":[{"memberId":"m","groupInstanceId":null,"clientId":"c","clientHost":"/h",'
    '"rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":["plain"],'
    '"userData":null},"assignment":{"assignedPartitions":[],"userData":null}}]}}',
    ' key: {"type":"0","data":{"transactionalId":"x"}} payload: {"version":"1","data":'
    '{"producerId":5,"previousProducerId":5,"producerEpoch":0,"transactionTimeoutMs":60000,'
    '"transactionStatus":"Ongoing","transactionPartitions":[{"topic":"t","partitionIds":[0]}],'
    '"transactionLastUpdateTimestampMs":7,"transactionStartTimestampMs":7}}',
    ' payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version",'
    '"featureLevel":11}}',
    ' LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
    '"grantingVoters":[{"voterId":1}]}',
]


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _record(offset, key, value) -> dict:
    return {"offset": offset, "key_decoded": key, "value_decoded": value}


MEMBER = {"memberId": "m", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
          "rebalanceTimeout": 300000, "sessionTimeout": 45000,
          # consumer protocol version 0: topics ["plain"], no user data; no partitions
          "subscription": _b64(b"\0\0\0\0\0\1\0\5plain\xff\xff\xff\xff"),
          "assignment": _b64(b"\0\0\0\0\0\0\xff\xff\xff\xff")}  # fmt: skip
# klogspec dump --decode auto --json for the same records
OURS = [
    _record(0, {"type": "OffsetCommitKey", "version": 1, "group": "g", "topic": "t",
                "partition": 0},
            {"type": "OffsetCommitValue", "version": 3, "offset": 9, "leaderEpoch": -1,
             "metadata": "", "commitTimestamp": 1685814551579}),
    _record(1, {"type": "GroupMetadataKey", "version": 2, "group": "g"}, None),
    _record(2, {"type": "GroupMetadataKey", "version": 2, "group": "g"},
            {"type": "GroupMetadataValue", "version": 3, "protocolType": "consumer",
             "generation": 1, "protocol": "range", "leader": "m", "currentStateTimestamp": 5,
             "members": [MEMBER]}),
    _record(3, {"type": "TransactionLogKey", "version": 0, "TransactionalId": "x"},
            {"type": "TransactionLogValue", "version": 1, "ProducerId": 5, "ProducerEpoch": 0,
             "TransactionTimeoutMs": 60000, "TransactionStatus": 1,
             "TransactionPartitions": [{"Topic": "t", "PartitionIds": [0]}],
             "TransactionLastUpdateTimestampMs": 7, "TransactionStartTimestampMs": 7,
             "PreviousProducerId": 5}),
    _record(4, None, {"type": "FeatureLevelRecord", "version": 0, "Name": "metadata.version",
                      "FeatureLevel": 11}),
    _record(5, {"type": "ControlRecordTypeSchema", "version": 0, "Type": 2,
                "controlType": "LEADER_CHANGE"},
            {"type": "LeaderChangeMessage", "version": 0, "Version": 0, "LeaderId": 1,
             "Voters": [{"VoterId": 1}], "GrantingVoters": [{"VoterId": 1}]}),
]  # fmt: skip


def kafka_dump() -> kd.KafkaFileDump:
    lines = []
    for offset, rest in enumerate(KAFKA_RESTS):
        lines += [_BATCH.format(offset), _RECORD.format(offset) + rest]
    return kd.KafkaFileDump("x", lines=lines)


def ours() -> list[dict]:
    return [{"type": "batch", "records": [record]} for record in copy.deepcopy(OURS)]


def test_each_of_kafkas_shapes_is_read():
    coordinator, tombstone, _, transaction, metadata, control = map(dd.kafka_decoded, KAFKA_RESTS)
    assert coordinator["key"] == {"type": 1, "group": "g", "topic": "t", "partition": 0}
    assert coordinator["value"]["version"] == 3 and coordinator["value"]["offset"] == 9
    assert tombstone == {"key": {"type": 2, "group": "g"}, "value": None}
    assert transaction["value"]["transactionStatus"] == "Ongoing"
    assert metadata == {"key": None, "value": {"version": 0, "name": "metadata.version",
                                               "featureLevel": 11,
                                               "type": "FEATURE_LEVEL_RECORD"}}  # fmt: skip
    assert control["key"] == {"controlType": "LeaderChange"} and control["value"]["leaderId"] == 1


def test_the_same_records_both_ways_have_no_difference():
    assert dd.compare_file(kafka_dump(), ours()) == ([], len(OURS))


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda o: o[0]["key_decoded"].update(version=0), "record 0 key.type: Kafka 1, klogspec 0"),
        (lambda o: o[0]["value_decoded"].update(offset=8), "record 0 value.offset: Kafka 9"),
        (lambda o: o[0]["value_decoded"].pop("leaderEpoch"), "record 0 value.leaderEpoch"),
        (lambda o: o[1].update(value_decoded={"type": "GroupMetadataValue", "version": 3}),
         "record 1 value: Kafka None"),
        (lambda o: o[2]["value_decoded"]["members"][0].update(clientHost="/x"),
         "record 2 value.members[0].clientHost"),
        (lambda o: o[2]["value_decoded"]["members"][0].update(
            subscription=_b64(b"\0\0\0\0\0\1\0\5plaim\xff\xff\xff\xff")),
         "record 2 value.members[0].subscription.topics[0]: Kafka 'plain', klogspec 'plaim'"),
        (lambda o: o[2]["value_decoded"]["members"][0].update(assignment="AAA="),
         "record 2 value.members[0].assignment: Kafka {"),
        (lambda o: o[3]["value_decoded"].update(TransactionStatus=4),
         "value.transactionStatus: Kafka 'Ongoing', klogspec 'CompleteCommit'"),
        (lambda o: o[3]["value_decoded"]["TransactionPartitions"][0]["PartitionIds"].append(1),
         "record 3 value.transactionPartitions[0].partitionIds"),
        (lambda o: o[3]["value_decoded"].update(NextProducerId=6), "value.nextProducerId"),
        (lambda o: o[4]["value_decoded"].update(type="FeatureRecord"),
         "record 4 value.type: Kafka 'FEATURE_LEVEL_RECORD', klogspec 'FEATURE_RECORD'"),
        (lambda o: o[5]["key_decoded"].update(controlType="KRAFT_VOTERS"), "record 5 key"),
        (lambda o: o[5]["value_decoded"].update(LeaderId=2), "value.leaderId: Kafka 1"),
        (lambda o: o.pop(), "6 records in Kafka's dump, 5 in ours"),
    ],
)  # fmt: skip
def test_a_difference_in_any_decoded_field_is_reported(change, expected):
    records = copy.deepcopy(OURS)
    change(records)
    mine = [{"type": "batch", "records": [record]} for record in records]
    found, _ = dd.compare_file(kafka_dump(), mine)
    assert len(found) == 1 and expected in found[0], found


def test_a_record_we_could_not_decode_is_a_difference():
    records = copy.deepcopy(OURS)
    records[0]["value_decoded"] = {"decode_error": {"reason": "r", "rule": "MSG-7"}, "base64": ""}
    found, _ = dd.compare_file(kafka_dump(), [{"type": "batch", "records": records}])
    assert any("record 0 value" in line and "decode_error" in line for line in found), found


def test_kafkas_text_that_is_not_its_json_is_reported():
    dump = kafka_dump()
    dump.lines[1] = _RECORD.format(0) + " key: {not json"
    found, _ = dd.compare_file(dump, ours())
    assert found and "record 0: Kafka's text not understood" in found[0]


@pytest.mark.broker
@pytest.mark.parametrize("version", VERSIONS)
def test_decoders_agree_with_kafka_on_the_broker_corpus(version, kafka_or_skip):
    """The broker's own __consumer_offsets, __transaction_state (its transactional workload)
    and __cluster_metadata, clean and killed: about 10 s."""
    corpus = kafka_or_skip(f"{version} broker", kafka_broker.broker_corpus, version)
    sets = {f"broker-{version}": corpus.root}
    differences, counts = kafka_or_skip(
        f"{version} DumpLogSegments", dd.differential, version, sets
    )
    assert differences == []
    for decoder in ("offsets", "transactions", "cluster_metadata"):
        assert counts[f"broker-{version}/{decoder}"] >= 10, counts


@pytest.mark.broker
@pytest.mark.corpus
@pytest.mark.parametrize("version", VERSIONS)
def test_decoders_agree_with_kafka_on_the_shared_corpus(corpus, version, kafka_or_skip):
    """Every internal-topic .log and KRaft snapshot of ../shared/kafka-corpus (Kafka 0.10.1
    to 3.x brokers, 118,857 records): about 20 s."""
    sets = {path.name: path for path in sorted(corpus.iterdir()) if path.is_dir()}
    differences, counts = kafka_or_skip(
        f"{version} DumpLogSegments", dd.differential, version, sets
    )
    assert differences == []
    assert sum(counts.values()) > 100_000
    assert counts["kafka-2018-offsets-index/offsets"] > 5000
    assert counts["kraft-3.5.0-and-ksql-txn/cluster_metadata"] > 10_000
    assert counts["kraft-ksql-transactional/transactions"] > 0
    assert counts["kraft-snapshots-idempotent/cluster_metadata"] > 400  # from its snapshots


def test_the_internal_topics_page_lists_every_format_difference():
    repo = Path(__file__).resolve().parent.parent
    page = (repo / "docs" / "internal-topics.md").read_text(encoding="utf-8")
    for what in dd.DECODE_FORMAT_DIFFERENCES:
        assert f"| {what} |" in page


# The same records as Kafka 4.0 to 4.3 print some of them (issue 23 item 4: every release of
# the matrix): 4.0's transaction text and control type name, 4.1-4.3's status id.
OLDER_RESTS = {
    3: " key: transaction_metadata::transactionalId=x payload: producerId:5,producerEpoch:0,"
    "state=Ongoing,partitions=[t-0],txnLastUpdateTimestamp=7,txnTimeoutMs=60000",
    5: " controlType: LEADER_CHANGE(2)",
}


@pytest.mark.parametrize(
    "rests",
    [OLDER_RESTS, {3: KAFKA_RESTS[3].replace('"Ongoing"', "1")}],
    ids=["4.0", "4.1-4.3"],
)
def test_the_older_releases_text_is_compared_too(rests):
    dump = kafka_dump()
    for offset, rest in rests.items():
        dump.lines[2 * offset + 1] = _RECORD.format(offset) + rest
    assert dd.compare_file(dump, ours()) == ([], len(OURS))
    changed = ours()
    changed[3]["records"][0]["value_decoded"]["TransactionPartitions"][0]["PartitionIds"] = [1]
    changed[5]["records"][0]["key_decoded"]["controlType"] = "KRAFT_VOTERS"
    found, _ = dd.compare_file(dump, changed)
    assert any(line.startswith("record 3 value.transactionPartitions") for line in found)
    assert len(found) == 2 and found[-1].startswith("record 5 key.controlType"), found
