"""The harness's only way into a testee's files: regular files inside the scenario's directory
(PROTO-6, spec/behaviour/model.md §6).

A testee owns its log directory and may leave anything there: a symbolic link to a file
outside it, a FIFO, a device node, a socket, a directory where a segment was. Every file
operation of the harness on that directory (damage steps, ``set_mtime``, snapshots,
``files`` checks, the golden comparisons, the epilogue's snapshots) goes through this
module, which

* walks from the scenario's directory (``anchor``, made by the harness) one component at a
  time with ``O_NOFOLLOW``, so neither a linked file nor a linked directory on the way
  leads out of it;
* opens only regular files, checked with ``lstat`` before opening (opening a device can
  act on it) and with ``fstat`` after (the name may have changed in between), with
  ``O_NONBLOCK`` so that a FIFO never blocks;
* reads at most ``MAX_FILE_BYTES`` of one file, so a sparse giant cannot exhaust memory.

Anything else raises ``UnsafeFile`` naming the file and what it is; the runner fails that
test with it (category ``harness_step``) and the run goes on. The target of a link is never
read, so no byte of a file outside the scenario's directory reaches a report or stdout.
Cleanup (``shutil.rmtree``) removes links, never what they point at.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

MAX_FILE_BYTES = 1 << 30  # 1 GiB: far above any scenario's file (segments of a few KiB)
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISLNK, "a symbolic link (the harness follows none)"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnsafeFile(Exception):
    """A file the harness will not open: not a regular file of the scenario's directory.
    ``name`` is the path relative to the anchor, ``what`` what it is instead."""

    def __init__(self, name: str, what: str) -> None:
        super().__init__(f"{name} is {self.phrase(what)}")
        self.name = name
        self.what = what
        self.cause = f"the testee left {_without_article(what)} where a file was expected"

    @staticmethod
    def phrase(what: str) -> str:
        if what.startswith("outside") or what[0].isdigit() or what.startswith("more"):
            return f"{what}: the harness does not open it"
        return f"{what}, not a regular file: the harness does not open it"

    def shown(self, name: str) -> str:
        """The message with the file named otherwise (e.g. relative to the partition)."""
        return f"{name} is {self.phrase(self.what)}"


def _without_article(what: str) -> str:
    return what.split(" (", 1)[0]


def kind_of(mode: int) -> str | None:
    """What a file of this mode is, in words; None for a regular file."""
    return next(
        (what for test, what in _KINDS if test(mode)),
        None if stat.S_ISREG(mode) else "neither a file nor a directory",
    )


def _parts(path: Path, anchor: Path) -> tuple[str, ...]:
    try:
        parts = Path(os.path.normpath(path)).relative_to(os.path.normpath(anchor)).parts
    except ValueError:
        raise UnsafeFile(str(path), "outside the scenario's directory") from None
    if not parts or ".." in parts:
        raise UnsafeFile(str(path), "outside the scenario's directory")
    return parts


@contextlib.contextmanager
def _parent_fd(parts: tuple[str, ...], anchor: Path) -> Iterator[int]:
    """A descriptor of the directory holding ``parts[-1]``, reached without following a
    link; FileNotFoundError when a directory on the way is missing."""
    fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts[:-1]):
            what = _what_at(part, fd)
            if what is not None:
                if what == "absent":
                    raise FileNotFoundError(
                        errno.ENOENT, "No such file or directory", str(anchor.joinpath(*parts))
                    )
                if what != "a directory":
                    raise UnsafeFile("/".join(parts[: i + 1]), what)
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


def _what_at(name: str, dir_fd: int) -> str | None:
    """None for a regular file, "absent", or what it is."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "absent"
    return kind_of(mode)


def status(path: Path, anchor: Path) -> str | None:
    """None for a regular file, "absent" (nothing there, or a directory on the way
    missing), else what stands there in words (never following a link)."""
    parts = _parts(path, anchor)
    try:
        with _parent_fd(parts, anchor) as fd:
            return _what_at(parts[-1], fd)
    except FileNotFoundError:
        return "absent"


def _open(path: Path, anchor: Path, flags: int) -> int:
    """A descriptor of the regular file ``path``; UnsafeFile for anything else."""
    parts = _parts(path, anchor)
    name = "/".join(parts)
    with _parent_fd(parts, anchor) as dir_fd:
        what = _what_at(parts[-1], dir_fd)
        if what not in (None, "absent"):
            raise UnsafeFile(name, what)
        try:
            fd = os.open(parts[-1], flags | _NOFOLLOW | os.O_NONBLOCK, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO):  # replaced since the lstat
                raise UnsafeFile(name, "a symbolic link or a FIFO") from None
            exc.filename = str(path)
            raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFile(name, kind_of(mode) or "not a regular file")
    return fd


def read_bytes(path: Path, anchor: Path) -> bytes:
    """The bytes of the regular file ``path`` (FileNotFoundError when absent)."""
    name = "/".join(_parts(path, anchor))
    return _read(_open(path, anchor, os.O_RDONLY), name)


def _read(fd: int, name: str) -> bytes:
    """Everything an open regular file holds, at most MAX_FILE_BYTES; closes ``fd``."""
    try:
        size = os.fstat(fd).st_size
        if size > MAX_FILE_BYTES:
            raise UnsafeFile(
                name, f"{size} bytes long (the harness reads at most {MAX_FILE_BYTES})"
            )
        chunks, left = [], size + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_FILE_BYTES:  # grew while read
            raise UnsafeFile(name, f"more than {MAX_FILE_BYTES} bytes long")
        return data
    finally:
        os.close(fd)


def read_if_file(path: Path, anchor: Path) -> bytes | None:
    """The bytes of ``path``, or None when nothing is there or it is a directory."""
    try:
        return read_bytes(path, anchor)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        if exc.what == "a directory":
            return None
        raise


def write_bytes(path: Path, anchor: Path, data: bytes) -> None:
    """Create or replace the contents of the regular file ``path``."""
    fd = _open(path, anchor, os.O_WRONLY | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def set_mtime(path: Path, anchor: Path, ns: int) -> None:
    """Set the modification (and access) time of the regular file ``path``."""
    fd = _open(path, anchor, os.O_RDONLY)
    try:
        os.utime(fd, ns=(ns, ns))
    finally:
        os.close(fd)


def snapshot(root: Path, anchor: Path) -> dict[str, bytes]:
    """Every file under ``root``, relative POSIX path -> bytes, walked without following a
    link; UnsafeFile for the first entry that is neither a regular file nor a directory."""
    if status(root, anchor) == "absent":
        return {}
    found: dict[str, bytes] = {}
    _walk(root, anchor, root, found)
    return dict(sorted(found.items()))


def _walk(directory: Path, anchor: Path, root: Path, found: dict[str, bytes]) -> None:
    """``found`` gets the regular files below ``directory``, each opened relative to its
    directory's descriptor without following a link."""
    parts = _parts(directory, anchor)
    subdirectories = []
    with _parent_fd((*parts, "."), anchor) as fd:
        for name in sorted(os.listdir(fd)):
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    subdirectories.append(name)
                    continue
                what = kind_of(mode)
                if what is not None:
                    raise UnsafeFile("/".join((*parts, name)), what)
                opened = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
            except FileNotFoundError:  # removed while listed
                continue
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENXIO):  # replaced since the lstat
                    raise UnsafeFile(
                        "/".join((*parts, name)), "a symbolic link or a FIFO"
                    ) from None
                raise
            if not stat.S_ISREG(os.fstat(opened).st_mode):
                os.close(opened)
                raise UnsafeFile("/".join((*parts, name)), "not a regular file")
            found[(directory / name).relative_to(root).as_posix()] = _read(
                opened, "/".join((*parts, name))
            )
    for name in subdirectories:
        _walk(directory / name, anchor, root, found)


def unlink(path: Path, anchor: Path) -> None:
    """Remove the directory entry ``path`` (a link itself, never what it points at)."""
    parts = _parts(path, anchor)
    with _parent_fd(parts, anchor) as fd, contextlib.suppress(FileNotFoundError):
        os.unlink(parts[-1], dir_fd=fd)


def make_dirs(path: Path, anchor: Path) -> None:
    """Create the directory ``path`` and any missing one on the way, inside the anchor."""
    parts = _parts(path, anchor)
    for i in range(len(parts)):
        with _parent_fd(parts[: i + 1], anchor) as fd:
            what = _what_at(parts[i], fd)
            if what == "absent":
                os.mkdir(parts[i], dir_fd=fd)
            elif what != "a directory":
                raise UnsafeFile("/".join(parts[: i + 1]), what or "a regular file")


def regular_names(directory: Path, anchor: Path) -> list[str]:
    """The names of the regular files directly in ``directory`` (none when it is absent)."""
    parts = _parts(directory, anchor)
    try:
        with _parent_fd((*parts, "."), anchor) as fd:
            return sorted(n for n in os.listdir(fd) if _what_at(n, fd) is None)
    except FileNotFoundError:
        return []
