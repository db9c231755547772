"""Kafka's own ``kafka-dump-log`` (DumpLogSegments) from the release jars, and its text parsed.

``run_dump_log_segments(version, files, options)`` runs DumpLogSegments of Kafka ``version`` on
many files in one JVM (DumpFiles.java in conformance/kafka_broker/) and returns one
``KafkaFileDump`` per file: its stdout lines, its stderr lines (index mismatches,
non-consecutive offsets, the messages of exceptions the tool catches) and the exception that
ended it, if any. ``options`` are DumpLogSegments' own: ``--deep-iteration``,
``--print-data-log``, ``--index-sanity-check``, ``--verify-index-only``, and the decoders
(``DECODER_OPTIONS``) for ``__consumer_offsets``, ``__transaction_state`` and
``__cluster_metadata`` records.

``parse_log``, ``parse_index``, ``parse_time_index``, ``parse_txn_index`` and
``parse_snapshot`` turn a file's lines into dicts named with Kafka's own labels
(``baseOffset``, ``compresscodec``, ``isvalid``...), for dump_differential.py to compare with
``klogspec dump --json``.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import kafka_jars
from .kafka_broker import MODULE_DIR

# The files DumpLogSegments reads (it picks the dumper by the suffix, and fails on a name
# without an offset prefix): segment files, producer snapshots and KRaft snapshots.
DUMPABLE = re.compile(
    r"^(\d{20}\.(log|index|timeindex|txnindex|snapshot)|\d{20}-\d{10}\.checkpoint"
    r"|bootstrap\.checkpoint)$"
)
DECODER_OPTIONS = {
    "offsets": "--offsets-decoder",  # __consumer_offsets: group and offset commit records
    "transactions": "--transaction-log-decoder",  # __transaction_state
    "cluster_metadata": "--cluster-metadata-decoder",  # __cluster_metadata, KRaft snapshots
}
DEEP = ("--deep-iteration", "--print-data-log")
MARK = "### "


@dataclass
class KafkaFileDump:
    path: str
    lines: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    error: str | None = None  # an exception DumpLogSegments let through
    exit_status: int | None = None  # its Exit.exit status, where it calls one


def dumpable(path: Path) -> bool:
    return DUMPABLE.match(Path(path).name) is not None


class DumpFilesError(RuntimeError):
    """Kafka's DumpLogSegments (through DumpFiles) ended with an error: a failure, not a skip."""


def run_dump_log_segments(
    version: str, files: list[Path], options=DEEP, timeout: float = 1800
) -> dict[str, KafkaFileDump]:
    """DumpLogSegments with ``options`` on each of ``files``, in one JVM."""
    java = kafka_jars.find_java()
    command = [
        java, "-Xmx768m", "-XX:+UseSerialGC", "-Dlog4j2.level=OFF",
        "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dsun.stderr.encoding=UTF-8",
        "-cp", kafka_jars.build(MODULE_DIR, version).classpath,
        "org.klogspec.broker.DumpFiles", *options,
    ]  # fmt: skip
    stdin = "".join(f"{path}\n" for path in files)
    done = subprocess.run(command, input=stdin.encode(), capture_output=True, timeout=timeout)
    if done.returncode != 0:
        raise DumpFilesError(f"DumpFiles failed: {done.stderr.decode()[-2000:]}")
    return split_by_file(done.stdout.decode("utf-8", "replace"))


def split_by_file(text: str) -> dict[str, KafkaFileDump]:
    """DumpFiles' output, file by file (its ``### klogspec-*`` lines)."""
    dumps: dict[str, KafkaFileDump] = {}
    current = None
    for line in text.split("\n"):
        if line.startswith(MARK + "klogspec-file "):
            current = dumps[line.removeprefix(MARK + "klogspec-file ")] = KafkaFileDump(
                line.removeprefix(MARK + "klogspec-file ")
            )
        elif current is None or line.startswith(MARK + "klogspec-end"):
            current = None
        elif line.startswith(MARK + "stderr "):
            current.stderr.append(line.removeprefix(MARK + "stderr "))
        elif line.startswith(MARK + "klogspec-error "):
            current.error = line.removeprefix(MARK + "klogspec-error ")
        elif line.startswith(MARK + "klogspec-exit "):
            current.exit_status = int(line.removeprefix(MARK + "klogspec-exit "))
        elif not line.startswith("Dumping "):
            current.lines.append(line)
    return dumps


_INT = r"(-?\d+)"
_BOOL = r"(true|false)"
_V2_BATCH = re.compile(
    rf"^baseOffset: {_INT} lastOffset: {_INT} count: {_INT} baseSequence: {_INT} "
    rf"lastSequence: {_INT} producerId: {_INT} producerEpoch: {_INT} "
    rf"partitionLeaderEpoch: {_INT} isTransactional: {_BOOL} isControl: {_BOOL} "
    rf"deleteHorizonMs: OptionalLong(?:\.empty|\[{_INT}\]) (?P<tail>position: .*)$"
)
V2_FIELDS = (
    "baseOffset", "lastOffset", "count", "baseSequence", "lastSequence", "producerId",
    "producerEpoch", "partitionLeaderEpoch", "isTransactional", "isControl", "deleteHorizonMs",
)  # fmt: skip
_LEGACY_BATCH = re.compile(r"^offset: (-?\d+) (?P<tail>position: .*)$")
_BATCH_TAIL = re.compile(
    rf"^position: {_INT} (\w+): {_INT} size: {_INT} magic: {_INT} compresscodec: (\w+) "
    rf"crc: {_INT} isvalid: {_BOOL}$"
)
_TAIL_FIELDS = (
    "position", "timestampType", "maxTimestamp", "size", "magic", "compresscodec", "crc",
    "isvalid",
)  # fmt: skip
# Kafka 4.0 to 4.2 (Scala) print a stray "}" after a legacy message's crc: `crc: 4034048038}`.
_RECORD = re.compile(
    rf"^\| offset: {_INT} (\w+): {_INT} keySize: {_INT} valueSize: {_INT}"
    rf"(?: sequence: {_INT} headerKeys: \[(.*?)\])?(?: isValid: {_BOOL} crc: {_INT}\}}?)?(?P<rest>.*)$",
    re.DOTALL,
)
_RECORD_FIELDS = (
    "offset", "timestampType", "timestamp", "keySize", "valueSize", "sequence", "headerKeys",
    "isValid", "crc",
)  # fmt: skip
_TRAILING = re.compile(r"^Found (\d+) invalid bytes at the end of (.*)$")


def _typed(names, values) -> dict:
    out = {}
    for name, value in zip(names, values, strict=True):
        if value is None or name in ("timestampType", "compresscodec", "headerKeys"):
            out[name] = value
        elif value in ("true", "false"):
            out[name] = value == "true"
        else:
            out[name] = int(value)
    return out


def parse_log(dump: KafkaFileDump) -> dict:
    """A .log or KRaft snapshot dump: ``{"batches": [...], "trailingBytes": n, "header": ...}``,
    each batch with its ``records``; a record's ``rest`` is what follows its metadata (a
    control record's marker, or `` key: ... payload: ...``, payload lines joined back)."""
    out: dict = {"batches": [], "trailingBytes": 0, "header": None, "unparsed": []}
    record = None
    for line in dump.lines:
        batch = _batch(line)
        if batch is not None:
            out["batches"].append(batch)
            record = None
        elif line.startswith("| offset: ") and out["batches"]:
            found = _RECORD.match(line)
            record = _typed(_RECORD_FIELDS, found.groups()[:9]) | {"rest": found["rest"]}
            out["batches"][-1]["records"].append(record)
        elif (trailing := _TRAILING.match(line)) is not None:
            out["trailingBytes"] = int(trailing[1])
        elif line.startswith(("Log starting offset: ", "Snapshot end offset: ", "KRaft boot")):
            out["header"] = line
        elif record is not None:  # a payload's own newline
            record["rest"] += "\n" + line
        elif line:
            out["unparsed"].append(line)
    return out


def _batch(line: str) -> dict | None:
    found = _V2_BATCH.match(line)
    if found is not None:
        batch = _typed(V2_FIELDS, found.groups()[: len(V2_FIELDS)])
    else:
        found = _LEGACY_BATCH.match(line)
        if found is None:
            return None
        batch = {"lastOffset": int(found[1])}
    tail = _BATCH_TAIL.match(found["tail"])
    return batch | _typed(_TAIL_FIELDS, tail.groups()) | {"records": []}


_INDEX_ENTRY = re.compile(r"^offset: (-?\d+) position: (-?\d+)$")
_TIME_ENTRY = re.compile(r"^timestamp: (-?\d+) offset: (-?\d+)$")
_TXN_ENTRY = re.compile(
    r"^version: (\d+) producerId: (-?\d+) firstOffset: (-?\d+) lastOffset: (-?\d+) "
    r"lastStableOffset: (-?\d+)$"
)
_SNAPSHOT_ENTRY = re.compile(
    r"^producerId: (-?\d+) producerEpoch: (-?\d+) coordinatorEpoch: (-?\d+) "
    r"currentTxnFirstOffset: OptionalLong(?:\.empty|\[(-?\d+)\]) lastTimestamp: (-?\d+)"
    r"(?: firstSequence: (-?\d+) lastSequence: (-?\d+) lastOffset: (-?\d+) "
    r"offsetDelta: (-?\d+) timestamp: (-?\d+))?\s*$"  # 4.0 ends a line without metadata in " "
)
_SNAPSHOT_FIELDS = (
    "producerId", "producerEpoch", "coordinatorEpoch", "currentTxnFirstOffset", "lastTimestamp",
    "firstSequence", "lastSequence", "lastOffset", "offsetDelta", "timestamp",
)  # fmt: skip


def _entries(dump: KafkaFileDump, pattern: re.Pattern, names: tuple[str, ...]) -> dict:
    out: dict = {"entries": [], "unparsed": [], "sanityCheck": None}
    for line in dump.lines:
        found = pattern.match(line)
        if found is not None:
            out["entries"].append(_typed(names, found.groups()))
        elif line.endswith(" passed sanity check."):
            out["sanityCheck"] = "passed"
        elif line and not line.endswith(" is empty."):
            out["unparsed"].append(line)
    return out


def parse_index(dump: KafkaFileDump) -> dict:
    """A .index dump: entries, and the mismatches Kafka printed: {index offset: log offset}."""
    out = _entries(dump, _INDEX_ENTRY, ("offset", "position"))
    out["mismatches"] = {
        int(a): int(b) for a, b in re.findall(r"^  Index offset: (-?\d+), log offset: (-?\d+)$",
                                              "\n".join(dump.stderr), re.M)
    }  # fmt: skip
    return out


def parse_time_index(dump: KafkaFileDump) -> dict:
    """A .timeindex dump: entries, and Kafka's three kinds of complaint as (a, b) pairs."""
    out = _entries(dump, _TIME_ENTRY, ("timestamp", "offset"))
    text = "\n".join(dump.stderr)
    pairs = lambda pattern: [(int(a), int(b)) for a, b in re.findall(pattern, text, re.M)]  # noqa: E731
    out["timestampMismatches"] = pairs(r"^  Index timestamp: (-?\d+), log timestamp: (-?\d+)$")
    out["outOfOrder"] = pairs(
        r"^  Index timestamp: (-?\d+), Previously indexed timestamp: (-?\d+)$"
    )
    out["offsetsNotFound"] = pairs(r"^Indexed offset: (-?\d+), found log offset: (-?\d+)$")
    return out


def parse_txn_index(dump: KafkaFileDump) -> dict:
    fields = ("version", "producerId", "firstOffset", "lastOffset", "lastStableOffset")
    return _entries(dump, _TXN_ENTRY, fields)


def parse_snapshot(dump: KafkaFileDump) -> dict:
    return _entries(dump, _SNAPSHOT_ENTRY, _SNAPSHOT_FIELDS)
