"""One file's dump (``FileDump``) and the options of ``klogspec dump`` (``DumpOptions``); the
dumpers of each kind of file fill it: batches.py, indexes.py, small_files.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import FileInfo, FileKind

from ..recover.naming import StoredPiece
from ..safe_files import NotRegularFileError, open_regular, read_regular

_SEGMENT_FILES = [FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX]


@dataclass(frozen=True)
class DumpOptions:
    deep: bool = False
    print_data: bool = False  # implies deep, as Kafka's --print-data-log does
    index_sanity_check: bool = False
    verify_index_only: bool = False
    max_bytes: int | None = None
    file_type: FileKind | None = None  # what every named file holds, whatever its name
    include_quarantine: bool = False
    decode: str = "none"  # --decode: a decoder of reference_impl.messages, auto or none

    @property
    def records(self) -> bool:
        return self.deep or self.print_data or self.decode != "none"

    @property
    def list_index_entries(self) -> bool:
        return not (self.index_sanity_check or self.verify_index_only)


@dataclass
class FileDump:
    """One file's dump: iterate ``events()``, then read ``summary`` and ``ok``."""

    path: Path
    info: FileInfo
    options: DumpOptions
    size_bytes: int = 0
    dumper: Callable[[FileDump], Iterator[dict]] | None = field(default=None, repr=False)
    summary: dict = field(default_factory=dict)
    piece: StoredPiece | None = None  # a quarantined piece: positions are its original's
    decoder: object = field(default=None, repr=False)  # --decode's, for a file of batches
    within: Path | None = None  # the directory walked (a link may not leave it, PART-9)

    @property
    def origin(self) -> int:
        """Where this file's first byte is in the file its positions are given in."""
        return 0 if self.piece is None else self.piece.start

    def __post_init__(self) -> None:
        self.file = str(self.path)
        self.summary = {
            "type": "summary", "file": self.file, "kind": self.info.kind.value,
            "sizeBytes": self.size_bytes, "batches": None, "entries": None,
            "validBytes": None, "trailingBytes": None, "mismatches": [], "errors": [],
            "ioErrors": [],
        }  # fmt: skip
        if self.info.base_offset is not None:
            key = "baseOffset" if self.info.kind in _SEGMENT_FILES else "endOffset"
            self.summary[key] = self.info.base_offset
        if self.info.epoch is not None:
            self.summary["epoch"] = self.info.epoch
        if self.piece is not None:
            self.summary["quarantined"] = {"file": self.piece.original, "from": self.origin}

    @property
    def ok(self) -> bool:
        """No errors, no unreadable files, no mismatch the spec rejects, no record that
        --decode could not decode, no KRaft snapshot without its header or footer."""
        s = self.summary
        rejected = [m for m in s["mismatches"] if m["allowedBy"] is None]
        undecoded = s.get("decoded", {}).get("errors")  # MSG-12: kept, and reported
        unframed = s.get("snapshotFrame")  # KRAFT-1: a snapshot without header or footer
        return not (s["errors"] or s["ioErrors"] or rejected or undecoded or unframed)

    def error(self, exc: KafkaLogError) -> None:
        error = exc.located(file=self.file).to_dict()
        if error.get("position") is not None:
            error["position"] += self.origin
        self.summary["errors"].append(error)

    def io_error(self, message: str, rule: str | None = None) -> None:
        entry = {"file": self.file, "message": message}
        if rule is not None:
            entry["rule"] = rule
        self.summary["ioErrors"].append(entry)

    def open(self) -> BinaryIO:
        """The file, opened only if it is a regular file (PART-8, PART-9: safe_files.py)."""
        return open_regular(self.path, self.within)

    def read_bytes(self) -> bytes:
        return read_regular(self.path, self.within)

    def events(self) -> Iterator[dict]:
        count = 0
        try:
            for event in self.dumper(self):
                count += 1
                yield {"file": self.file, **event}
        except OSError as exc:
            self.io_error(f"{exc.strerror or exc}: {exc.filename or self.file}", _rule(exc))
        if self.summary["entries"] is None:
            self.summary["entries"] = count
        self.summary["ok"] = self.ok


def _rule(exc: OSError) -> str | None:
    return exc.rule if isinstance(exc, NotRegularFileError) else None


def event_fields(value) -> dict:
    """A format dataclass or NamedTuple as an event: Kafka's camelCase names (start_offset ->
    startOffset)."""
    names = (
        value._fields if isinstance(value, tuple) else [f.name for f in dataclasses.fields(value)]
    )
    return {_camel(name): getattr(value, name) for name in names}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)
