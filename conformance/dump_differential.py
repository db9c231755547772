"""``klogspec dump --json`` against Kafka's own DumpLogSegments, file by file (issue 21 item 4).

``differential(version, files)`` dumps every file both ways and returns the differences,
one string each naming the file and the field. Kafka runs with ``--deep-iteration
--print-data-log`` (batches, records, payloads, index entries with their cross-checks with
the .log, transaction index and producer snapshot entries), by chunks of files, and with
``--index-sanity-check`` on the index files; ``klogspec dump`` runs with ``--print-data``,
``--verify-index-only`` and ``--index-sanity-check`` (kafka_dump.py parses Kafka's text).

Compared, field for field: every batch (offsets, count, position, size, magic, codec, CRC
and its validity, timestamp type and max timestamp, producer id/epoch, sequences, leader
epoch, transactional and control flags, delete horizon), every record (offset, timestamp,
key and value sizes, sequence, header keys, key and payload as text, control record type
and end-marker epoch), the trailing bytes, index entries, Kafka's index mismatches
against ours, the sanity check's verdict, transaction index and snapshot entries.

``FORMAT_DIFFERENCES`` lists what is shown differently on purpose, and so not compared; the
docs' CLI page prints it (docs/hooks/generated.py).
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from . import kafka_dump as kd

FORMAT_DIFFERENCES = {
    "payload bytes": "Kafka prints keys and payloads as UTF-8 text (invalid bytes become "
    "U+FFFD, a newline in a payload breaks the line); klogspec gives the bytes (base64 in "
    "JSON). Compared as Kafka's text of our bytes.",
    "header values": "Kafka prints header keys only; klogspec also header values (or sizes).",
    "control record values": "Kafka prints LeaderChange, SnapshotHeader/Footer, KRaftVersion "
    "and KRaftVoters values as JSON; klogspec names the type (and the end marker's epoch). "
    "The type is compared, the JSON not.",
    "legacy batches": "Kafka prints a v0/v1 entry as `offset: <last offset>` and each inner "
    "message's own CRC; klogspec gives the wrapper's base offset and CRC, not the inner "
    "messages' CRCs. The last offset and the wrapper's fields are compared.",
    "index mismatches": "Kafka prints one map of mismatched offsets per index (the last entry "
    "per offset) and one 'not found' list per time index; klogspec gives each entry's slot "
    "and kind, and marks those the spec allows (OIDX-7, TIDX-2, TIDX-9). Compared as Kafka's "
    "(index value, log value) pairs.",
    "errors": "Kafka stops a file at the first exception (a CRC-broken batch's records, an "
    "unknown codec) and prints the message; klogspec reports the error with its category, "
    "position and offset and goes on. Only what Kafka printed before it stopped is compared.",
    "an index without its .log": "Kafka cannot dump a .index or .timeindex whose .log is "
    "missing (NoSuchFileException); klogspec lists its entries and reports the missing .log "
    "only for the cross-checks. Such files are counted, not compared.",
    "summaries": "klogspec adds per-file summaries (valid bytes, unused index slots, "
    "non-consecutive offsets as pairs) that Kafka prints in other words or not at all.",
}

_CLI = "import sys; from klogspec.cli import main; sys.argv[0] = 'klogspec'; main()"
# Kafka's words for a control record's type: 4.4 decodes the KRaft ones (as JSON), 4.0 names
# every type but ABORT and COMMIT as `controlType: NAME(id)`.
CONTROL_WORDS = {
    " LeaderChange: ": "LEADER_CHANGE", " SnapshotHeader ": "SNAPSHOT_HEADER",
    " SnapshotFooter ": "SNAPSHOT_FOOTER", " KRaftVersion ": "KRAFT_VERSION",
    " KRaftVoters ": "KRAFT_VOTERS",
}  # fmt: skip


def klogspec_dump(files: list[Path], *options: str) -> dict[str, list[dict]]:
    """``klogspec dump --json OPTIONS FILES``: each file's events, its summary last."""
    argv = ["dump", "--json", "--no-progress", *options, *map(str, files)]
    done = subprocess.run([sys.executable, "-c", _CLI, *argv], capture_output=True)
    if done.returncode == 2:
        raise RuntimeError(f"klogspec dump could not run: {done.stderr.decode()[-2000:]}")
    events = defaultdict(list)
    for line in done.stdout.decode().splitlines():
        event = json.loads(line)
        events[event["file"]].append(event)
    return events


CHUNK_BYTES = 8 << 20  # of input files per Kafka JVM and klogspec run: bounds the memory


def differential(version: str, files: list[Path]) -> tuple[list[str], dict]:
    """The differences between Kafka's dump and ours for each of ``files`` (those
    DumpLogSegments reads), and counts of what was compared. The deep dumps go by chunks of
    files (about CHUNK_BYTES of them, whose dumps are ten times that as text), the index
    checks in one run each."""
    files = [Path(f) for f in files if kd.dumpable(f)]
    indexes = [f for f in files if f.suffix in (".index", ".timeindex")]
    indexes = [f for f in indexes if _segment_log(f).exists()]
    checks = (
        kd.run_dump_log_segments(version, indexes, ("--index-sanity-check",)),
        klogspec_dump(indexes, "--verify-index-only"),
        klogspec_dump(indexes, "--index-sanity-check"),
    )
    counts: dict[str, int] = defaultdict(int)
    differences = []
    for chunk in _chunks(files):
        differences += _differential_chunk(version, chunk, checks, counts)
    return differences, dict(counts)


def _chunks(files: list[Path]):
    chunk, size = [], 0
    for path in files:
        chunk.append(path)
        size += path.stat().st_size
        if size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _differential_chunk(version, files, checks, counts) -> list[str]:
    kafka_sanity, ours_verify, ours_sanity = checks
    kafka = kd.run_dump_log_segments(version, files)
    ours = klogspec_dump(files, "--print-data")
    differences = []
    for path in map(str, files):
        if Path(path).suffix in (".index", ".timeindex") and not _segment_log(path).exists():
            counts["indexes without their .log"] += 1
            continue
        compare = _COMPARERS[Path(path).suffix]
        found = compare(kafka[path], ours.get(path, []), counts)
        if Path(path).suffix in (".index", ".timeindex"):
            found += _compare_mismatches(kafka[path], ours_verify.get(path, []))
            found += _compare_sanity(kafka_sanity[path], ours_sanity.get(path, []))
        differences += [f"{path}: {difference}" for difference in found]
        counts["files"] += 1
    return differences


def _segment_log(path) -> Path:
    return Path(path).with_name(Path(path).name.split(".")[0] + ".log")


def _events(ours: list[dict], kind: str) -> list[dict]:
    return [event for event in ours if event["type"] == kind]


def _diff(where: str, kafka: dict, ours: dict) -> list[str]:
    return [
        f"{where} {key}: Kafka {value!r}, klogspec {ours.get(key)!r}"
        for key, value in kafka.items()
        if ours.get(key) != value
    ]


def _compare_log(kafka: kd.KafkaFileDump, ours: list[dict], counts) -> list[str]:
    parsed = kd.parse_log(kafka)
    batches = _events(ours, "batch")
    found = [f"Kafka's line not understood: {line[:120]}" for line in parsed["unparsed"]]
    complete = kafka.error is None  # else only what Kafka printed before it stopped
    if complete and len(parsed["batches"]) != len(batches):
        found.append(f"{len(parsed['batches'])} batches in Kafka's dump, {len(batches)} in ours")
    for theirs, mine in zip(parsed["batches"], batches, strict=False):
        where = f"batch at position {mine['position']}"
        found += _diff(where, _batch_fields(theirs), _batch_fields(_as_kafka(mine)))
        records = mine.get("records") or []
        if complete and len(theirs["records"]) != len(records):
            found.append(f"{where}: {len(theirs['records'])} records in Kafka's dump, "
                         f"{len(records)} in ours")  # fmt: skip
        for kafka_record, record in zip(theirs["records"], records, strict=False):
            expected = _record_as_kafka(record, mine)
            found += _diff(f"record {record['offset']}", _record_fields(kafka_record), expected)
            counts["records"] += 1
        counts["batches"] += 1
    summary = ours[-1] if ours else {}
    if complete and parsed["trailingBytes"] != (summary.get("trailingBytes") or 0):
        found.append(f"trailing bytes: Kafka {parsed['trailingBytes']}, "
                     f"klogspec {summary.get('trailingBytes')}")  # fmt: skip
    return found


def _batch_fields(batch: dict) -> dict:
    return {key: value for key, value in batch.items() if key != "records"}


def _as_kafka(batch: dict) -> dict:
    """Our batch event under Kafka's labels (a legacy entry: only what Kafka prints)."""
    out = {
        "lastOffset": batch["lastOffset"], "position": batch["position"],
        "timestampType": batch["timestampType"], "maxTimestamp": batch["maxTimestamp"],
        "size": batch["sizeBytes"], "magic": batch["magic"],
        "compresscodec": batch["compression"], "crc": batch["crc"], "isvalid": batch["crcValid"],
    }  # fmt: skip
    if batch["magic"] >= 2:
        for key in kd.V2_FIELDS:
            out[key] = batch[key]
    return out


def _record_fields(record: dict) -> dict:
    """Kafka's record under the labels of ``_record_as_kafka``: a control record's JSON cut
    off after its type's words, runs of U+FFFD made one (see FORMAT_DIFFERENCES)."""
    out = {k: v for k, v in record.items() if k not in ("isValid", "crc") and v is not None}
    json_value = _CONTROL_JSON.match(out["rest"])
    named = _CONTROL_NAMED.match(out["rest"])
    if json_value is not None:
        out["rest"] = f" control {CONTROL_WORDS[json_value[1]]}"
    elif named is not None:
        known = named[1] != "UNKNOWN"
        out["rest"] = f" control {named[1] if known else f'UNKNOWN({named[2]})'}"
    else:
        out["rest"] = _one_replacement(out["rest"])
    return out


_CONTROL_JSON = re.compile(rf"^({'|'.join(CONTROL_WORDS)})\{{.*\}}$", re.DOTALL)
_CONTROL_NAMED = re.compile(r"^ controlType: (\w+)\((-?\d+)\)$")
_REPLACEMENTS = re.compile("\ufffd+")


def _one_replacement(text: str) -> str:
    """Java's and Python's UTF-8 decoders agree on valid bytes and on where an invalid run
    is, not on how many U+FFFD they make of it: one each run."""
    return _REPLACEMENTS.sub("\ufffd", text)


def _record_as_kafka(record: dict, batch: dict) -> dict:
    out = {
        "offset": record["offset"], "timestampType": batch["timestampType"],
        "timestamp": record["timestamp"], "keySize": record["keySize"],
        "valueSize": record["valueSize"],
    }  # fmt: skip
    if batch["magic"] >= 2:
        out["sequence"] = record["sequence"]
        out["headerKeys"] = ",".join(header["key"] for header in record["headers"])
    control = record.get("control")
    if batch["isControl"] and batch["magic"] >= 2:
        out["rest"] = _control_text(control)
    else:
        out["rest"] = _data_text(record)
    return out


def _control_text(control: dict | None) -> str | None:
    """Kafka's words for an end marker; ``control TYPE`` for the others (as _record_fields
    puts Kafka's: their JSON is not compared)."""
    if control is None:
        return None
    if control["type"] in ("ABORT", "COMMIT"):
        return f" endTxnMarker: {control['type']} coordinatorEpoch: {control['coordinatorEpoch']}"
    if control["type"] == "UNKNOWN":
        return f" control UNKNOWN({control['typeId']})"
    return f" control {control['type']}"


def _data_text(record: dict) -> str:
    """`` key: K payload: V`` as Kafka's StringDecoder prints them (absent parts omitted)."""
    text = ""
    if record.get("key") is not None:
        text += " key: " + _utf8(record["key"])
    if record.get("value") is not None:
        text += " payload: " + _utf8(record["value"])
    return text


def _utf8(blob: str) -> str:
    return _one_replacement(base64.b64decode(blob).decode("utf-8", "replace"))


def _compare_entries(parse, kind: str, fields: dict[str, str]):
    """A comparer of index-like files: Kafka's entries against our events of ``kind``,
    ``fields`` mapping Kafka's label to ours."""

    def compare(kafka: kd.KafkaFileDump, ours: list[dict], counts) -> list[str]:
        parsed = parse(kafka)
        found = [f"Kafka's line not understood: {line[:120]}" for line in parsed["unparsed"]]
        if kafka.error is not None:
            found.append(f"Kafka failed: {kafka.error}")
        mine = [{k: e.get(v) for k, v in fields.items()} for e in _events(ours, kind)]
        theirs = [{k: e[k] for k in fields if e[k] is not None} for e in parsed["entries"]]
        if len(theirs) != len(mine):
            found.append(f"{len(theirs)} entries in Kafka's dump, {len(mine)} in ours")
        for slot, (kafka_entry, entry) in enumerate(zip(theirs, mine, strict=False)):
            found += _diff(f"entry {slot}", kafka_entry, entry)
        counts["entries"] += len(mine)
        return found

    return compare


def _compare_mismatches(kafka: kd.KafkaFileDump, ours: list[dict]) -> list[str]:
    """Kafka's mismatch lists against ours, as (index value, log value) pairs."""
    summary = ours[-1] if ours else {"mismatches": []}
    if kafka.path.endswith(".index"):
        theirs = sorted(kd.parse_index(kafka)["mismatches"].items())
        mine = sorted({m["indexValue"]: m["logValue"] for m in summary["mismatches"]}.items())
    else:
        parsed = kd.parse_time_index(kafka)
        theirs = sorted(parsed["timestampMismatches"] + parsed["offsetsNotFound"]
                        + parsed["outOfOrder"])  # fmt: skip
        mine = sorted((m["indexValue"], m["logValue"]) for m in summary["mismatches"])
    if theirs != mine:
        return [f"index mismatches: Kafka {theirs[:5]}, klogspec {mine[:5]}"]
    return []


def _compare_sanity(kafka: kd.KafkaFileDump, ours: list[dict]) -> list[str]:
    passed = any(line.endswith(" passed sanity check.") for line in kafka.lines)
    empty = any(line.endswith(" is empty.") for line in kafka.lines)
    verdict = (ours[-1] if ours else {}).get("sanityCheck")
    if empty or passed == (verdict == "passed"):
        return []
    said = "passed" if passed else f"failed ({(kafka.stderr or [kafka.error])[0]})"
    return [f"index sanity check: Kafka {said}, klogspec {verdict}"]


_COMPARERS = {
    ".log": _compare_log,
    ".checkpoint": _compare_log,
    ".index": _compare_entries(
        kd.parse_index, "offset_index_entry", {"offset": "offset", "position": "position"}
    ),
    ".timeindex": _compare_entries(
        kd.parse_time_index, "time_index_entry", {"timestamp": "timestamp", "offset": "offset"}
    ),
    ".txnindex": _compare_entries(
        kd.parse_txn_index, "txn_index_entry",
        {k: k for k in ("version", "producerId", "firstOffset", "lastOffset", "lastStableOffset")},
    ),
    ".snapshot": _compare_entries(
        kd.parse_snapshot, "producer_snapshot_entry",
        {"producerId": "producerId", "producerEpoch": "producerEpoch",
         "coordinatorEpoch": "coordinatorEpoch", "currentTxnFirstOffset": "currentTxnFirstOffset",
         "lastTimestamp": "timestamp", "firstSequence": "firstSequence",
         "lastSequence": "lastSequence", "lastOffset": "lastOffset", "offsetDelta": "offsetDelta",
         "timestamp": "timestamp"},
    ),
}  # fmt: skip
