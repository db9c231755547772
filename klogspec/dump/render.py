"""How ``klogspec dump`` (cli.py) prints what a FileDump finds: JSON Lines (``JsonRenderer``),
or aligned text (``TextRenderer``), a heading per file, a row per event, then the summary."""

from __future__ import annotations

import base64
import json

import click
from rich.console import Console
from rich.markup import escape

from .file_dump import DumpOptions, FileDump


class JsonRenderer:
    """JSON Lines: each event, then the file's summary, one object per line."""

    def __init__(self) -> None:
        self.out = click.get_text_stream("stdout")

    def start(self, file_dump: FileDump) -> None:
        pass

    def event(self, event: dict) -> None:
        records = event.get("records")
        if records is None or isinstance(records, list):
            self.out.write(_json(event) + "\n")
            return
        # a batch's records are written as they are decoded, never held together: the same
        # line as json.dumps of the whole event ("records" is its last key)
        head = _json({key: value for key, value in event.items() if key != "records"})
        self.out.write(head[:-1] + ',"records":[')
        for n, record in enumerate(records):
            self.out.write(("," if n else "") + _json(record))
        self.out.write("]}\n")

    def finish(self, file_dump: FileDump) -> None:
        self.event(file_dump.summary)


# one encoder for every line: json.dumps with options builds a new one per call, which was
# a tenth of `dump --deep --json`'s time (a line per record)
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _json(value) -> str:
    return _ENCODER.encode(value)


# Columns of the text output: (heading, event key, minimum width). Rows are plain
# aligned text written directly: a rich Table costs about a millisecond per row,
# and a segment can hold a million batches.
_COLUMNS = {
    "batch": [
        ("baseOffset", "baseOffset", 10), ("lastOffset", "lastOffset", 10), ("count", "count", 5),
        ("position", "position", 9), ("size", "sizeBytes", 6), ("magic", "magic", 5),
        ("codec", "compression", 6), ("crc", "crc", 10), ("valid", "crcValid", 5),
        ("producerId", "producerId", 10), ("epoch", "producerEpoch", 5),
        ("baseSeq", "baseSequence", 7), ("lastSeq", "lastSequence", 7),
        ("leaderEpoch", "partitionLeaderEpoch", 11), ("txn", "isTransactional", 5),
        ("ctrl", "isControl", 5), ("timestampType", "timestampType", 13),
        ("maxTimestamp", "maxTimestamp", 13), ("deleteHorizonMs", "deleteHorizonMs", 15),
    ],
    "offset_index_entry": [
        ("slot", "slot", 6), ("offset", "offset", 12), ("position", "position", 10)
    ],
    "time_index_entry": [
        ("slot", "slot", 6), ("timestamp", "timestamp", 13), ("offset", "offset", 12)
    ],
    "txn_index_entry": [
        ("version", "version", 7), ("producerId", "producerId", 10),
        ("firstOffset", "firstOffset", 11), ("lastOffset", "lastOffset", 10),
        ("lastStableOffset", "lastStableOffset", 16),
    ],
    "producer_snapshot_entry": [
        ("producerId", "producerId", 10), ("epoch", "producerEpoch", 5),
        ("firstSeq", "firstSequence", 8), ("lastSeq", "lastSequence", 7),
        ("lastOffset", "lastOffset", 10), ("offsetDelta", "offsetDelta", 11),
        ("timestamp", "timestamp", 13), ("coordEpoch", "coordinatorEpoch", 10),
        ("txnFirstOffset", "currentTxnFirstOffset", 14),
    ],
    "offset_checkpoint_entry": [
        ("topic", "topic", 24), ("partition", "partition", 9), ("offset", "offset", 12)
    ],
    "leader_epoch_entry": [("epoch", "epoch", 8), ("startOffset", "startOffset", 12)],
    "partition_metadata": [("version", "version", 7), ("topicId", "topicId", 22)],
    "property": [("key", "key", 20), ("value", "value", 24)],
    "quorum_state": [
        ("dataVersion", "data_version", 11), ("leaderId", "leaderId", 8),
        ("leaderEpoch", "leaderEpoch", 11), ("votedId", "votedId", 7),
    ],
    "clean_shutdown": [
        ("version", "version", 7), ("brokerEpoch", "brokerEpoch", 12), ("readable", "readable", 8)
    ],
}  # fmt: skip
_LEFT_ALIGNED = {"topic", "key", "value", "topicId", "compression", "timestampType"}


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


class TextRenderer:
    """Aligned text: a heading per file, a column header, rows, then the summary."""

    def __init__(self, console: Console, options: DumpOptions) -> None:
        self.console = console
        self.out = console.file
        self.options = options

    def start(self, file_dump: FileDump) -> None:
        self.widths: dict[str, list[int]] = {}
        summary = file_dump.summary
        where = [file_dump.info.kind.value.replace("_", " ")]
        for key, label in (
            ("baseOffset", "base offset"),
            ("endOffset", "end offset"),
            ("epoch", "epoch"),
        ):
            if key in summary:
                where.append(f"{label} {summary[key]}")
        where.append(_count(file_dump.size_bytes, "byte", "bytes"))
        piece = file_dump.piece
        if piece is not None:  # a quarantined piece: say whose bytes, and whose positions
            end = file_dump.origin + file_dump.size_bytes
            where.append(
                f"quarantined bytes [{file_dump.origin}, {end}) of {piece.original}, "
                "positions are that file's"
            )
        self.console.print(f"[bold]{escape(file_dump.file)}[/]  [dim]{escape(', '.join(where))}[/]")

    def event(self, event: dict) -> None:
        columns = _COLUMNS[event["type"]]
        if event["type"] not in self.widths:
            self.widths[event["type"]] = [max(width, len(head)) for head, _, width in columns]
            self._row(event["type"], [head for head, _, _ in columns], header=True)
        self._row(event["type"], [_cell(event[key]) for _, key, _ in columns])
        for record in event.get("records") or ():
            self.out.write(f"  | {self._record(record)}\n")

    def _row(self, kind: str, cells: list[str], header: bool = False) -> None:
        widths = self.widths[kind]
        parts = []
        for i, ((_, key, _), cell) in enumerate(zip(_COLUMNS[kind], cells, strict=True)):
            widths[i] = max(widths[i], len(cell))
            parts.append(cell.ljust(widths[i]) if key in _LEFT_ALIGNED else cell.rjust(widths[i]))
        self.out.write(("  " + "  ".join(parts)).rstrip() + "\n")

    def _record(self, record: dict) -> str:
        text = f"offset: {record['offset']} timestamp: {record['timestamp']} "
        text += f"keySize: {record['keySize']} valueSize: {record['valueSize']}"
        text += f" sequence: {record['sequence']}"
        text += " headerKeys: [" + ",".join(h["key"] for h in record["headers"]) + "]"
        if record.get("control"):
            text += " control: " + " ".join(f"{k}={v}" for k, v in record["control"].items())
        if self.options.print_data:
            text += f" key: {_preview(record['key'])} payload: {_preview(record['value'])}"
        if "key_decoded" in record:  # kafka-dump-log's decoders print the messages as JSON
            text += f" key_decoded: {_compact(record['key_decoded'])}"
            text += f" value_decoded: {_compact(record['value_decoded'])}"
        return text

    def finish(self, file_dump: FileDump) -> None:
        s = file_dump.summary
        facts = []
        if s["batches"] is not None:
            facts.append(_count(s["batches"], "batch", "batches"))
        else:
            facts.append(_count(s["entries"], "entry", "entries"))
        if "unusedSlots" in s and s["unusedSlots"]:
            facts.append(f"{s['unusedSlots']} unused (zero) slots")
        if s["validBytes"] is not None:
            facts += _framed_bytes(s)
        if s["trailingBytes"]:
            facts.append(f"[red]{s['trailingBytes']} invalid bytes at the end[/]")
        if s.get("sanityCheck"):
            colour = "green" if s["sanityCheck"] == "passed" else "red"
            facts.append(f"[{colour}]sanity check {s['sanityCheck']}[/]")
        if s.get("snapshotFrame"):
            facts.append(f"[red]KRAFT-1: snapshot {escape(s['snapshotFrame'])}[/]")
        decoded = s.get("decoded")
        if decoded is not None:
            facts.append(_decoded_fact(decoded))
        if s.get("nonConsecutiveCount"):
            facts.append(f"{s['nonConsecutiveCount']} non-consecutive offsets")
        if s.get("maxBytesReached"):
            facts[0] += f" in the first {_count(s['readBytes'], 'byte', 'bytes')}"
            stop = f"--max-bytes stopped the dump, {s['sizeBytes']} bytes in the file"
            if s.get("nextEntryBytes") is not None:
                stop += f", the next batch is {s['nextEntryBytes']} bytes"
            facts.append(f"[yellow]{stop}[/]")
        elif s["entries"] == 0 and s["batches"] in (None, 0) and not s["errors"] + s["ioErrors"]:
            facts.insert(0, "empty")
        self.console.print("  " + ", ".join(facts))
        for m in s["mismatches"]:
            allowed = f" [dim](allowed by {m['allowedBy']})[/]" if m["allowedBy"] else ""
            colour = "yellow" if m["allowedBy"] else "red"
            self.console.print(
                f"  [{colour}]mismatch[/] {m['kind']} at slot {m['slot']}: "
                f"index {m['indexValue']}, log {m['logValue']}{allowed}"
            )
        for problem in s["ioErrors"]:
            self.console.print(f"  [red]unreadable[/] {escape(problem['message'])}")
        for e in s["errors"]:
            where = ", ".join(f"{k} {e[k]}" for k in ("position", "offset") if e.get(k) is not None)
            where = f" ({where})" if where else ""
            self.console.print(f"  [red]error[/] {e['category']}: {escape(e['message'])}{where}")
        self.console.print()


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _decoded_fact(decoded: dict) -> str:
    if decoded["decoder"] is None:
        return "[yellow]not an internal topic's file: records not decoded[/]"
    fact = f"{_count(decoded['records'], 'record', 'records')} decoded ({decoded['decoder']})"
    if decoded["errors"]:
        first = decoded["errorExamples"][0]
        fact += (
            f", [red]{decoded['errors']} did not decode[/] (first at offset {first['offset']}: "
            f"{escape(first['reason'])}, {first['rule']})"
        )
    return fact


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _preview(blob: str | None) -> str:
    """A base64 payload shown as text when it is UTF-8, its unprintable characters escaped
    (a control record's key is ``\\x00\\x00\\x00\\x01``, never raw NUL bytes), else as
    hex."""
    if blob is None:
        return "null"
    raw = base64.b64decode(blob)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + raw.hex()
    return "".join(ch if ch.isprintable() and ch != "\\" else _escaped(ch) for ch in text)


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def _framed_bytes(s: dict) -> list[str]:
    """The bytes the walk framed: "valid" only when no batch among them failed its CRC (a
    quarantined slice starts with the batch that stopped recovery, issue 20)."""
    failed = s.get("crcFailures") or 0
    if not failed:
        return [f"{s['validBytes']} valid bytes"]
    first = min(
        (e["position"] for e in s["errors"] if e.get("category") in _CRC_CATEGORIES),
        default=None,
    )
    at = "" if first is None else f", the first at position {first}"
    return [
        f"[red]{_count(failed, 'batch', 'batches')} failing the CRC check{at}[/]",
        f"{s['validBytes']} bytes in whole batches",
    ]


_CRC_CATEGORIES = ("crc_mismatch", "invalid_batch_size")
