"""The field tables of the internal-topic spec pages, generated from our tables.

Usage: python scripts/internal_topic_pages.py [--check]

Each page of spec/formats/internal-topics/ that documents a table of
reference_impl/messages/tables/ holds, between two markers, the record types and each
message's fields as that table has them: one source for the decoder and the spec. Without
arguments the script rewrites those sections; ``--check`` exits 1 when a page differs
(tests/test_internal_topic_pages.py runs it).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from reference_impl.messages.schema import Field, Message, Table, load_table  # noqa: E402

PAGES_DIR = REPO / "spec" / "formats" / "internal-topics"
# page -> the tables whose messages it documents
PAGES = {
    "consumer-offsets.md": ("consumer_offsets",),
    "transaction-state.md": ("transaction_state",),
    "cluster-metadata.md": ("cluster_metadata", "control_records", "quorum_state"),
    "remote-log-metadata.md": ("remote_log_metadata",),
    "share-group-state.md": ("share_group_state",),
}
BEGIN = "<!-- generated field tables: scripts/internal_topic_pages.py from reference_impl/messages/tables/{name}.yaml; do not edit -->"
END = "<!-- end of generated field tables -->"
_ID_HEADING = {"coordinator": "record type", "metadata": "api key", "control": "control type"}


def render(table: Table) -> str:
    out = [BEGIN.format(name=table.name), ""]
    if table.records:
        out += [f"| {_ID_HEADING[table.framing]} | key | value |", "| ---: | --- | --- |"]
        for record in table.records.values():
            key = f"`{record.key}`" if record.key else "null"
            out.append(f"| {record.id} | {key} | [`{record.value}`](#{record.value.lower()}) |")
        out.append("")
    for message in table.messages.values():
        out += _message(message)
    return "\n".join([*out, END])


def _message(message: Message) -> list[str]:
    releases = ", ".join(f"{r}: {v or 'absent'}" for r, v in message.releases.items())
    out = [
        f"#### {message.name}",
        "",
        f"Versions {_text(message.valid)} (Kafka {releases}), flexible {_text(message.flexible)};"
        f" source `{message.source}`.",
        "",
        "| field | type | versions | nullable | tag (tagged versions) | default | since |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    out += _rows(message.fields, "")
    return [*out, ""]


def _rows(fields: tuple[Field, ...], prefix: str) -> list[str]:
    rows = []
    for f in fields:
        tag = "" if f.tag is None else f"{f.tag} ({_text(f.tagged)})"
        default = "" if f.default is None else f"`{f.default}`"
        nullable = "" if f.nullable.low > f.nullable.high else _text(f.nullable)
        since = f"Kafka {f.since}" if f.since else ""
        rows.append(
            f"| `{prefix}{f.name}` | `{f.type}` | {_text(f.versions)} | {nullable} | {tag} "
            f"| {default} | {since} |"
        )
        if f.fields:
            rows += _rows(f.fields, f"{prefix}{f.name}{'[]' if f.type.startswith('[]') else ''}.")
    return rows


def _text(versions) -> str:
    if versions.low > versions.high:
        return "none"
    if versions.high == 0x7FFF:
        return f"{versions.low}+"
    return str(versions.low) if versions.low == versions.high else f"{versions.low}-{versions.high}"


def regenerate(text: str, names: tuple[str, ...]) -> str:
    for name in names:
        begin = BEGIN.format(name=name)
        start, end = text.index(begin), text.index(END, text.index(begin)) + len(END)
        text = text[:start] + render(load_table(name)) + text[end:]
    return text


def main(argv: list[str]) -> int:
    stale = []
    for page, names in PAGES.items():
        path = PAGES_DIR / page
        text = path.read_text(encoding="utf-8")
        fresh = regenerate(text, names)
        if fresh != text:
            stale.append(page)
            if "--check" not in argv:
                path.write_text(fresh, encoding="utf-8")
    if stale and "--check" in argv:
        print("stale field tables in: " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
