"""What ``klogspec dump`` finds in each file: a superset of Kafka's DumpLogSegments.

``dump_paths`` walks files and directories in a stable order and yields one
``FileDump`` (file_dump.py) per file it can read, with the dumper of its kind
(batches.py, indexes.py, small_files.py). A FileDump's ``events()`` yields JSON-ready
dicts (one per batch, index entry, snapshot entry, checkpoint entry...) and then
completes ``summary``; nothing here prints, so the CLI renders the same events as
JSON Lines or as aligned text (render.py). Nothing raises either: problems become summary
entries and the dump goes on where the bytes allow.

* ``errors``: reader errors as ``to_dict()`` gives them, with a category of
  errors.Category (ERR-1, ERR-2), one per batch at most, the first in ERR-5 order;
* ``mismatches``: index entries that fail DumpLogSegments' cross-checks with the
  .log; those the spec allows carry ``allowedBy`` (OIDX-7, TIDX-2, TIDX-9) and,
  reported as Kafka's tool reports them, are not findings;
* ``ioErrors``: a file, or the .log an index is checked against, that cannot be read; one
  that is not a regular file, or a link out of its directory, is never opened and carries
  its ``rule`` (PART-8, PART-9: klogspec/safe_files.py);
* ``nonConsecutiveOffsets`` (deep): the first 1000 gaps between record offsets, and
  ``nonConsecutiveCount`` all of them.

Memory does not grow with the input: .log files and indexes are read in windows, and a
batch's records are decoded a chunk at a time as they are printed (batches.py).

A piece ``klogspec recover`` kept in a quarantine folder is dumped as the file it came from
(``00000000000000060611.log.490950-998265``: a .log, base offset 60611), with that file's
positions (here from 490950), so that they match the manifest and recover's report;
``--type`` says what an unrecognised name holds. Directories are walked without their
quarantine folders unless ``include_quarantine``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from reference_impl.formats import checkpoints
from reference_impl.formats.file_naming import FileInfo, FileKind, classify

from ..recover.naming import MANIFEST, QUARANTINE_DIR, StoredPiece, stored_piece
from ..walk import path_order
from .batches import dump_batches
from .file_dump import DumpOptions, FileDump
from .indexes import dump_index, dump_txn_index
from .small_files import dump_producer_snapshot, dump_properties, dump_quorum_state, text_dumper

__all__ = ["DumpOptions", "FileDump", "dump_paths"]

DUMPERS = {
    FileKind.LOG: dump_batches,
    FileKind.KRAFT_SNAPSHOT: dump_batches,
    FileKind.BOOTSTRAP_SNAPSHOT: dump_batches,
    FileKind.OFFSET_INDEX: dump_index,
    FileKind.TIME_INDEX: dump_index,
    FileKind.TXN_INDEX: dump_txn_index,
    FileKind.PRODUCER_SNAPSHOT: dump_producer_snapshot,
    FileKind.LEADER_EPOCH_CHECKPOINT: text_dumper(
        checkpoints.read_leader_epoch_checkpoint, "leader_epoch_entry"
    ),
    FileKind.PARTITION_METADATA: text_dumper(
        checkpoints.read_partition_metadata, "partition_metadata", many=False
    ),
    FileKind.CLEAN_SHUTDOWN: text_dumper(
        checkpoints.read_clean_shutdown, "clean_shutdown", many=False
    ),
    FileKind.META_PROPERTIES: dump_properties,
    FileKind.QUORUM_STATE: dump_quorum_state,
    **{
        kind: text_dumper(checkpoints.read_offset_checkpoint, "offset_checkpoint_entry")
        for kind in FileKind
        if kind.is_offset_checkpoint
    },
}
DUMPABLE_KINDS = frozenset(DUMPERS)


def dump_paths(
    paths, options: DumpOptions, *, warn=lambda message: None, refuse=None
) -> Iterator[FileDump]:
    """A FileDump for each dumpable file under ``paths``. Directories are walked in a stable
    order: segment files by base offset (.log, .index, .timeindex, .txnindex, .snapshot),
    other files by name, then subdirectories (partition directories by topic, then
    partition number), quarantine folders only with ``include_quarantine``. Files of
    other kinds found in directories go to ``warn`` (unknown names only); a file named in
    ``paths`` that cannot be dumped goes to ``refuse`` (the command cannot do what it was
    asked: exit status 2)."""
    refuse = refuse or warn
    for path in paths:
        yield from _walk(Path(path), options, warn, refuse, explicit=True)


def _walk(path: Path, options, warn, refuse, *, explicit: bool) -> Iterator[FileDump]:
    # a directory under a Kafka file's name is dumped as that file: its open reports PART-8
    if path.is_dir() and (explicit or classify(path).kind is FileKind.UNKNOWN):
        if path.name == QUARANTINE_DIR and not (explicit or options.include_quarantine):
            return  # klogspec recover's kept bytes: not the partition's (LOAD-25)
        for child in sorted(path.iterdir(), key=path_order):
            if not (child.is_dir() and child.is_symlink()):  # a linked directory could loop
                yield from _walk(child, options, warn, refuse, explicit=False)
        return
    info, piece = identify(path, options.file_type if explicit else None)
    if info.kind not in DUMPERS:
        if explicit:
            hint = " (--type says what it holds)" if info.kind is FileKind.UNKNOWN else ""
            refuse(f"cannot dump {path}: {_kind_words(info.kind)} files are not dumped{hint}")
        elif info.kind is FileKind.UNKNOWN and not _manifest(path):
            warn(f"ignoring {path}: unknown files are not dumped")
        return
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # events() reports why the file cannot be read
    within = None if explicit else path.parent  # a file named is the user's choice
    yield FileDump(path, info, options, size, DUMPERS[info.kind], piece=piece, within=within)


def identify(path: Path, file_type: FileKind | None = None) -> tuple[FileInfo, StoredPiece | None]:
    """What ``path`` holds: ``file_type`` when given (with the base offset its name starts
    with, if any), else what its name says, a quarantined piece as its original."""
    info = classify(path)
    piece = stored_piece(path.name) if info.kind is FileKind.UNKNOWN else None
    if piece is not None:
        info = dataclasses.replace(classify(piece.original), name=path.name)
    if file_type is not None and file_type is not info.kind:
        digits = path.name.split(".")[0]
        base = int(digits) if len(digits) == 20 and digits.isdigit() else None
        info = FileInfo(file_type, path.name, base)
    return info, piece


def _kind_words(kind: FileKind) -> str:
    return kind.value.replace("_", " ")


def _manifest(path: Path) -> bool:
    """A quarantine folder's manifest.json: JSON for people, nothing to decode."""
    return path.name == MANIFEST and path.parent.parent.name == QUARANTINE_DIR
