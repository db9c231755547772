"""The clean-shutdown marker of a log directory (spec/behaviour/recovery.md §1, LOAD-1 to LOAD-4).

``.kafka_cleanshutdown`` at a log directory's root says the broker closed every log of
that directory [CleanShutdownFileHandler.java, LogManager.scala loadLogs/shutdown]. Kafka
reads it once per directory at startup and deletes it **before** loading, so a crash
while loading counts as unclean (quirk 14); it writes it back at shutdown, after every
log of the directory is closed and both offset checkpoints are written.

The reference has no log manager: each ``Log`` is opened on its own. ``LogDirs`` plays
the log manager's part for the marker: the first log opened in a directory reads and
deletes the marker, and the flag holds for every log opened there while any is open;
the marker is written back when the last open log of the directory closes cleanly,
and never once a log of the directory crashed (or went offline) in this session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..formats.checkpoints import write_clean_shutdown
from .checkpoint_files import fsync_dir
from .storage import storage

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
NO_BROKER_EPOCH = -1  # LogManager.shutdown(brokerEpoch = -1)


def marker_exists(log_dir: Path) -> bool:
    """CLEAN-1, CLEAN-2: the marker counts by its presence alone, whatever it holds."""
    return storage().exists(log_dir / CLEAN_SHUTDOWN_FILE)


def delete_marker(log_dir: Path) -> None:
    """LOAD-2: delete the marker before any log of the directory is loaded. The directory
    is fsynced so the deletion survives a crash during loading (Kafka does not fsync)."""
    if storage().unlink(log_dir / CLEAN_SHUTDOWN_FILE, missing_ok=True):
        fsync_dir(log_dir)


def write_marker(log_dir: Path, broker_epoch: int = NO_BROKER_EPOCH) -> None:
    """CLEAN-3: ``{"version":0,"brokerEpoch":<epoch>}``, fsynced (and its name, by a
    directory fsync)."""
    storage().write_file(
        log_dir / CLEAN_SHUTDOWN_FILE, write_clean_shutdown(broker_epoch), sync=True
    )
    fsync_dir(log_dir)


@dataclass
class _LogDirState:
    had_clean_shutdown: bool
    open_logs: int = 0
    crashed: bool = False


class LogDirs:
    """The log manager's view of each log directory this process has logs open in."""

    def __init__(self) -> None:
        self._dirs: dict[Path, _LogDirState] = {}

    def opening(self, log_dir: Path) -> bool:
        """A log of ``log_dir`` is being loaded: whether the directory was shut down cleanly.

        The first log of a directory reads the marker and deletes it (LOAD-1, LOAD-2); later
        ones share that answer, as Kafka's logs loaded at one startup do."""
        key = log_dir.resolve()
        state = self._dirs.get(key)
        if state is None:
            state = self._dirs[key] = _LogDirState(marker_exists(log_dir))
            delete_marker(log_dir)
        state.open_logs += 1
        return state.had_clean_shutdown

    def closed(self, log_dir: Path, *, clean: bool) -> None:
        """A log of ``log_dir`` closed (``clean``) or crashed; the last clean close of a
        directory with no crash writes the marker (LOAD-3)."""
        key = log_dir.resolve()
        state = self._dirs.get(key)
        if state is None:
            return
        state.open_logs -= 1
        state.crashed |= not clean
        if state.open_logs <= 0:
            del self._dirs[key]
            if not state.crashed:
                write_marker(log_dir)


LOG_DIRS = LogDirs()
