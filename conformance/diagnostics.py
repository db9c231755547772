"""How the harness says what went wrong: steps, values and differences, in words.

Every failure message of the harness is built from these helpers, so that each one names
the step and the operation, and shows both sides faithfully:

* ``describe_step``: a step as an operation (``delete_segments_before(2)``, ``append ×3``,
  ``damage: copies 3.log to 3.log.cleaned``);
* ``show``: a value as JSON (``null``, ``true``, ``[[0, 1]]``, ``"text"``), never a Python
  repr (``None``, ``True``, ``b'..'``);
* ``text_difference``: two text files, both sides as JSON strings (final newlines kept) and
  the first line where they differ;
* ``bytes_difference``: two byte strings, their lengths and the first differing position
  with a hex window around it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable

from .file_names import expand_name

HEX_WINDOW = 8  # bytes shown on each side of the first difference
OP_KEYS = (  # the keys of a scenario step that name an operation
    "open", "append", "read", "roll", "flush", "truncate_to", "truncate_fully_and_start_at",
    "delete_segments_before", "delete_old_segments", "fetch_offset_by_timestamp", "state",
    "close", "crash", "clean",
)  # fmt: skip
MAX_SHOWN = 300  # characters of one value in a message
MAX_ECHOED = 200  # characters of a testee's error message echoed in a failure
MAX_TAIL = 600  # characters of a testee's stderr tail echoed in a failure
# C0 and C1 controls, DEL, and the format characters that reorder text on a terminal
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def printable(text: str, limit: int = MAX_ECHOED, keep: str = "start", lines: bool = False) -> str:
    """Text a testee chose (stderr, an error message), safe to echo on a terminal: every
    control character escaped as ``\\xNN``/``\\uNNNN`` (a terminal escape is shown, never
    obeyed; with ``lines`` a newline is kept), then cut to ``limit`` characters, keeping its
    ``start`` or its ``end`` (a tail), with ``...`` where it was cut (issue 20 §1)."""
    escaped = (
        "\n".join(_CONTROL.sub(_escape, part) for part in text.split("\n"))
        if lines
        else _CONTROL.sub(_escape, text)
    )
    escaped = "".join(c if unicodedata.category(c) not in ("Cs", "Co") else "?" for c in escaped)
    if len(escaped) <= limit:
        return escaped
    return "..." + escaped[-limit:] if keep == "end" else escaped[:limit] + "..."


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show(value) -> str:
    """A value as JSON text (shortened in the middle when long)."""
    if isinstance(value, bytes | bytearray):
        return f"{len(value)} bytes"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    except (TypeError, ValueError):
        text = str(value)
    return _shorten(_CONTROL.sub(_escape, text))


def _shorten(text: str, limit: int = MAX_SHOWN) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"


def names(files: Iterable[str]) -> str:
    """File names as a comma-separated list (``none`` when empty)."""
    listed = sorted(files)
    return ", ".join(listed) if listed else "none"


def text_difference(have: bytes, want: bytes) -> str:
    """Two text files: both sides as JSON strings, and the first line that differs."""
    mine, theirs = have.decode("utf-8", "replace"), want.decode("utf-8", "replace")
    lines_a, lines_b = mine.splitlines(keepends=True), theirs.splitlines(keepends=True)
    where = ""
    for number, (a, b) in enumerate(zip(lines_a, lines_b, strict=False), 1):
        if a != b:
            where = f"; line {number} differs: {show(a)} vs {show(b)}"
            break
    else:
        if len(lines_a) != len(lines_b):
            where = f"; {len(lines_a)} lines, the reference's {len(lines_b)}"
    return f"{show(mine)}, the reference's {show(theirs)}{where}"


def first_difference(have: bytes, want: bytes) -> int | None:
    """The first position where two byte strings differ (the shorter one's length when one
    is a prefix of the other); None when they are equal."""
    if have == want:
        return None
    for position, (a, b) in enumerate(zip(have, want, strict=False)):
        if a != b:
            return position
    return min(len(have), len(want))


def hex_window(data: bytes, position: int, width: int = HEX_WINDOW) -> str:
    """The bytes around ``position`` in hex, the byte at ``position`` in brackets."""
    start = max(0, position - width)
    cells = [
        f"[{data[i]:02x}]" if i == position else f"{data[i]:02x}"
        for i in range(start, min(len(data), position + width + 1))
    ]
    if position >= len(data):
        cells.append("[end]")
    return f"@{start}: " + " ".join(cells)


def bytes_difference(have: bytes, want: bytes) -> str:
    """Two byte strings: lengths, the first differing position and a hex window of each."""
    position = first_difference(have, want)
    if position is None:
        return f"the same {len(have)} bytes"
    sizes = (
        f"{len(have)} bytes, the reference's {len(want)}"
        if len(have) != len(want)
        else f"{len(have)} bytes each"
    )
    return (
        f"{sizes}; first difference at byte {position}: "
        f"{hex_window(have, position)} vs the reference's {hex_window(want, position)}"
    )


# --- steps --------------------------------------------------------------------------------

_ARG_ORDER = {
    "read": ("start_offset", "max_bytes", "max_offset", "min_one_message", "isolation"),
    "truncate_to": ("offset",),
    "truncate_fully_and_start_at": ("offset", "log_start_offset"),
    "delete_segments_before": ("offset",),
    "fetch_offset_by_timestamp": ("timestamp",),
    "roll": ("expected_next_offset",),
}


def describe_op(op: str, args: dict | None) -> str:
    """``delete_segments_before(2)``, ``read(start_offset=0, max_bytes=100)``, ``append ×3``."""
    args = args or {}
    if op == "append":
        batches = [args["batch"]] if "batch" in args else list(args.get("batches", ()))
        times = args.get("times", 1)
        who = " (follower)" if args.get("follower") else ""
        origin = f" (origin {args['origin']})" if args.get("origin", "client") != "client" else ""
        count = f"{len(batches)} batches" if len(batches) != 1 else "1 batch"
        return f"append{' ×' + str(times) if times != 1 else ''} of {count}{who}{origin}"
    if op == "open":
        return "open" + (" with its own config" if args.get("replace_config") else "")
    order = _ARG_ORDER.get(op, ())
    given = [(k, args[k]) for k in order if args.get(k) is not None]
    if len(given) == 1 and len(order) == 1:
        return f"{op}({show(given[0][1])})"
    if given:
        return f"{op}({', '.join(f'{k}={show(v)}' for k, v in given)})"
    return op


def describe_damage(damage: dict) -> str:
    """One damage operation in words: ``copies 3.log to 3.log.cleaned``."""
    name = _file(damage["file"])
    if damage.get("delete"):
        return f"deletes {name}"
    if damage.get("make_dir"):
        return f"makes the directory {name}"
    if "copy_from" in damage:
        return f"copies {_file(damage['copy_from'])} to {name}"
    if "write_hex" in damage or "write_text" in damage or "write_batches" in damage:
        return f"writes {name}"
    if "truncate_to" in damage:
        return f"truncates {name} to byte {damage['truncate_to']}"
    if "flip_bit" in damage:
        flip = damage["flip_bit"]
        return f"flips bit {flip.get('bit', 0)} of byte {flip['at']} of {name}"
    if "zero" in damage:
        return f"zeroes {damage['zero']['length']} bytes at {damage['zero']['at']} of {name}"
    if "append_hex" in damage or "append_zeros" in damage:
        return f"appends bytes to {name}"
    return f"changes {name}"


def _file(name: str) -> str:
    return name[3:] if name.startswith("../") else expand_name(name)


def describe_step(step: dict) -> str:
    """A step in a few words, as ``klogspec conformance show`` and failures print it."""
    if "clock" in step:
        clock = step["clock"]
        return f"clock set {clock['set']}" if "set" in clock else f"clock +{clock['advance']} ms"
    if "damage" in step:
        return "damage: " + "; ".join(describe_damage(d) for d in step["damage"])
    if "set_mtime" in step:
        return f"set_mtime of {_file(step['set_mtime']['file'])}"
    if "snapshot" in step:
        return f"snapshot {step['snapshot']}"
    if "files" in step:
        return "files"
    if "crash" in step:
        return "crash"
    op = next((k for k in OP_KEYS if k in step), None)
    return describe_op(op, step[op]) if op else "?"
