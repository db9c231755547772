"""The quarantine folder's ``manifest.json`` as a journal, so that ``klogspec recover`` killed at
any moment leaves a directory a second run finishes (spec/behaviour/recovery.md §7, RECOV-21).

A run writes, in this order, each step durable (written, fsynced, and its directory fsynced)
before the next begins:

1. the folder, then the manifest with ``"state": "in-progress"``, the recovery point and the
   ``planned`` truncations and deletions (the intent);
2. a copy of every producer snapshot, then the manifest naming them (``snapshotsBefore``);
3. for each truncation or deletion, when the loader is about to make it: the bytes (a copy of
   the cut range, a hard link of the doomed file), then the manifest with its entry; only then
   does the loader cut or delete;
4. when the load and the close are done: the manifest with ``"state": "complete"`` and the
   snapshots the load changed; then the unneeded snapshot copies go.

So the manifest never names a piece that is not (wholly) there, and every byte a kill could
have removed from a ``.log`` is in a piece the manifest names. A piece written but not yet
named is an orphan the next write of that name replaces.

``STEP`` is called after each durable step with its name: a no-op, which the crash tests
replace to kill the process there (tests/recovery/test_recover_crash.py), or which
``KLOGSPEC_FAULT_KILL_AT=N`` in the environment turns into a SIGKILL at the N-th step.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from reference_impl.log.checkpoint_files import fsync_dir

from .naming import MANIFEST

__all__ = ["Journal", "MANIFEST", "fsync_dir", "step"]

MANIFEST_VERSION = 2
IN_PROGRESS, COMPLETE = "in-progress", "complete"
RANGES = "[from, to): from inclusive, to exclusive, for byte positions and offsets alike"
_COPY_CHUNK = 1 << 20


# --- durable file operations ---------------------------------------------------------------


def make_dirs_durably(path: Path) -> None:
    """``mkdir -p``, each new directory's parent fsynced so the name survives a power loss."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir()
        fsync_dir(directory.parent)


def write_durably(path: Path, data: bytes) -> None:
    """A whole file, atomically: a temporary file written and fsynced, renamed over ``path``,
    the directory fsynced (CheckpointFile.write's order)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError:
        os.close(fd)
        os.unlink(tmp)  # a full disk: the old file stands, no half-written copy beside it
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def copy_range_durably(source: Path, position: int, size: int, target: Path) -> int:
    """Bytes ``[position, position + size)`` of ``source`` into ``target`` (replaced), fsynced;
    returns how many there were (fewer at the end of the file)."""
    copied = 0
    with open(source, "rb") as handle:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            while copied < size:
                chunk = os.pread(
                    handle.fileno(), min(_COPY_CHUNK, size - copied), position + copied
                )
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
                copied += len(chunk)
            os.fsync(fd)
        finally:
            os.close(fd)
    fsync_dir(target.parent)
    return copied


def keep_file_durably(source: Path, target: Path) -> None:
    """``target`` becomes another name of ``source`` (a hard link: deleting ``source`` then
    only removes a name), or a copy where links are not supported."""
    if target.exists():
        os.unlink(target)  # an orphan of a killed run (its manifest never named it)
    try:
        os.link(source, target)
    except OSError:
        copy_range_durably(source, 0, source.stat().st_size, target)
    fsync_dir(target.parent)


def link_durably(source: Path, target: Path) -> bool:
    """``target`` becomes another name of ``source``, when the file system links; no copy."""
    if target.exists():
        os.unlink(target)  # an orphan of a killed run
    try:
        os.link(source, target)
    except OSError:
        return False
    fsync_dir(target.parent)
    return True


def same_bytes(a: Path, b: Path, position: int = 0) -> bool:
    """Whether ``a`` holds exactly the bytes of ``b`` from ``position`` on."""
    try:
        size = a.stat().st_size
        if b.stat().st_size - position != size:
            return False
        with open(a, "rb") as one, open(b, "rb") as two:
            two.seek(position)
            while chunk := one.read(_COPY_CHUNK):
                if chunk != two.read(len(chunk)):
                    return False
        return True
    except OSError:
        return False


# --- the fault-injection hook ----------------------------------------------------------------


def _kill_at_from_environment() -> Callable[[str], None]:
    """``KLOGSPEC_FAULT_KILL_AT=N``: SIGKILL this process after its N-th durable step."""
    target = os.environ.get("KLOGSPEC_FAULT_KILL_AT")
    if not target:
        return lambda step: None
    count = [0]

    def step(name: str) -> None:
        count[0] += 1
        if count[0] == int(target):
            os.kill(os.getpid(), signal.SIGKILL)

    return step


STEP: Callable[[str], None] = _kill_at_from_environment()


def step(name: str) -> None:
    STEP(name)


# --- the journal ---------------------------------------------------------------------------


class Journal:
    """One quarantine folder's manifest, rewritten durably after each change."""

    def __init__(self, folder: Path, manifest: dict) -> None:
        self.folder = folder
        self.manifest = manifest

    @classmethod
    def start(cls, folder: Path, partition: Path, **facts) -> Journal:
        """Steps 1: the folder, then the manifest ``in-progress`` with ``facts``
        (``recoverFrom``, ``planned``, ``discard``)."""
        make_dirs_durably(folder)
        step("folder")
        manifest = {
            "version": MANIFEST_VERSION,
            "tool": "klogspec recover",
            "partition": partition.name,
            "state": IN_PROGRESS,
            "created": _now(),
            "ranges": RANGES,
            **facts,
            "entries": [],
        }
        journal = cls(folder, manifest)
        try:
            journal.save("manifest")
        except OSError:
            _remove_empty(folder)  # nothing was changed yet: leave no folder without a manifest
            raise
        return journal

    @classmethod
    def read(cls, folder: Path) -> Journal | None:
        """The journal of ``folder``, or None when it has no readable manifest."""
        try:
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cls(folder, manifest) if isinstance(manifest, dict) else None

    @property
    def unfinished(self) -> bool:
        """Version 1 manifests were written once, at the end: they are finished."""
        return self.manifest.get("state") == IN_PROGRESS

    @property
    def entries(self) -> list[dict]:
        return self.manifest["entries"]

    def named(self) -> set[str]:
        """The pieces the manifest names: the only names a new piece must not replace."""
        names = {e["stored"] for e in self.entries if e.get("stored")}
        return names | set(self.manifest.get("snapshotsBefore", {}).values())

    def save(self, step_name: str) -> None:
        data = (json.dumps(self.manifest, indent=2) + "\n").encode()
        write_durably(self.folder / MANIFEST, data)
        step(step_name)

    def add(self, entry: dict) -> None:
        self.entries.append(entry)
        self.save(f"entry {entry['action']} {entry['file']}")

    def complete(self, **facts) -> None:
        self.manifest.pop("snapshotsBefore", None)
        self.manifest.update(state=COMPLETE, completed=_now(), **facts)
        self.save("complete")


def _remove_empty(folder: Path) -> None:
    """``folder``, and its parent, when empty."""
    for directory in (folder, folder.parent):
        try:
            os.rmdir(directory)
        except OSError:
            return


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
