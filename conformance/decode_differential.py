"""``klogspec dump --decode auto --json`` against DumpLogSegments' own decoders (issue 23 item 4).

``differential(version, sets)`` runs Kafka's DumpLogSegments with ``--deep-iteration
--print-data-log`` and one decoder (``--offsets-decoder``, ``--transaction-log-decoder``,
``--cluster-metadata-decoder``) on every ``.log`` of the matching internal-topic partitions, one
JVM per decoder for all files, and ``klogspec dump --decode auto --json`` on the same files, then
compares every record's decoded key and value field by field (nested arrays and structs too).

Kafka's text, as DumpLogSegments 4.4.0 prints it: a coordinator record as `` key:
{"type":"1","data":{...}} payload: {"version":"4","data":{...}}`` (``<DELETE>`` for a
tombstone), a metadata record as `` payload: {"type":"TOPIC_RECORD","version":0,"data":{...}}``,
a KRaft control record as `` LeaderChange: {...}``. ``DECODE_FORMAT_DIFFERENCES`` lists how
ours is shown differently on purpose, and how each is compared; docs/internal-topics.md
prints it (docs/hooks/generated.py).
"""

from __future__ import annotations

import base64
import json
import re
from collections import defaultdict
from pathlib import Path

from reference_impl.messages.message_reader import read_message
from reference_impl.messages.schema import Field, Message, Versions
from reference_impl.messages.wire import MessageDecodeError, Reader

from . import dump_differential
from . import kafka_dump as kd

DECODE_FORMAT_DIFFERENCES = {
    "record wrapper": 'Kafka wraps a coordinator key as `{"type": "N", "data": {...}}` and its '
    'value as `{"version": "N", "data": {...}}` (numbers as strings), a metadata value as '
    '`{"type": "TOPIC_RECORD", "version": N, "data": {...}}`; klogspec flattens the fields '
    "beside `type` (the schema's name, `OffsetCommitKey`, `TopicRecord`) and `version` (a "
    "coordinator key's record type). Compared: Kafka's type number with our key's version, "
    "Kafka's version with ours, Kafka's upper-case record type with our schema name in "
    "upper snake case, and the fields.",
    "field names": "Kafka's JSON converters write every field name in camelCase "
    "(`producerId`); klogspec writes the names of its field tables: camelCase for "
    "`__consumer_offsets`, the schema's PascalCase (`ProducerId`) for `__transaction_state`, "
    "`__cluster_metadata` and KRaft's control records. Compared with the first letter lowered.",
    "tombstones": "Kafka prints a null value as `<DELETE>`; klogspec gives `value_decoded: null`. "
    "Compared as the same.",
    "transaction status": "Kafka's transaction-log decoder prints `transactionStatus` as the "
    "state's name (`Ongoing`); klogspec gives the id (1) and the spec page the table "
    "(TXLOG-1). Compared through that table.",
    "consumer subscriptions": "For a group of protocol type `consumer`, Kafka decodes each "
    "member's `subscription` and `assignment` bytes as the consumer protocol's JSON (topics, "
    "user data, owned and assigned partitions, generation, rack); klogspec keeps them as "
    "base64, as for every other protocol type (where Kafka prints base64 too). Compared by "
    "reading our bytes as the consumer protocol (ConsumerProtocolSubscription and "
    "ConsumerProtocolAssignment, versions 0-3) on the test's side.",
    "Kafka 4.0": "DumpLogSegments 4.0 (Scala) prints a KRaft control record as its type's name "
    "only (`controlType: LEADER_CHANGE(2)`), and a `__transaction_state` record as text "
    "(`key: transaction_metadata::transactionalId=X payload: producerId:5,producerEpoch:0,"
    "state=Empty,partitions=[t-0],...`), without the version, the tagged fields or the start "
    "time, and with no partitions (`[]`) where the value holds null. Compared: the type's "
    "name, and the fields that text holds (partitions as sorted `topic-partition` names). "
    "From 4.1 on both are JSON; 4.1 to 4.3 print `transactionStatus` as the id, 4.4 as the name.",
    "control record keys": "Kafka names a KRaft control record's type by its words "
    "(`LeaderChange:`) and prints no key; klogspec decodes the key "
    "(`ControlRecordTypeSchema`, with `controlType`). Compared as the type's name.",
}

# DumpLogSegments' decoder option for the partitions of each internal topic
TOPICS = {
    "__consumer_offsets": "offsets",
    "__transaction_state": "transactions",
    "__cluster_metadata": "cluster_metadata",
}
# Kafka's TransactionState names by id (TransactionLogMessageFormatter; TXLOG-1's table)
TRANSACTION_STATES = (
    "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
    "Dead", "PrepareEpochFence",
)  # fmt: skip
_CONTROL = re.compile(r"^ (\w+):? (\{.*\})$", re.DOTALL)
_JSON = json.JSONDecoder()


def internal_topic_logs(root: Path) -> dict[str, list[Path]]:
    """Every ``.log`` of the internal-topic partitions under ``root``, and every KRaft
    snapshot of ``__cluster_metadata``, by Kafka's decoder."""
    found = defaultdict(list)
    for topic, decoder in TOPICS.items():
        for directory in sorted(root.rglob(f"{topic}-*")):
            if directory.is_dir():
                found[decoder] += sorted(directory.glob("*.log"))
                if decoder == "cluster_metadata":  # and KRaft's snapshots (.checkpoint)
                    found[decoder] += sorted(directory.glob("*-*.checkpoint"))
    return dict(found)


def differential(version: str, sets: dict[str, Path]) -> tuple[list[str], dict[str, int]]:
    """The differences between Kafka's decoders and ours on every internal-topic ``.log`` of
    each named root of ``sets``, and the records compared per ``set/decoder``."""
    by_decoder: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for name, root in sets.items():
        for decoder, files in internal_topic_logs(root).items():
            by_decoder[decoder] += [(name, path) for path in files]
    differences: list[str] = []
    counts: dict[str, int] = defaultdict(int)
    for decoder, named in sorted(by_decoder.items()):
        files = [path for _, path in named]
        options = (*kd.DEEP, kd.DECODER_OPTIONS[decoder])
        kafka = kd.run_dump_log_segments(version, files, options)
        ours = dump_differential.klogspec_dump(files, "--decode", "auto")
        for name, path in named:
            found = compare_file(kafka[str(path)], ours.get(str(path), []))
            differences += [f"{path}: {difference}" for difference in found[0]]
            counts[f"{name}/{decoder}"] += found[1]
    return differences, dict(counts)


def compare_file(kafka: kd.KafkaFileDump, ours: list[dict]) -> tuple[list[str], int]:
    """One file's decoded records both ways: the differences, and the records compared."""
    parsed = kd.parse_log(kafka)
    theirs = [record for batch in parsed["batches"] for record in batch["records"]]
    mine = [r for e in ours if e["type"] == "batch" for r in e.get("records") or []]
    found = [f"Kafka's line not understood: {line[:120]}" for line in parsed["unparsed"]]
    if kafka.error is not None:
        found.append(f"Kafka failed: {kafka.error}")
    if len(theirs) != len(mine):
        found.append(f"{len(theirs)} records in Kafka's dump, {len(mine)} in ours")
    for kafka_record, record in zip(theirs, mine, strict=False):
        where = f"record {record['offset']}"
        try:
            expected = kafka_decoded(kafka_record["rest"])
        except ValueError as exc:
            found.append(
                f"{where}: Kafka's text not understood ({exc}): {kafka_record['rest'][:120]}"
            )
            continue
        found += _diff(where, expected, _as_printed(ours_as_kafka(record), expected))
    return found, min(len(theirs), len(mine))


def kafka_decoded(rest: str) -> dict:
    """Kafka's text after a record's metadata as ``{"key": ..., "value": ...}`` in the shape
    ``ours_as_kafka`` gives (DECODE_FORMAT_DIFFERENCES): wrappers unwrapped, names camelCase."""
    control = _CONTROL.match(rest)
    if control is not None and control[1] not in ("key", "payload"):
        return {"key": {"controlType": control[1]}, "value": _camel(json.loads(control[2]))}
    named = _CONTROL_NAMED.match(rest)  # Kafka 4.0: the type's name only
    if named is not None:
        return {"key": {"controlType": _CONTROL_WORDS.get(named[1], named[1])}, "value": _PARTIAL}
    if rest.startswith(" key: transaction_metadata::"):
        return _kafka_40_transaction(rest)
    key = None
    if rest.startswith(" key: "):
        wrapped, end = _JSON.raw_decode(rest, len(" key: "))
        key = {"type": int(wrapped["type"]), **_camel(wrapped["data"])}
        rest = rest[end:]
    if not rest.startswith(" payload: "):
        raise ValueError("no payload")
    payload = rest.removeprefix(" payload: ")
    if payload == "<DELETE>":
        return {"key": key, "value": None}
    wrapped = json.loads(payload)
    value = {"version": int(wrapped["version"]), **_camel(wrapped["data"])}
    if key is None:  # a metadata record: Kafka's record type name
        value["type"] = wrapped["type"]
    status = value.get("transactionStatus")  # a name from 4.4 on, the id before
    if isinstance(status, int) and 0 <= status < len(TRANSACTION_STATES):
        value["transactionStatus"] = TRANSACTION_STATES[status]
    return {"key": key, "value": value}


def ours_as_kafka(record: dict) -> dict:
    """Our record's ``key_decoded`` and ``value_decoded`` in Kafka's shape."""
    key, value = record.get("key_decoded"), record.get("value_decoded")
    if key is not None and key.get("type") == "ControlRecordTypeSchema":
        return {"key": {"controlType": _CONTROL_WORDS.get(key.get("controlType"))},
                "value": _fields(value)}  # fmt: skip
    if key is None and value is not None and "type" in value:  # a metadata record
        return {"key": None, "value": {"type": _upper_snake(value["type"]),
                                       "version": value.get("version"), **_fields(value)}}  # fmt: skip
    if key is not None and "version" in key:
        key = {"type": key["version"], **_fields(key)}
    if value is not None and "version" in value and "decode_error" not in value:
        value = {"version": value["version"], **_fields(value)}
        status = value.get("transactionStatus")
        if isinstance(status, int) and 0 <= status < len(TRANSACTION_STATES):
            value["transactionStatus"] = TRANSACTION_STATES[status]
    return {"key": key, "value": _consumer_protocol(value)}


_CONTROL_NAMED = re.compile(r"^ controlType: (\w+)\((-?\d+)\)$")
_TRANSACTION_40 = re.compile(
    r"^ key: transaction_metadata::transactionalId=(?P<id>.*?) payload: (?:<DELETE>|"
    r"producerId:(?P<pid>-?\d+),producerEpoch:(?P<epoch>-?\d+),state=(?P<state>\w+),"
    r"partitions=\[(?P<partitions>.*)\],txnLastUpdateTimestamp=(?P<updated>-?\d+),"
    r"txnTimeoutMs=(?P<timeout>-?\d+))$",
    re.DOTALL,
)
_PARTIAL = "__partial__"  # in a value: Kafka printed only the fields given (or none)


def _kafka_40_transaction(rest: str) -> dict:
    """Kafka 4.0's transaction-log text (TransactionLog.formatRecordKeyAndValue, Scala), not
    JSON: the fields it prints, the partitions as sorted ``topic-partition`` names."""
    found = _TRANSACTION_40.match(rest)
    if found is None:
        raise ValueError("not Kafka 4.0's transaction_metadata text")
    key = {"type": 0, "transactionalId": found["id"]}
    if found["pid"] is None:
        return {"key": key, "value": None}
    value = {
        _PARTIAL: True, "producerId": int(found["pid"]), "producerEpoch": int(found["epoch"]),
        "transactionStatus": found["state"],
        "transactionPartitions": sorted(filter(None, found["partitions"].split(","))),
        "transactionLastUpdateTimestampMs": int(found["updated"]),
        "transactionTimeoutMs": int(found["timeout"]),
    }  # fmt: skip
    return {"key": key, "value": value}


def _as_printed(ours: dict, kafka: dict) -> dict:
    """Ours cut to what Kafka printed where it printed part of a value (_PARTIAL): nothing
    of a KRaft control record's value in 4.0, some fields of a 4.0 transaction."""
    value, printed = ours["value"], kafka["value"]
    if printed == _PARTIAL:
        return {**ours, "value": _PARTIAL}
    if not isinstance(printed, dict) or not printed.get(_PARTIAL) or not isinstance(value, dict):
        return ours
    if "transactionPartitions" in value:  # null (none yet) prints as [] too
        partitions = value["transactionPartitions"] or []
        value = {**value, "transactionPartitions": sorted(
            f"{p['topic']}-{n}" for p in partitions for n in p["partitionIds"]
        )}  # fmt: skip
    return {
        **ours,
        "value": {_PARTIAL: True} | {k: value.get(k, _ABSENT) for k in printed if k != _PARTIAL},
    }


# our control type names in Kafka's words: dump_differential's table, the other way
_CONTROL_WORDS = {
    ours: words.strip(" :") for words, ours in dump_differential.CONTROL_WORDS.items()
}


def _fields(decoded: dict | None) -> dict:
    if decoded is None:
        return {}
    if "decode_error" in decoded:
        return decoded
    return _camel({k: v for k, v in decoded.items() if k not in ("type", "version")})


def _camel(value):
    """Kafka's JSON names: the first letter lowered, at every depth."""
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _upper_snake(name: str) -> str:
    """``TopicRecord`` as Kafka's MetadataRecordType names it: ``TOPIC_RECORD``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def _field(name, kind, versions="0+", nullable="none", fields=()) -> Field:
    none = Versions.parse("none")
    return Field(name, kind, Versions.parse(versions), Versions.parse(nullable), None, none,
                 None, None, fields)  # fmt: skip


# The consumer protocol's Subscription and Assignment (versions 0-3, never flexible), from
# clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json of
# Kafka 4.4.0: what Kafka's offsets decoder shows of a `consumer` group member's bytes.
_TOPIC_PARTITION = (_field("Topic", "string"), _field("Partitions", "[]int32"))
_CONSUMER_PROTOCOL = {
    "subscription": (_field("Topics", "[]string"), _field("UserData", "bytes", nullable="0+"),
                     _field("OwnedPartitions", "[]TopicPartition", "1+", fields=_TOPIC_PARTITION),
                     _field("GenerationId", "int32", "2+"),
                     _field("RackId", "string", "3+", nullable="3+")),
    "assignment": (_field("AssignedPartitions", "[]TopicPartition", fields=_TOPIC_PARTITION),
                   _field("UserData", "bytes", nullable="0+")),
}  # fmt: skip


def _consumer_protocol(value: dict | None) -> dict | None:
    """A ``consumer`` group's members with their subscription and assignment bytes read as
    the consumer protocol, as Kafka's decoder shows them (DECODE_FORMAT_DIFFERENCES)."""
    if not value or value.get("protocolType") != "consumer" or not value.get("members"):
        return value
    members = [{**m, **{side: _read_consumer_protocol(side, m.get(side))
                        for side in _CONSUMER_PROTOCOL if m.get(side)}}
               for m in value["members"]]  # fmt: skip
    return {**value, "members": members}


def _read_consumer_protocol(side: str, blob: str):
    """ConsumerProtocol.deserialize*: an int16 version (a newer one read as 3, the fields it
    adds at the end left unread), then the message; the bytes, kept, where they do not read."""
    data = base64.b64decode(blob)
    reader = Reader(data)
    try:
        version = min(reader.int16(), 3)
        message = Message(side, Versions(0, 3), Versions.parse("none"), "", {},
                          _CONSUMER_PROTOCOL[side])  # fmt: skip
        return _camel(read_message(reader, message, version))
    except MessageDecodeError:
        return blob


def _diff(where: str, kafka, ours, path: str = "") -> list[str]:
    """Every leaf where Kafka's decoded record and ours differ, named by its path."""
    if isinstance(kafka, dict) and isinstance(ours, dict):
        found = []
        for name in [*kafka, *(k for k in ours if k not in kafka)]:
            found += _diff(where, kafka.get(name, _ABSENT), ours.get(name, _ABSENT),
                           f"{path}.{name}" if path else name)  # fmt: skip
        return found
    if isinstance(kafka, list) and isinstance(ours, list) and len(kafka) == len(ours):
        return [d for i, (a, b) in enumerate(zip(kafka, ours, strict=True)) for d in
                _diff(where, a, b, f"{path}[{i}]")]  # fmt: skip
    if kafka == ours:
        return []
    return [f"{where} {path}: Kafka {kafka!r:.200}, klogspec {ours!r:.200}"]


_ABSENT = "<absent>"
