"""The log directory's ``.lock``: ``klogspec recover`` must not change a directory a broker (or
another recover) has open (spec/behaviour/recovery.md §7, RECOV-22).

A Kafka broker holds ``<log dir>/.lock`` for as long as it runs (LogManager.lockLogDirs,
FileLock.tryLock: a POSIX ``fcntl`` lock on Linux); ``flock(1)`` and other tools take BSD
``flock`` locks, which Linux keeps apart from ``fcntl`` ones. ``LogDirLock`` takes both, without
waiting, and holds them until the run ends; when either is held elsewhere it raises
``LockHeld``, naming the holder from ``/proc/locks`` when it can. The file is created when
missing, as a broker creates it; it is never deleted (a process may be about to lock it).

RECOV-23: the file is opened without following a symbolic link (``O_NOFOLLOW``) and without
blocking (``O_NONBLOCK``), and must be a regular file: a dangling ``.lock`` link would
otherwise make the run create its target outside the log directory (Kafka's
``FileChannel.open`` follows it), and a FIFO would block. Anything else raises ``LockUnsafe``.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

from ..safe_files import kind_of

LOCK_FILE = ".lock"  # LogManager.LockFileName


class LockHeld(Exception):
    """Another process holds the log directory's lock."""

    def __init__(self, path: Path, holders: list[str]) -> None:
        self.path, self.holders = path, holders
        who = ", ".join(holders) if holders else "another process"
        super().__init__(f"{path} is locked by {who}")


class LockUnsafe(Exception):
    """The ``.lock`` is a symbolic link or not a regular file: not opened, not created."""


class LogDirLock:
    """``with LogDirLock(log_dir):`` the lock for the block; ``LockHeld`` when it is taken."""

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / LOCK_FILE
        self.fd: int | None = None

    def __enter__(self) -> LogDirLock:
        fd = _open_lock_file(self.path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # releases whichever of the two this process got
            raise LockHeld(self.path, lock_holders(self.path))
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return self

    def __exit__(self, *exc_info) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases both locks
            self.fd = None


# Not safe_files.open_regular: the lock is opened read-write and created when missing.
def _open_lock_file(path: Path) -> int:
    """``path`` opened read-write (created when missing), never through a symbolic link and
    never blocking; ``LockUnsafe`` when it is a link or not a regular file."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if not os.path.islink(path):
            raise
        raise LockUnsafe(
            f"{path} is a symbolic link (to {os.readlink(path)}): not followed, since it could "
            "create or lock a file outside the log directory; a broker's .lock is a regular "
            "file: remove the link, then run again"
        ) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise LockUnsafe(f"{path} is not a regular file ({kind_of(mode)}): not used as the lock")
    return fd


def lock_holders(path: Path) -> list[str]:
    """The processes ``/proc/locks`` says hold a lock on ``path``, as ``pid N (command), flock
    lock``; empty when nothing is known (no /proc, or a process of another PID namespace)."""
    try:
        stat = path.stat()
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    holders = []
    for line in lines:
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; "1: -> ..." lines are waiters
        if len(fields) < 6 or fields[1] == "->" or fields[5] != device:
            continue
        kind, pid = fields[1], fields[4]
        label = f"pid {pid}" if pid.isdigit() and pid != "0" else "a process"
        command = "this process" if pid == str(os.getpid()) else _command(pid)
        label += f" ({command})" if command else ""
        label += f", {'flock' if kind == 'FLOCK' else 'fcntl'} lock"
        if label not in holders:
            holders.append(label)
    return holders


def _command(pid: str, limit: int = 80) -> str:
    """The command line of ``pid``, shortened."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    text = " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    return text if len(text) <= limit else text[: limit - 3] + "..."
