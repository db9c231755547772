"""What a failed ``klogspec recover`` did and did not do (spec/behaviour/recovery.md §7, RECOV-25).

A load can fail part-way: a full disk (``ENOSPC``) while the quarantine keeps a cut range or the
loader rebuilds an index, a segment too large for its index, an I/O error. The journal stays
``in-progress`` (the next run finishes it, RECOV-21), and the report must not read as a success:

* each planned truncation, deletion and rename is checked on disk and listed as done or not
  done: a truncation is done when the file is no longer than the cut's position, a deletion
  when the file is gone, a rename when the new name is there and the old one is not;
* a piece the quarantine was writing when the error came is removed (quarantine.py): its
  bytes are still in the ``.log``, which was not cut, and its name claims bytes it does not
  hold;
* index files the failed load created or grew to ``segment.index.bytes`` (Kafka preallocates
  an index when it opens one, INDEX-1, and trims it only at the close that never came) are
  put back: a new one is removed (the next load makes it again), a grown one trimmed to its
  old size or its last entry, whichever is longer, so no 10 MiB files are left on a full disk;
* the bytes the quarantine still needs for the cut ranges not yet kept are named, so the
  operator knows what to free (or that ``--discard`` needs none).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.formats.file_naming import FileKind, classify
from reference_impl.formats.index_entries import OFFSET_INDEX_ENTRY_SIZE, TIME_INDEX_ENTRY_SIZE
from reference_impl.log.segment_recovery import ZERO_TAIL

from .journal import fsync_dir
from .plan import Action, RecoveryPlan

_ENTRY_SIZES = {
    FileKind.OFFSET_INDEX: OFFSET_INDEX_ENTRY_SIZE,
    FileKind.TIME_INDEX: TIME_INDEX_ENTRY_SIZE,
}


@dataclass
class FailedRun:
    """The state a failed load left: planned changes ``done`` and ``not_done``, what was
    cleaned up, and the bytes the quarantine still needs."""

    done: list[Action] = field(default_factory=list)
    not_done: list[Action] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)
    needed_bytes: int = 0

    def to_dict(self) -> dict:
        return {
            "done": [a.to_dict() for a in self.done],
            "notDone": [a.to_dict() for a in self.not_done],
            "cleanup": self.cleanup,
            "quarantineNeedsBytes": self.needed_bytes,
        }


def index_sizes(dir: Path) -> dict[str, int]:
    """The size of each offset and time index of ``dir``, before a load."""
    sizes = {}
    for path in dir.iterdir():
        if classify(path).kind in _ENTRY_SIZES and path.is_file() and not path.is_symlink():
            sizes[path.name] = path.stat().st_size
    return sizes


def failed_run(
    dir: Path, plan: RecoveryPlan, before: dict[str, int] | None, cleanup: list[str]
) -> FailedRun:
    """RECOV-25: the planned changes checked on disk, the indexes put back to ``before`` (None:
    the load and the close were done, so the indexes are as the close left them)."""
    run = FailedRun(cleanup=list(cleanup))
    for action in plan.actions:
        if action.action not in ("truncate", "delete", "rename"):
            continue
        if action.file in _made_by_the_load(plan, before or {}):
            continue  # an index the load makes and then deletes: never the operator's file
        (run.done if _done(dir, action) else run.not_done).append(action)
    run.needed_bytes = sum(
        a.bytes or 0 for a in run.not_done if a.action == "truncate" and a.error != ZERO_TAIL
    )
    if before is not None:
        run.cleanup += restore_index_sizes(dir, before)
    return run


def _made_by_the_load(plan: RecoveryPlan, before: dict[str, int]) -> set[str]:
    return {
        a.file
        for a in plan.actions
        if a.action in ("rebuild", "create")
        and classify(a.file).kind in _ENTRY_SIZES
        and a.file not in before
    }


def _done(dir: Path, action: Action) -> bool:
    path = dir / action.file
    if action.action == "truncate":
        return path.exists() and path.stat().st_size <= action.position
    if action.action == "delete":
        return not path.exists()
    return not path.exists() and (dir / action.to).exists()


def restore_index_sizes(dir: Path, before: dict[str, int]) -> list[str]:
    """Index files a failed load preallocated, removed (new) or trimmed (grown); one line each."""
    notes = []
    for name, size in sorted(index_sizes(dir).items()):
        old = before.get(name)
        if old is not None and size <= old:
            continue
        path = dir / name
        keep = max(old or 0, _last_entry_end(path, _ENTRY_SIZES[classify(path).kind]))
        if keep >= size and not (old is None and keep == 0):
            continue  # nothing preallocated beyond its entries
        try:
            if old is None and keep == 0:
                os.unlink(path)
                notes.append(f"removed {name} ({size} bytes preallocated by the failed load)")
            else:
                os.truncate(path, keep)
                notes.append(
                    f"trimmed {name} from {size} to {keep} bytes (preallocated by the failed load)"
                )
        except OSError as exc:
            notes.append(f"could not trim {name} ({size} bytes): {exc.strerror or exc}")
    if notes:
        fsync_dir(dir)
    return notes


def _last_entry_end(path: Path, entry_size: int) -> int:
    """The end of the last slot that is not all zeros, read backwards in 1 MiB windows (a
    preallocated index is mostly a hole)."""
    size = path.stat().st_size // entry_size * entry_size
    window = (1 << 20) // entry_size * entry_size
    with open(path, "rb") as handle:
        end = size
        while end > 0:
            start = max(0, end - window)
            data = os.pread(handle.fileno(), end - start, start)
            stripped = len(data.rstrip(b"\0"))
            if stripped:
                return start + -(-stripped // entry_size) * entry_size
            end = start
    return 0
