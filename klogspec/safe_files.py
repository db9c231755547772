"""Opening a partition directory's files safely, for every tool (dump, verify, recover, the
pipeline): only regular files (PART-8), never through a symbolic link that leaves the
directory (PART-9), never blocking on a FIFO (spec/formats/partition-directory.md).

Kafka's LogLoader lists a directory's entries with ``File.isFile()``, which follows links:
a FIFO, device or directory under a segment's name is not a segment to it, and a link to
a regular file anywhere is read through. A tool reading a directory it does not trust
must not hang on a FIFO, read ``/dev/zero`` for ever or read (or, for recover, write) a
file elsewhere through a link, so it checks before opening: ``lstat`` the name, resolve a
link and keep it only when its target is in the same directory, then open with
``O_NOFOLLOW | O_NONBLOCK`` and ``fstat`` the descriptor, which is what it reads.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
)  # fmt: skip
_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# The largest checkpoint, producer snapshot or metadata file read: a snapshot of this size
# holds about 700,000 producers; a hostile (sparse) 4 GiB one must not be read into memory.
SMALL_FILE_LIMIT = 32 << 20


class FileTooLargeError(OSError):
    """A small file (checkpoint, snapshot, metadata) larger than SMALL_FILE_LIMIT: not read."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        words = f"{size} bytes, more than the {limit} bytes read of a checkpoint or snapshot"
        super().__init__(errno.EFBIG, words, str(path))


class NotRegularFileError(OSError):
    """A Kafka file's name that is not a regular file (PART-8), or a link out of its directory
    (PART-9): ``rule`` is the requirement, ``str()`` says what stands there."""

    def __init__(self, path: str | Path, what: str, rule: str) -> None:
        super().__init__(errno.EINVAL, f"{what}, not a regular file ({rule})", str(path))
        self.rule = rule
        self.what = what


def kind_of(mode: int) -> str:
    """What a non-regular ``st_mode`` is, in words."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def resolve(path: str | Path, within: str | Path | None = None) -> Path:
    """The file ``path`` names: itself, or the target of a link. With ``within`` (the
    directory walked), a link whose target is outside it is refused (PART-9); a name that is
    not a regular file (after the link) is refused (PART-8). Nothing is opened."""
    path = Path(path)
    mode = os.lstat(path).st_mode
    if not stat.S_ISLNK(mode):
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, kind_of(mode), "PART-8")
        return path
    target = Path(os.path.realpath(path))
    mode = os.stat(target).st_mode
    if not stat.S_ISREG(mode):  # a link to /dev/zero is first of all not a regular file
        raise NotRegularFileError(path, f"a symbolic link to {kind_of(mode)} {target}", "PART-8")
    if within is not None and not _inside(target, within):
        raise NotRegularFileError(path, f"a symbolic link to {target}, outside {within}", "PART-9")
    return target


def _inside(target: Path, directory: str | Path) -> bool:
    root = os.path.realpath(directory)
    return os.path.commonpath([root, str(target)]) == root


def open_regular(path: str | Path, within: str | Path | None = None) -> BinaryIO:
    """``open(path, "rb")`` for a regular file only (``resolve``'s checks, then the opened
    descriptor's own ``fstat``, so a name swapped for a FIFO in between is still refused)."""
    target = resolve(path, within)
    fd = os.open(target, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, kind_of(mode), "PART-8")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(
    path: str | Path, within: str | Path | None = None, limit: int = SMALL_FILE_LIMIT
) -> bytes:
    """The whole of a small regular file (a checkpoint, a snapshot), as ``open_regular``;
    ``FileTooLargeError`` past ``limit`` bytes."""
    with open_regular(path, within) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise FileTooLargeError(path, size, limit)
        return handle.read(limit + 1)
