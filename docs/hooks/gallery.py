"""The format gallery: every binary format as a field table and a byte-layout diagram, read
from the Kaitai Struct specs (``kaitai/*.ksy``), plus an annotated hex dump of one v2 batch
built by the reference encoder.

Offsets are computed while sizes are fixed; after the first field of variable size
(a varint, a length-prefixed byte string, the rest of the entry) offsets are relative to
nothing and the table says so. ``if`` conditions on ``magic`` are evaluated for the variant
shown (legacy v0 or v1); others are kept and printed as the field's condition.
"""

from __future__ import annotations

import html
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import yaml

PRIMITIVES = {
    "u1": (1, "uint8"),
    "s1": (1, "int8"),
    "u2": (2, "uint16"),
    "s2": (2, "int16"),
    "u4": (4, "uint32"),
    "s4": (4, "int32"),
    "u8": (8, "uint64"),
    "s8": (8, "int64"),
}
VARINTS = {"vlq_zigzag(32)": ("varint", "1-5"), "vlq_zigzag(64)": ("varlong", "1-10")}
STRUCTURAL = {"unparsed_tail", "partial_entry"}  # validity checks, not fields of the format
BYTES_PER_ROW = 16


@dataclass
class Field:
    name: str  # the ksy id
    kafka: str  # Kafka's name (-orig-id), or the ksy id
    type: str
    offset: int | None  # None once a variable-size field came before
    size: int | None  # None when variable
    size_text: str
    doc: str = ""
    condition: str = ""


@dataclass
class Part:
    ksy: str  # file stem in kaitai/
    type: str | None  # a type under ``types`` (dotted for imported ones), None for the root
    stop_before: str | None = None
    context: dict = field(default_factory=dict)


@dataclass
class Format:
    title: str
    slug: str
    spec: str  # the spec page (site path) that defines it
    parts: list[Part]
    intro: str = ""


GALLERY = [
    Format(
        "Record batch v2 (magic 2)",
        "record-batch-v2",
        "spec/formats/record-batch-v2.md",
        [
            Part("kafka_log_segment", "log_entry", stop_before="body"),
            Part("kafka_log_segment", "record_batch_v2", context={"magic": 2}),
        ],
        "Every entry of a `.log` file starts with the 12 bytes of framing (baseOffset, "
        "batchLength); a magic 2 entry continues with the rest of the 61-byte batch header, "
        "then its records.",
    ),
    Format(
        "Record (v2)",
        "record-v2",
        "spec/formats/record-batch-v2.md",
        [
            Part("kafka_log_segment", "record", stop_before="body"),
            Part("kafka_log_segment", "record_body"),
        ],
        "One record inside a v2 batch (or inside its decompressed stream). Every length and "
        "delta is a zigzag varint, so no field after the first has a fixed offset.",
    ),
    Format(
        "Record header (v2)",
        "record-header-v2",
        "spec/formats/record-batch-v2.md",
        [Part("kafka_log_segment", "header")],
    ),
    Format(
        "Legacy message v0 (magic 0)",
        "legacy-message-v0",
        "spec/formats/legacy-message.md",
        [
            Part("kafka_log_segment", "log_entry", stop_before="body"),
            Part("kafka_log_segment", "legacy_message", context={"magic": 0}),
        ],
        "One message per entry; a compressed message wraps a whole inner message set in its value.",
    ),
    Format(
        "Legacy message v1 (magic 1)",
        "legacy-message-v1",
        "spec/formats/legacy-message.md",
        [
            Part("kafka_log_segment", "log_entry", stop_before="body"),
            Part("kafka_log_segment", "legacy_message", context={"magic": 1}),
        ],
        "As v0, with an 8-byte timestamp after the attributes.",
    ),
    Format(
        "Control record key",
        "control-record-key",
        "spec/formats/control-records.md",
        [Part("kafka_control_record", None)],
    ),
    Format(
        "EndTransactionMarker (control record value)",
        "end-transaction-marker",
        "spec/formats/control-records.md",
        [Part("kafka_control_record", "end_transaction_marker")],
    ),
    Format(
        "Offset index entry (`.index`)",
        "offset-index",
        "spec/formats/offset-index.md",
        [Part("kafka_offset_index", "entry")],
        "The file is these 8-byte entries end to end, with no header.",
    ),
    Format(
        "Time index entry (`.timeindex`)",
        "time-index",
        "spec/formats/time-index.md",
        [Part("kafka_time_index", "entry")],
        "The file is these 12-byte entries end to end, with no header.",
    ),
    Format(
        "Transaction index entry (`.txnindex`)",
        "transaction-index",
        "spec/formats/transaction-index.md",
        [Part("kafka_transaction_index", "aborted_txn")],
        "The file is these 34-byte AbortedTxn entries end to end, with no header.",
    ),
    Format(
        "Producer snapshot (`.snapshot`) header",
        "producer-snapshot",
        "spec/formats/producer-snapshot.md",
        [Part("kafka_producer_snapshot", None)],
        "A 10-byte header, then `num_entries` producer entries.",
    ),
    Format(
        "Producer snapshot entry",
        "producer-snapshot-entry",
        "spec/formats/producer-snapshot.md",
        [Part("kafka_producer_snapshot", "producer_entry")],
    ),
]


# --- reading the .ksy files ---------------------------------------------------------------


class KsyLibrary:
    def __init__(self, kaitai_dir: Path) -> None:
        self.dir = kaitai_dir
        self._specs: dict[str, dict] = {}

    def spec(self, stem: str) -> dict:
        if stem not in self._specs:
            text = (self.dir / f"{stem}.ksy").read_text(encoding="utf-8")
            self._specs[stem] = yaml.safe_load(text)
        return self._specs[stem]

    def type_def(self, stem: str, name: str | None) -> dict:
        spec = self.spec(stem)
        if name is None:
            return spec
        node = spec
        for part in name.split("."):
            node = node["types"][part]
        return node

    def fixed_size(self, stem: str, type_name: str) -> int | None:
        """The size of a user type when every field is fixed, else None."""
        try:
            node = self.type_def(stem, type_name)
        except KeyError:
            return None
        total = 0
        for entry in node.get("seq", []):
            if entry["id"] in STRUCTURAL:
                continue
            _, size, _ = self._size(stem, entry, {}, {})
            if size is None or "repeat" in entry or "if" in entry:
                return None
            total += size
        return total

    def _size(self, stem: str, entry: dict, names: dict, context: dict):
        """(type text, size or None, size text) of one seq entry."""
        ftype = entry.get("type")
        if isinstance(ftype, dict):  # switch-on
            ftype = "bytes"
        if "size" in entry:
            size = entry["size"]
            tname = ftype if isinstance(ftype, str) and ftype != "bytes" else "bytes"
            if isinstance(size, int):
                return tname, size, str(size)
            return tname, None, _expr_text(str(size), names)
        if entry.get("size-eos"):
            return ftype or "bytes", None, "rest"
        if ftype in PRIMITIVES:
            size, name = PRIMITIVES[ftype]
            return name, size, str(size)
        if ftype in VARINTS:
            name, text = VARINTS[ftype]
            return name, None, text
        if isinstance(ftype, str):
            base = ftype.split("(")[0]
            size = self.fixed_size(stem, base)
            return base, size, str(size) if size is not None else "variable"
        return "bytes", None, "variable"

    def fields(self, part: Part, start: int | None) -> list[Field]:
        node = self.type_def(part.ksy, part.type)
        names: dict[str, str] = {}
        offset = start
        out: list[Field] = []
        for entry in node.get("seq", []):
            fid = entry["id"]
            if fid == part.stop_before:
                break
            if fid in STRUCTURAL:
                continue
            names[fid] = entry.get("-orig-id", fid)
            condition = ""
            if "if" in entry:
                verdict = _evaluate(str(entry["if"]), part.context)
                if verdict is False:
                    continue
                if verdict is None:
                    condition = f"present when {_expr_text(str(entry['if']), names)}"
            tname, size, size_text = self._size(part.ksy, entry, names, part.context)
            if "repeat" in entry:
                count = entry.get("repeat-expr")
                count_text = _expr_text(str(count), names) if count is not None else "n"
                tname = f"{tname}[]"
                size_text = f"{count_text} × {size_text}"
                size = None
            out.append(
                Field(
                    fid,
                    entry.get("-orig-id", fid),
                    tname,
                    offset,
                    size,
                    size_text,
                    _first_paragraph(entry.get("doc", "")),
                    condition,
                )
            )
            if offset is not None:
                offset = offset + size if size is not None and not condition else None
        return out

    def layout(self, fmt: Format) -> list[Field]:
        out: list[Field] = []
        offset: int | None = 0
        for part in fmt.parts:
            fields = self.fields(part, offset)
            out.extend(fields)
            if fields:
                last = fields[-1]
                offset = (
                    last.offset + last.size
                    if last.offset is not None and last.size is not None and not last.condition
                    else None
                )
        return out

    def doc(self, fmt: Format) -> str:
        part = fmt.parts[-1]
        return _first_paragraph(self.type_def(part.ksy, part.type).get("doc", ""))


def _evaluate(expression: str, context: dict) -> bool | None:
    """A ksy ``if`` over the context's names: True/False, or None when it needs the data."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", expression)) - {"and", "or", "not"}
    if not names or not names <= set(context):
        return None
    return bool(eval(expression, {"__builtins__": {}}, dict(context)))  # noqa: S307 - our own ksy


def _expr_text(expression: str, names: dict[str, str]) -> str:
    """``len_key.value`` -> ``keyLength``: a size or condition in Kafka's field names."""
    expression = re.sub(r"\.value\b", "", expression.strip())
    return re.sub(r"[a-z_][a-z0-9_]*", lambda m: names.get(m.group(0), m.group(0)), expression)


def _first_paragraph(doc: str) -> str:
    return " ".join(doc.strip().split("\n\n")[0].split())


# --- rendering ------------------------------------------------------------------------------

PALETTE = [
    "#8ecae6",
    "#ffb703",
    "#a7c957",
    "#f4a261",
    "#cdb4db",
    "#90e0ef",
    "#e9c46a",
    "#b5e48c",
    "#ffafcc",
    "#bde0fe",
    "#ddbea9",
    "#c7f9cc",
    "#fcbf49",
    "#d0d1ff",
]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def field_table(fields: list[Field]) -> str:
    lines = [
        "| Offset | Size | Type | Field | Description |",
        "| ---: | ---: | --- | --- | --- |",
    ]
    for f in fields:
        offset = str(f.offset) if f.offset is not None else "…"
        name = f.kafka
        doc = f.doc
        if f.kafka != f.name:
            doc = f"{doc} (ksy: `{f.name}`)".strip()
        if f.condition:
            doc = f"*{f.condition}.* {doc}".strip()
        lines.append(
            f"| {offset} | {_cell(f.size_text)} | {f.type} | {name} | {_cell(doc) or ' '} |"
        )
    return "\n".join(lines)


def layout_svg(fields: list[Field], title: str) -> str:
    """Rows of 16 byte cells; fixed fields at their offsets, variable ones as dashed boxes of
    nominal width after them."""
    cell, row_h, gutter, top = 44, 46, 48, 22
    boxes: list[tuple[int, int, Field, int, bool]] = []  # (start, width in cells, field, color)
    pos = 0
    for i, f in enumerate(fields):
        color = i % len(PALETTE)
        if f.offset is not None and f.size is not None and not f.condition:
            boxes.append((f.offset, f.size, f, color, False))
            pos = f.offset + f.size
        else:
            nominal = 3 if f.type in ("varint", "varlong") else 4
            if f.size is not None:
                nominal = min(f.size, 8)
            left = BYTES_PER_ROW - pos % BYTES_PER_ROW
            if nominal > left:  # a box of nominal width never wraps: shrink it, or go on a new row
                if left >= 2:
                    nominal = left
                else:
                    pos += left
            boxes.append((pos, nominal, f, color, True))
            pos += nominal
    rows = max(1, -(-pos // BYTES_PER_ROW))
    width = gutter + BYTES_PER_ROW * cell + 2
    height = top + rows * row_h + 4
    parts = [
        f'<svg class="klog-layout" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" role="img" aria-label="{html.escape(title)}: byte layout">',
        f"<title>{html.escape(title)}: byte layout</title>",
    ]
    first_variable = next((s for s, _, _, _, dashed in boxes if dashed), None)
    if first_variable != 0:  # byte numbers only over a fixed start
        for b in range(BYTES_PER_ROW):
            x = gutter + b * cell + cell / 2
            parts.append(f'<text class="klog-tick" x="{x}" y="14" text-anchor="middle">{b}</text>')
    for r in range(rows):
        y = top + r * row_h
        label = f"{r * BYTES_PER_ROW}"
        if first_variable is not None and r * BYTES_PER_ROW >= first_variable:
            label = "…"
        parts.append(
            f'<text class="klog-tick" x="{gutter - 8}" y="{y + row_h / 2 + 4}" '
            f'text-anchor="end">{label}</text>'
        )
    for start, size, f, color, dashed in boxes:
        at = start
        remaining = size
        while remaining > 0:
            row, col = divmod(at, BYTES_PER_ROW)
            span = min(remaining, BYTES_PER_ROW - col)
            x = gutter + col * cell
            y = top + row * row_h
            w = span * cell
            dash = ' stroke-dasharray="5 3"' if dashed else ""
            tip = f"{f.kafka}: {f.type}, {f.size_text} byte(s)"
            if f.offset is not None and not dashed:
                tip += f" at offset {f.offset}"
            parts.append(
                f'<g><title>{html.escape(tip)}</title><rect x="{x + 1}" y="{y + 1}" '
                f'width="{w - 2}" height="{row_h - 4}" rx="3" fill="{PALETTE[color]}" '
                f'stroke="#37474f"{dash}/>'
            )
            text = _fit(f.kafka + (" …" if dashed else ""), w)
            if text:
                parts.append(
                    f'<text class="klog-field" x="{x + w / 2}" y="{y + row_h / 2 + 3}" '
                    f'text-anchor="middle">{html.escape(text)}</text>'
                )
            parts.append("</g>")
            at += span
            remaining -= span
    parts.append("</svg>")
    return "".join(parts)


def _fit(text: str, width: float) -> str:
    per_char = 7.0
    if len(text) * per_char + 6 <= width:
        return text
    keep = int((width - 6) / per_char) - 1
    return text[:keep] + "…" if keep >= 3 else ""


def gallery_page(library: KsyLibrary, example_section: str) -> str:
    out = [
        "---",
        "hide: [navigation]",
        "---",
        "",
        "# Format gallery",
        "",
        "Every binary format of a Kafka log directory, as a table of fields and a byte-layout "
        "diagram. Both are generated when the site is built from the Kaitai Struct specs in "
        "`kaitai/` (the same files the test suite compiles and cross-checks against the reference "
        "implementation); the spec pages are normative, and link from each section. Fields have "
        "Kafka's names (the ksy ids follow each description). All integers are big-endian. "
        "Offsets count from the start of the structure; **…** marks an offset that depends on the "
        "lengths before it, and a dashed box a field of variable size.",
        "",
        "The text formats (checkpoint files, `partition.metadata`) are in "
        "[checkpoint files](spec/formats/checkpoint-files.md).",
        "",
        "| Format | Fixed size | Spec |",
        "| --- | ---: | --- |",
    ]
    layouts = []
    for fmt in GALLERY:
        fields = library.layout(fmt)
        layouts.append((fmt, fields))
        fixed = 0
        for f in fields:
            if f.offset is None or f.size is None or f.condition:
                break
            fixed = f.offset + f.size
        total = (
            f"{fixed}"
            if all(f.offset is not None and f.size is not None for f in fields)
            else (f"{fixed} + …" if fixed else "variable")
        )
        out.append(
            f"| [{fmt.title}](#{fmt.slug}) | {total} | [{_spec_name(fmt.spec)}]({fmt.spec}) |"
        )
    out += [
        "",
        "[Annotated hex dump of a real batch](#hex-dump){ .md-button .md-button--primary }",
        "",
    ]
    for fmt, fields in layouts:
        out += [
            f"## {fmt.title} {{ #{fmt.slug} }}",
            "",
            fmt.intro or library.doc(fmt),
            "",
            f"Spec: [{_spec_name(fmt.spec)}]({fmt.spec}). Kaitai: "
            + ", ".join(sorted({f"`kaitai/{p.ksy}.ksy`" for p in fmt.parts}))
            + ".",
            "",
            f'<div class="klog-diagram" markdown="0">{layout_svg(fields, fmt.title)}</div>',
            "",
            field_table(fields),
            "",
        ]
    out.append(example_section)
    return "\n".join(out)


def _spec_name(site_path: str) -> str:
    """The title of a spec page (its first heading, without code marks)."""
    path = Path(__file__).resolve().parent.parent.parent / site_path
    try:
        first = path.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return site_path.removeprefix("spec/")
    return first.lstrip("#").replace("`", "").strip()


# --- the annotated hex dump ----------------------------------------------------------------

EXAMPLE_BASE_OFFSET = 100
EXAMPLE_TIMESTAMP = 1_700_000_000_000


def example_batch() -> bytes:
    """One v2 batch of two records from an idempotent producer, built by the reference
    encoder: the bytes shown in the hex dump (and the file offered for download)."""
    from reference_impl.records import Header, SimpleRecord, build_record_batch

    return build_record_batch(
        [
            SimpleRecord(
                key=b"user-1",
                value=b"hello",
                timestamp=EXAMPLE_TIMESTAMP,
                headers=(Header(b"trace", b"42"),),
            ),
            SimpleRecord(key=None, value=b"world", timestamp=EXAMPLE_TIMESTAMP + 5),
        ],
        base_offset=EXAMPLE_BASE_OFFSET,
        producer_id=4000,
        producer_epoch=0,
        base_sequence=0,
        partition_leader_epoch=7,
    )


@dataclass
class Span:
    start: int
    end: int
    field: str
    value: str
    group: int  # color


def annotate_batch(data: bytes, library: KsyLibrary) -> list[Span]:
    """Every byte of a v2 batch, labelled: the header from the ksy layout, the records by
    decoding their varints (reference_impl.records.varint)."""
    from reference_impl.records.varint import decode_varint, decode_varlong

    spans: list[Span] = []
    header = library.layout(GALLERY[0])
    for i, f in enumerate(header):
        if f.offset is None or f.size is None:
            break
        raw = data[f.offset : f.offset + f.size]
        signed = f.type.startswith("int")
        value = int.from_bytes(raw, "big", signed=signed)
        text = f"0x{value:08x}" if f.kafka == "crc" else str(value)
        if f.kafka == "attributes":
            text = f"0x{value:04x}: codec none, CreateTime, not transactional, not control"
        spans.append(Span(f.offset, f.offset + f.size, f.kafka, text, i))
    pos = 61
    count = struct.unpack_from(">i", data, 57)[0]
    for n in range(count):
        group = 100 + n  # records alternate two colours
        length, body = decode_varint(data, pos)
        spans.append(Span(pos, body, f"record {n}: length", str(length), group))
        end = body + length
        p = body
        spans.append(Span(p, p + 1, f"record {n}: attributes", str(data[p]), group))
        p += 1
        for label, decode in (("timestampDelta", decode_varlong), ("offsetDelta", decode_varint)):
            value, q = decode(data, p)
            spans.append(Span(p, q, f"record {n}: {label}", str(value), group))
            p = q
        for label in ("key", "value"):
            size, q = decode_varint(data, p)
            spans.append(Span(p, q, f"record {n}: {label}Length", str(size), group))
            p = q
            if size >= 0:
                spans.append(
                    Span(p, p + size, f"record {n}: {label}", repr(data[p : p + size]), group)
                )
                p += size
        headers, q = decode_varint(data, p)
        spans.append(Span(p, q, f"record {n}: headersCount", str(headers), group))
        p = q
        for h in range(headers):
            for label in ("keyLength", "key", "valueLength", "value"):
                if label.endswith("Length"):
                    size, q = decode_varint(data, p)
                    spans.append(Span(p, q, f"record {n}: header {h} {label}", str(size), group))
                    p = q
                else:
                    spans.append(
                        Span(
                            p,
                            p + size,
                            f"record {n}: header {h} {label}",
                            repr(data[p : p + size]),
                            group,
                        )
                    )
                    p += max(size, 0)
        assert p == end, (p, end)
        pos = end
    assert pos == len(data), (pos, len(data))
    return spans


def hex_dump_html(data: bytes, spans: list[Span]) -> str:
    by_byte: dict[int, Span] = {}
    for s in spans:
        for b in range(s.start, s.end):
            by_byte[b] = s
    colors: dict[int, int] = {}
    lines = []
    for row in range(0, len(data), BYTES_PER_ROW):
        cells = []
        for b in range(row, row + BYTES_PER_ROW):
            if b >= len(data):
                cells.append("<span>  </span>")
                continue
            s = by_byte[b]
            color = colors.setdefault(s.group, len(colors) % len(PALETTE))
            if s.group >= 100:
                color = len(PALETTE) - 1 - (s.group % 2) * 3
            tip = html.escape(f"{s.start}: {s.field} = {s.value}", quote=True)
            cells.append(
                f'<span style="background:{PALETTE[color]}" title="{tip}">{data[b]:02x}</span>'
            )
        ascii_text = "".join(
            chr(c) if 32 <= c < 127 else "." for c in data[row : row + BYTES_PER_ROW]
        )
        lines.append(f"{row:04x}  {' '.join(cells)}  {html.escape(ascii_text)}")
    return '<pre class="klog-hex"><code>' + "\n".join(lines) + "</code></pre>"


def example_section(library: KsyLibrary, download: str) -> str:
    from reference_impl.records import read_batch

    data = example_batch()
    spans = annotate_batch(data, library)
    batch = read_batch(data)
    batch.ensure_valid()
    records = list(batch.records())
    rows = ["| Offset | Bytes | Field | Value |", "| ---: | --- | --- | --- |"]
    for s in spans:
        raw = data[s.start : s.end].hex(" ")
        if len(raw) > 47:
            raw = raw[:44] + " …"
        rows.append(f"| {s.start} | `{raw}` | {s.field} | {_cell(s.value)} |")
    checks = [
        f"base offset {batch.base_offset}, last offset {batch.last_offset}",
        f"{len(records)} records at offsets {', '.join(str(r.offset) for r in records)}",
        f"timestamps {', '.join(str(r.timestamp) for r in records)}",
        "CRC-32C of bytes 21 to the end matches the crc field (BATCH-3)",
    ]
    return "\n".join(
        [
            "## Annotated hex dump: one v2 batch { #hex-dump }",
            "",
            f"A {len(data)}-byte batch of two records from an idempotent producer (id 4000, "
            "epoch 0, sequences 0 and 1), leader epoch 7, written by the reference encoder "
            "(`reference_impl.records.build_record_batch`) when the site was built, and labelled "
            "byte by byte: the header from the layout above, the records by decoding their "
            "varints. Hover over a byte to see its field. The reference reader "
            f"(`read_batch`, `ensure_valid`) accepts it: {'; '.join(checks)}. "
            f"[Download it as a segment file]({download}) and try "
            "`klogspec dump --deep` on it.",
            "",
            hex_dump_html(data, spans),
            "",
            '<div class="klog-scroll" markdown="1">',
            "",
            "\n".join(rows),
            "",
            "</div>",
            "",
        ]
    )
