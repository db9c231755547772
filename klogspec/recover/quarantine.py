"""The quarantine folder of ``klogspec recover`` (spec/behaviour/recovery.md §7, RECOV-14 to RECOV-17).

A kafka-log-spec addition, not Kafka's: recovery cuts torn or corrupt bytes off ``.log``
files and deletes whole segments, and a tool run by hand must not destroy data silently.
Before each such change the loader tells its observer; ``Quarantine`` then keeps the bytes
in ``<partition>/.klogspec-quarantine/<UTC time>/``:

* a file about to be deleted is hard-linked there (a copy if linking fails), under its name;
* the bytes cut off a file are copied to ``<name>.<from>-<to>`` (positions, end exclusive);
  a tail of zeros (a preallocated file) is noted but not copied;
* ``manifest.json`` lists every piece: the action, file, position, bytes, reason, the
  offsets the batch headers claim, and the stored name;
* producer snapshots the load deleted or rewrote (it rebuilds producer state, SNAP-B-2 to
  SNAP-B-8) are kept whole, with the action ``snapshot`` (RECOV-20): read before the load
  (they are small: 46 bytes per producer) and stored after it when they changed.

The loader ignores directories in a partition directory, so the folder is never loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from reference_impl.formats.file_naming import PRODUCER_SNAPSHOT_FILE_SUFFIX, FileKind, classify
from reference_impl.log.checkpoint_files import fsync_dir, write_atomically
from reference_impl.log.load_events import LoadObserver, Reason
from reference_impl.log.segment_recovery import ZERO_TAIL

from .scan import claimed_offsets

QUARANTINE_DIR = ".klogspec-quarantine"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
_COPY_CHUNK = 1 << 20


def quarantine_folder(partition: Path, now: float | None = None) -> Path:
    """RECOV-14: ``<partition>/.klogspec-quarantine/<YYYYMMDDTHHMMSSZ>``, with ``-2``, ``-3``...
    when a run in the same second left one."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    folder, n = partition / QUARANTINE_DIR / stamp, 1
    while folder.exists():
        n += 1
        folder = partition / QUARANTINE_DIR / f"{stamp}-{n}"
    return folder


class Quarantine(LoadObserver):
    """A load observer that keeps every byte the load removes (unless ``discard``)."""

    def __init__(self, partition: Path, folder: Path | None = None, discard: bool = False) -> None:
        super().__init__()
        self.partition = partition
        self.folder = folder or quarantine_folder(partition)
        self.discard = discard
        self.entries: list[dict] = []
        self._snapshots: dict[str, bytes] = {}

    def deleting(self, file: Path, reason: Reason) -> None:
        super().deleting(file, reason)
        entry = {"action": "delete", "file": file.name, "bytes": file.stat().st_size}
        entry.update(reason=str(reason), offsets=_offsets(file, 0, None))
        if not self.discard:
            entry["stored"] = self._store_file(file)
        self.entries.append(entry)

    def truncating(self, file, position, size, reason, error) -> None:
        super().truncating(file, position, size, reason, error)
        entry = {"action": "truncate", "file": file.name, "position": position, "bytes": size}
        entry.update(
            reason=str(reason), error=error, offsets=_offsets(file, position, position + size)
        )
        if not self.discard:
            entry["stored"] = (
                None if error == ZERO_TAIL else self._store_bytes(file, position, size)
            )
        self.entries.append(entry)

    def remember_snapshots(self) -> None:
        """RECOV-20: the producer snapshots as they are before the load."""
        self._snapshots = {
            path.name: path.read_bytes()
            for path in sorted(self.partition.glob("*" + PRODUCER_SNAPSHOT_FILE_SUFFIX))
            if path.is_file()
        }

    def keep_changed_snapshots(self) -> None:
        """RECOV-20: keep each snapshot the load deleted or rewrote, as it was."""
        for name, data in self._snapshots.items():
            path = self.partition / name
            if path.is_file() and path.read_bytes() == data:
                continue
            entry = {"action": "snapshot", "file": name, "bytes": len(data)}
            entry["reason"] = "rewritten" if path.is_file() else "deleted"
            if not self.discard:
                target = self._target(name)
                target.write_bytes(data)
                _fsync(target)
                entry["stored"] = target.name
            self.entries.append(entry)

    def _target(self, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        target, n = self.folder / name, 1
        while target.exists():
            n += 1
            target = self.folder / f"{name}~{n}"
        return target

    def _store_file(self, file: Path) -> str:
        target = self._target(file.name)
        try:
            os.link(file, target)  # the deletion then only removes a name
        except OSError:
            shutil.copy2(file, target)
            _fsync(target)
        fsync_dir(self.folder)
        return target.name

    def _store_bytes(self, file: Path, position: int, size: int) -> str:
        target = self._target(f"{file.name}.{position}-{position + size}")
        with open(file, "rb") as source, open(target, "wb") as out:
            source.seek(position)
            left = size
            while left:
                chunk = source.read(min(_COPY_CHUNK, left))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)
            out.flush()
            os.fsync(out.fileno())
        return target.name

    def finish(self, **facts) -> Path | None:
        """Write ``manifest.json`` (RECOV-15) when anything was kept; returns the folder."""
        if self.discard or not self.entries:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        manifest = {
            "version": MANIFEST_VERSION,
            "tool": "klogspec recover",
            "partition": self.partition.name,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **facts,
            "entries": self.entries,
        }
        write_atomically(self.folder / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())
        fsync_dir(self.folder.parent)
        return self.folder


def _offsets(file: Path, position: int, end: int | None) -> list[int] | None:
    found = claimed_offsets(file, position, end) if classify(file).kind is FileKind.LOG else None
    return None if found is None else list(found)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
