"""Where the log's bytes go: every file operation on a partition or log directory
(spec/behaviour/recovery.md §7).

Kafka's segments and indexes do their I/O through a ``FileChannel`` (positional reads and
writes, ``truncate``, ``size``, ``force``: FileRecords.java, AbstractIndex.java) and their
renames and deletions through ``Files`` and ``Utils.atomicMoveWithFallback`` (Utils.java). The reference does the same through this module:
``storage()`` is the current ``Storage``, whose ``open_channel`` gives a ``FileChannel`` and
whose other methods are the path operations the log makes (exists, list, rename, delete,
mtimes, and the small whole-file reads and writes of checkpoints and producer snapshots).

The default, ``OS``, is the operating system: each method is the one ``os`` call the log
made before this module existed. ``klogspec recover --dry-run`` runs the real loader under
``using(layer)`` with a layer that records the writes instead of making them
(klogspec/recover/recording.py), as LevelDB serves recovery, repair and dump from one
reader. The current storage is a context variable, like ``decimal.localcontext``: the
loader builds segments, indexes, caches and checkpoint files in a dozen places, and
passing a storage through every one of those constructors would add an argument to each
without adding a rule. A channel keeps the storage that opened it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path


class FileChannel:
    """An open file: Kafka's FileChannel, over a descriptor opened read-write.

    The descriptor is owned by a file object, so a channel nobody closes (a log left open by
    a crash, as the conformance ``crash`` leaves it) gives its descriptor back when it is
    collected, as Java's channels do when their streams are finalised."""

    def __init__(self, file: Path, fd: int) -> None:
        self.file = file
        self._owner = os.fdopen(fd, "r+b", buffering=0)
        self._fd = fd

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def read_at(self, position: int, size: int) -> bytes:
        return os.pread(self._fd, size, position)

    def write_at(self, data, position: int) -> int:
        return os.pwrite(self._fd, data, position)

    def truncate(self, size: int) -> None:
        """Set the length (Kafka's truncate, and RandomAccessFile.setLength to grow)."""
        os.ftruncate(self._fd, size)

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def force(self) -> None:
        os.fsync(self._fd)

    def set_last_modified(self, ns: int) -> None:
        os.utime(self._fd, ns=(ns, ns))

    def close(self) -> None:
        if self._fd >= 0:
            self._fd = -1
            self._owner.close()


class Storage:
    """The operating system's files: what the log does to a directory, one call each."""

    def open_channel(self, path: Path) -> FileChannel:
        """The file opened for reading and writing, created (empty) when missing."""
        return FileChannel(Path(path), os.open(path, os.O_RDWR | os.O_CREAT, 0o644))

    def exists(self, path: Path) -> bool:
        return os.path.exists(path)

    def touch(self, path: Path) -> None:
        """Create ``path`` empty when missing, else stamp its mtime (Files.createFile's use)."""
        Path(path).touch(exist_ok=True)

    def is_dir(self, path: Path) -> bool:
        return os.path.isdir(path)

    def files(self, dir: Path) -> list[Path]:
        """The regular files of ``dir`` (directories skipped, LOAD-25), sorted by name."""
        return sorted(p for p in Path(dir).iterdir() if p.is_file())

    def replace(self, source: Path, target: Path) -> None:
        """Kafka's atomicMoveWithFallback: ``target`` is replaced if it exists."""
        os.replace(source, target)

    def rename(self, source: Path, target: Path) -> None:
        os.rename(source, target)

    def unlink(self, path: Path, missing_ok: bool = False) -> bool:
        """Delete ``path``; False when it was not there (and ``missing_ok``)."""
        try:
            os.unlink(path)
        except FileNotFoundError:
            if not missing_ok:
                raise
            return False
        return True

    def last_modified_ns(self, path: Path) -> int:
        return os.stat(path).st_mtime_ns

    def set_last_modified(self, path: Path, ns: int) -> None:
        os.utime(path, ns=(ns, ns))

    def read_file(self, path: Path) -> bytes:
        """A small file whole: a checkpoint, a producer snapshot, partition.metadata."""
        with open(path, "rb") as handle:
            return handle.read()

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        """``path`` created or emptied, ``data`` written (and fsynced when ``sync``)."""
        with open(path, "wb") as out:
            out.write(data)
            if sync:
                out.flush()
                os.fsync(out.fileno())

    def sync_dir(self, path: Path) -> None:
        """fsync a directory, so the names created, renamed or deleted in it are durable."""
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def make_dirs(self, path: Path) -> None:
        os.makedirs(path, exist_ok=True)


OS = Storage()
_CURRENT: ContextVar[Storage] = ContextVar("storage", default=OS)


def storage() -> Storage:
    """The storage the log's file operations go through now (``OS`` unless ``using``)."""
    return _CURRENT.get()


@contextlib.contextmanager
def using(layer: Storage) -> Iterator[Storage]:
    """Run the block's file operations through ``layer``."""
    token = _CURRENT.set(layer)
    try:
        yield layer
    finally:
        _CURRENT.reset(token)
