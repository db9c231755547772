"""The quarantine folder of ``klogspec recover`` (spec/behaviour/recovery.md §7, RECOV-14 to RECOV-17,
RECOV-20, RECOV-21).

A kafka-log-spec addition, not Kafka's: recovery cuts torn or corrupt bytes off ``.log``
files and deletes whole segments, and a tool run by hand must not destroy data silently.
Before each such change the loader tells its observer; ``Quarantine`` then keeps the bytes
in ``<partition>/.klogspec-quarantine/<UTC time>/`` and names them in the folder's
``manifest.json`` (journal.py: every piece durable before the manifest names it, the
manifest durable before the loader changes anything):

* a file about to be deleted is hard-linked there (a copy if linking fails), under its name;
* the bytes cut off a file are copied to ``<name>.<from>-<to>`` (positions, ``to``
  exclusive); a tail of zeros (a preallocated file) is noted but not copied;
* each manifest entry gives the action, file, position, bytes, reason, the offsets the batch
  headers claim (``[first, end)``, end exclusive) and the stored name;
* producer snapshots the load deleted or rewrote (it rebuilds producer state, SNAP-B-2 to
  SNAP-B-8) are kept whole, with the action ``snapshot`` (RECOV-20): copied before the
  load, and kept after it when they changed.

A run resumed after a kill (run.py) reuses its folder: a change the manifest already holds,
with its bytes, is not stored twice.

The loader ignores directories in a partition directory, so the folder is never loaded.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from reference_impl.formats.file_naming import PRODUCER_SNAPSHOT_FILE_SUFFIX, FileKind, classify
from reference_impl.log.load_events import LoadObserver, Reason
from reference_impl.log.segment_recovery import ZERO_TAIL

from .journal import (
    Journal,
    copy_range_durably,
    fsync_dir,
    keep_file_durably,
    link_durably,
    same_bytes,
    step,
)
from .naming import QUARANTINE_DIR, slice_name
from .plan import claimed_offsets


def quarantine_folder(partition: Path, now: float | None = None) -> Path:
    """RECOV-14: ``<partition>/.klogspec-quarantine/<YYYYMMDDTHHMMSSZ>``, with ``-2``, ``-3``...
    when a run in the same second left one."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    folder, n = partition / QUARANTINE_DIR / stamp, 1
    while folder.exists():
        n += 1
        folder = partition / QUARANTINE_DIR / f"{stamp}-{n}"
    return folder


def quarantine_folders(partition: Path) -> list[Path]:
    """The partition's quarantine folders, oldest first."""
    root = partition / QUARANTINE_DIR
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir()), key=_folder_order)


def _folder_order(path: Path) -> tuple[str, int]:
    stamp, _, n = path.name.partition("-")
    return (stamp, int(n) if n.isdigit() else 1)


class Quarantine(LoadObserver):
    """A load observer that keeps every byte the load removes (unless ``discard``), each
    named in ``journal`` before the loader goes on."""

    def __init__(
        self, partition: Path, journal: Journal, discard: bool = False, links: bool = False
    ) -> None:
        super().__init__()
        self.partition = partition
        self.journal = journal
        self.folder = journal.folder
        self.discard = discard
        # with discard, still keep a deleted file by a hard link (no space needed): a run
        # resumed with --discard after a full disk loses no intact segment that way
        self.links = links
        self.segment_recovered: Callable[[Path], None] = lambda file: None
        self.cleanup: list[str] = []  # what a failed run removed of its own partial pieces

    # --- the loader's events ---
    def deleting(self, file: Path, reason: Reason) -> None:
        super().deleting(file, reason)
        entry = {"action": "delete", "file": file.name, "bytes": file.stat().st_size}
        entry.update(reason=str(reason), **_offsets(file, 0, None))
        if self._already_kept(entry, file):
            return
        if not self.discard:
            target = self._target(file.name)
            self._keep(target, entry["bytes"], keep_file_durably, file, target)
            entry["stored"] = target.name
        elif self.links and link_durably(file, target := self._target(file.name)):
            entry["stored"] = target.name
        self.journal.add(entry)

    def truncating(self, file, position, size, reason, error) -> None:
        super().truncating(file, position, size, reason, error)
        entry = {"action": "truncate", "file": file.name, "position": position, "bytes": size}
        entry.update(reason=str(reason), error=error, **_offsets(file, position, position + size))
        if self._already_kept(entry, file):
            return
        if not self.discard:
            if error == ZERO_TAIL:
                entry["stored"] = None  # zeros are noted, not kept (RECOV-14's MAY)
            else:
                target = self._target(slice_name(file.name, position, position + size))
                self._keep(target, size, copy_range_durably, file, position, size, target)
                entry["stored"] = target.name
        self.journal.add(entry)

    def recovered(self, file: Path, reason: Reason) -> None:
        super().recovered(file, reason)
        self.segment_recovered(file)

    def _keep(self, target: Path, size: int, write: Callable[..., object], *args) -> None:
        """RECOV-25: ``write(*args)`` the piece ``target`` of ``size`` bytes; when it fails (a full
        disk), the partial piece goes, since its name claims bytes it does not hold (they
        are still in the partition's file, which is changed only after the piece is whole)."""
        try:
            write(*args)
        except OSError as exc:
            held = target.stat().st_size if target.is_file() else 0
            with contextlib.suppress(OSError):
                os.unlink(target)
                self.cleanup.append(
                    f"removed the partial piece {target.name} ({held} of {size} bytes written "
                    f"when {exc.strerror or exc}); those bytes are still in the partition"
                )
            raise

    def _already_kept(self, entry: dict, file: Path) -> bool:
        """A resumed run meets again a change its killed predecessor journaled (with its
        bytes) but did not make."""
        position = entry.get("position", 0)
        for old in self.journal.entries:
            if any(old.get(k) != entry.get(k) for k in ("action", "file", "position", "bytes")):
                continue
            stored = old.get("stored")
            if stored is None or same_bytes(self.folder / stored, file, position):
                return True
        return False

    # --- RECOV-20: producer snapshots ---
    def remember_snapshots(self) -> None:
        """A copy of each producer snapshot as it is before the load, named in the manifest
        (a resumed run keeps its predecessor's: those are the originals)."""
        if self.discard or "snapshotsBefore" in self.journal.manifest:
            return
        copies: dict[str, str] = {}
        for path in sorted(self.partition.glob("*" + PRODUCER_SNAPSHOT_FILE_SUFFIX)):
            if path.is_file():
                target = self._target(path.name, taken=set(copies.values()))
                size = path.stat().st_size
                self._keep(target, size, copy_range_durably, path, 0, size, target)
                copies[path.name] = target.name
        self.journal.manifest["snapshotsBefore"] = copies
        self.journal.save("snapshots")

    def keep_changed_snapshots(self) -> list[Path]:
        """RECOV-20: an entry for each snapshot the load deleted or rewrote, kept as it was;
        returns the copies of the others, to remove once the manifest no longer names them."""
        unneeded = []
        for name, stored in self.journal.manifest.get("snapshotsBefore", {}).items():
            copy, path = self.folder / stored, self.partition / name
            if path.is_file() and same_bytes(copy, path):
                unneeded.append(copy)
                continue
            entry = {"action": "snapshot", "file": name, "bytes": copy.stat().st_size}
            entry.update(reason="rewritten" if path.is_file() else "deleted", stored=stored)
            self.journal.entries.append(entry)
        return unneeded

    def _target(self, name: str, taken: set[str] = frozenset()) -> Path:
        """``name`` in the folder, or ``name~2``, ``name~3``... when the manifest names it
        (a file there that it does not name is an orphan of a killed run: replaced)."""
        taken = self.journal.named() | taken
        target, n = name, 1
        while target in taken:
            n += 1
            target = f"{name}~{n}"
        return self.folder / target

    # --- the end ---
    def finish(self, **facts) -> Path | None:
        """Mark the manifest complete (RECOV-15); returns the folder, or None when it keeps
        no piece (the folder is then removed, as with ``discard``; a run resumed with
        ``discard`` keeps the pieces its predecessor stored)."""
        unneeded = self.keep_changed_snapshots()
        self.journal.complete(**facts)
        for copy in unneeded:
            os.unlink(copy)
        if unneeded:
            fsync_dir(self.folder)
            step("snapshot copies removed")
        if not self.journal.entries or (self.discard and not self.journal.named()):
            remove_folder(self.folder)
            return None
        return self.folder


def remove_folder(folder: Path) -> None:
    """A finished journal that kept nothing: its folder goes, and the quarantine directory
    too when it is left empty."""
    for path in folder.iterdir():
        os.unlink(path)
    os.rmdir(folder)
    fsync_dir(folder.parent)
    if not any(folder.parent.iterdir()):
        os.rmdir(folder.parent)
        fsync_dir(folder.parent.parent)
    step("folder removed")


def _offsets(file: Path, position: int, end: int | None) -> dict:
    """``{"offsets": [first, end)}`` of the batches the bytes hold, or nothing when none
    frames."""
    if classify(file).kind is not FileKind.LOG:
        return {}
    found = claimed_offsets(file, position, end)
    return {} if found is None else {"offsets": list(found)}
