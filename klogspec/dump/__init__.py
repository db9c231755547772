"""What ``klogspec dump`` finds in each file: a superset of Kafka's DumpLogSegments.

``dump_paths`` walks files and directories in a stable order and yields one
``FileDump`` (file_dump.py) per file it can read, with the dumper of its kind
(batches.py, indexes.py, small_files.py). A FileDump's ``events()`` yields JSON-ready
dicts (one per batch, index entry, snapshot entry, checkpoint entry...) and then
completes ``summary``; nothing here prints, so the CLI renders the same events as
JSON Lines or as aligned text. Nothing raises either: problems become summary
entries and the dump goes on where the bytes allow.

* ``errors``: reader errors as ``to_dict()`` gives them, with a category of
  errors.Category (ERR-1, ERR-2), one per batch at most, the first in ERR-5 order;
* ``mismatches``: index entries that fail DumpLogSegments' cross-checks with the
  .log; those the spec allows carry ``allowedBy`` (OIDX-7, TIDX-2, TIDX-9) and,
  reported as Kafka's tool reports them, are not findings;
* ``ioErrors``: a file, or the .log an index is checked against, that cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from reference_impl.formats import checkpoints
from reference_impl.formats.file_naming import FileKind, classify

from ..walk import path_order
from .batches import dump_batches
from .file_dump import DumpOptions, FileDump
from .indexes import dump_index, dump_txn_index
from .small_files import dump_producer_snapshot, dump_properties, text_dumper

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
    **{
        kind: text_dumper(checkpoints.read_offset_checkpoint, "offset_checkpoint_entry")
        for kind in FileKind
        if kind.is_offset_checkpoint
    },
}


def dump_paths(paths, options: DumpOptions, *, warn=lambda message: None) -> Iterator[FileDump]:
    """A FileDump for each dumpable file under ``paths``. Directories are walked in a stable
    order: segment files by base offset (.log, .index, .timeindex, .txnindex, .snapshot),
    other files by name, then subdirectories (partition directories by topic, then
    partition number). Files of other kinds go to ``warn`` (.lock and quorum-state only
    when named explicitly)."""
    for path in paths:
        yield from _walk(Path(path), options, warn, explicit=True)


def _walk(path: Path, options, warn, *, explicit: bool) -> Iterator[FileDump]:
    if path.is_dir():
        for child in sorted(path.iterdir(), key=path_order):
            if not (child.is_dir() and child.is_symlink()):  # a linked directory could loop
                yield from _walk(child, options, warn, explicit=False)
        return
    info = classify(path)
    if info.kind not in DUMPERS:
        if explicit or info.kind is FileKind.UNKNOWN:
            warn(f"ignoring {path}: {info.kind.value} files are not dumped")
        return
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # events() reports why the file cannot be read
    yield FileDump(path, info, options, size, DUMPERS[info.kind])
