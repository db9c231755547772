"""The file names of scenarios: segment files by base offset, kind and marker.

A scenario may write a segment file's name short (``5.log`` for
``00000000000000000005.log``); the harness expands it before it touches the testee's
directory and when it describes a step (disk.py, diagnostics.py).
"""

from __future__ import annotations

import re

_SEGMENT_NAME = re.compile(
    r"^(\d+)\.(log|index|timeindex|txnindex|snapshot)((?:\.deleted|\.cleaned|\.swap)?)$"
)


def expand_name(name: str) -> str:
    """``5.log`` -> ``00000000000000000005.log``; other names unchanged."""
    head, _, tail = name.rpartition("/")
    match = _SEGMENT_NAME.match(tail)
    if match and len(match.group(1)) < 20:
        tail = f"{int(match.group(1)):020d}.{match.group(2)}{match.group(3)}"
    return f"{head}/{tail}" if head else tail


def segment_file(name: str) -> tuple[int | None, str | None, str]:
    """(base offset, kind, marker) of a segment file name; (None, None, '') otherwise."""
    match = _SEGMENT_NAME.match(name.rpartition("/")[2])
    if not match:
        return None, None, ""
    return int(match.group(1)), match.group(2), match.group(3)
