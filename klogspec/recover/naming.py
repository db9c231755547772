"""The names of ``klogspec recover``'s quarantine folder and of the pieces it keeps (RECOV-14),
read back by ``klogspec dump`` and ``klogspec verify`` (which skip the folder unless asked).

* ``<partition>/.klogspec-quarantine/<YYYYMMDDTHHMMSSZ>[-N]/``: one folder per run;
* ``<file>``: a file the run deleted, under its own name;
* ``<file>.<from>-<to>``: the bytes ``[from, to)`` cut off ``<file>`` (``to`` exclusive);
* either with ``~N`` appended when the name was taken in the folder;
* ``manifest.json``: the journal that lists them (journal.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reference_impl.formats.file_naming import FileKind, classify

QUARANTINE_DIR = ".klogspec-quarantine"
MANIFEST = "manifest.json"
_SLICE = re.compile(r"^(?P<file>.+?)\.(?P<start>\d+)-(?P<end>\d+)(?:~\d+)?$")
_TAKEN = re.compile(r"^(?P<file>.+)~\d+$")


def slice_name(file: str, start: int, end: int) -> str:
    return f"{file}.{start}-{end}"


@dataclass(frozen=True)
class StoredPiece:
    """A kept piece: the bytes from ``start`` (to ``end``, exclusive; None: to the end of
    the file) of the partition's file ``original``."""

    original: str
    start: int = 0
    end: int | None = None


def stored_piece(name: str) -> StoredPiece | None:
    """What the quarantine name ``name`` keeps, or None when it is no such name (a file
    kept under its own name is read as itself)."""
    for pattern in (_SLICE, _TAKEN):
        match = pattern.match(name)
        if match and classify(match["file"]).kind is not FileKind.UNKNOWN:
            if pattern is _SLICE:
                return StoredPiece(match["file"], int(match["start"]), int(match["end"]))
            return StoredPiece(match["file"])
    return None
