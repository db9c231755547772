"""What a load does to the files, as it does it (spec/behaviour/recovery.md §6).

The loader (loader.py, swap_files.py) tells a ``LoadObserver`` before every change that
destroys bytes (a truncation, a deletion) and after every other change (a rename, a
rebuilt or created index, a new segment). ``klogspec recover`` uses the "before" calls to
move the bytes into its quarantine folder first (klogspec/recover/quarantine.py) and the
list of events for its report; its dry run (klogspec/recover/plan.py) turns the events of
a load over a recording storage (storage.py) into its plan. A load without an observer uses ``LoadObserver()``, which
records nothing. A kafka-log-spec addition: Kafka's LogLoader.java only logs what it does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Reason(StrEnum):
    """Why the loader changed a file: stable names, used in reports."""

    DELETED_SUFFIX = "deleted_suffix"  # LOAD-6: a .deleted file
    CLEANED_SUFFIX = "cleaned_suffix"  # LOAD-7: a .cleaned file
    INCOMPLETE_SPLIT = "incomplete_split"  # LOAD-7: a .swap at or above a .cleaned one
    REPLACED_BY_SWAP = "replaced_by_swap"  # LOAD-9: a file in a swap's offset range
    SWAP = "swap"  # LOAD-10: a .swap renamed into place
    ORPHAN_INDEX = "orphan_index"  # LOAD-12
    MISSING_OFFSET_INDEX = "missing_offset_index"  # LOAD-13
    MISSING_TIME_INDEX = "missing_time_index"  # LOAD-14
    CORRUPT_TXN_INDEX = "corrupt_txn_index"  # LOAD-15
    CORRUPT_INDEX = "corrupt_index"  # LOAD-16, the optional sanity check
    UNFLUSHED = "unflushed"  # RECOV-1: at or above the recovery point, unclean shutdown
    INVALID_OFFSET = "invalid_offset"  # RECOV-6: offsets that go back
    AFTER_TRUNCATION = "after_truncation"  # RECOV-5: later than a truncated segment
    LOG_END_BELOW_LOG_START = "log_end_below_log_start"  # LOAD-19
    EMPTY = "empty"  # LOAD-20: no segment left
    OFFSET_OVERFLOW = "offset_overflow"  # RECOV-10: a segment split


@dataclass(frozen=True)
class LoadEvent:
    """One change: ``action`` is delete, truncate, rename, recover, create or split.

    ``position`` and ``size`` describe a truncation (the bytes from ``position`` to the old
    end, ``size`` of them); ``error`` names the category that stopped the scan, or
    ``partial_batch``/``zero_tail`` when the bytes are not an entry at all.
    """

    action: str
    file: Path
    reason: Reason
    position: int | None = None
    size: int | None = None
    error: str | None = None
    to: Path | None = None


@dataclass
class LoadObserver:
    """Records the events of one load; subclasses act before destructive ones."""

    events: list[LoadEvent] = field(default_factory=list)

    def deleting(self, file: Path, reason: Reason) -> None:
        """``file`` is about to be deleted (or renamed ``.deleted`` for deletion)."""
        self.events.append(LoadEvent("delete", file, reason))

    def truncating(
        self, file: Path, position: int, size: int, reason: Reason, error: str | None
    ) -> None:
        """``file`` is about to lose its bytes from ``position`` (``size`` of them)."""
        self.events.append(LoadEvent("truncate", file, reason, position, size, error))

    def renamed(self, file: Path, to: Path, reason: Reason) -> None:
        self.events.append(LoadEvent("rename", file, reason, to=to))

    def recovering(self, file: Path, reason: Reason) -> None:
        """The segment of ``file`` (its .log) is about to be recovered (no event: a recovery
        changes a file only by the truncation it reports)."""

    def recovered(self, file: Path, reason: Reason) -> None:
        """The segment of ``file`` (its .log) was recovered: its indexes rebuilt."""
        self.events.append(LoadEvent("recover", file, reason))

    def created(self, file: Path, reason: Reason) -> None:
        self.events.append(LoadEvent("create", file, reason))
