"""LeaderEpochFileCache and its ``leader-epoch-checkpoint`` file (spec/behaviour/append.md, truncate.md).

The cache maps each leader epoch to the first offset written in it, in ascending
epoch and offset order [storage/.../epoch/LeaderEpochFileCache.java]. It grows as
leaders stamp batches (append), loses its tail when the log is truncated, and
loses its head (the first entry moved up to the new start) when the log start
offset rises. Kafka writes the file synchronously on ``assign`` and
asynchronously after truncations; the reference writes it synchronously every
time, so the file always equals the cache.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidArgumentError
from ..formats.checkpoints import (
    EpochEntry,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)
from .checkpoint_files import write_atomically
from .storage import storage


class LeaderEpochFileCache:
    def __init__(self, checkpoint: str | Path) -> None:
        """Open the checkpoint (created empty, 0 bytes, if missing) and load its entries
        through ``assign``'s rules, without writing."""
        self.checkpoint = Path(checkpoint)
        storage().touch(self.checkpoint)
        self._epochs: list[EpochEntry] = []  # ascending by epoch (and start offset)
        for entry in read_leader_epoch_checkpoint(
            storage().read_file(self.checkpoint), file=str(self.checkpoint)
        ):
            self._assign(entry)

    # --- queries ---
    def epoch_entries(self) -> list[EpochEntry]:
        return list(self._epochs)

    def latest_entry(self) -> EpochEntry | None:
        return self._epochs[-1] if self._epochs else None

    def latest_epoch(self) -> int | None:
        return self._epochs[-1].epoch if self._epochs else None

    def earliest_entry(self) -> EpochEntry | None:
        return self._epochs[0] if self._epochs else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch in force at ``offset``: that of the last entry starting at or before it."""
        previous = None
        for entry in self._epochs:
            if entry.start_offset == offset:
                return entry.epoch
            if entry.start_offset > offset:
                return previous
            previous = entry.epoch
        return previous

    # --- changes ---
    def assign(self, epoch: int, start_offset: int) -> None:
        """LEPOCH-2 to LEPOCH-4: record that ``epoch`` starts at ``start_offset``.

        Nothing changes when the latest entry has the same epoch and a start offset at
        or below this one. Otherwise trailing entries with an epoch >= ``epoch`` or a
        start offset >= ``start_offset`` are removed, the entry is added and the file
        written. Negative values are an ``invalid_argument``.
        """
        if self._assign(EpochEntry(epoch, start_offset)):
            self._write()

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise InvalidArgumentError(f"received invalid partition leader epoch entry {entry}")
        latest = self.latest_entry()
        if (
            latest is not None
            and entry.epoch == latest.epoch
            and entry.start_offset >= latest.start_offset
        ):
            return False
        while self._epochs and (
            self._epochs[-1].epoch >= entry.epoch
            or self._epochs[-1].start_offset >= entry.start_offset
        ):
            self._epochs.pop()
        self._epochs.append(entry)
        return True

    def truncate_from_end(self, end_offset: int) -> None:
        """LEPOCH-6: remove the entries starting at or after ``end_offset`` (log truncation)."""
        if truncate_entries_from_end(self._epochs, end_offset):
            self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """LEPOCH-7: remove the entries starting at or before ``start_offset``, then put the last one
        removed back with its start moved to ``start_offset`` (the log start rose)."""
        if truncate_entries_from_start(self._epochs, start_offset):
            self._write()

    def clear_and_flush(self) -> None:
        self._epochs.clear()
        self._write()

    def _write(self) -> None:
        write_atomically(self.checkpoint, write_leader_epoch_checkpoint(self._epochs))


def truncate_entries_from_end(entries: list[EpochEntry], end_offset: int) -> bool:
    """LEPOCH-6 on a list of entries in place: the entries starting at or after
    ``end_offset`` go; returns whether any did (``klogspec recover`` plans with it too)."""
    if end_offset < 0 or not entries or entries[-1].start_offset < end_offset:
        return False
    while entries and entries[-1].start_offset >= end_offset:
        entries.pop()
    return True


def truncate_entries_from_start(entries: list[EpochEntry], start_offset: int) -> bool:
    """LEPOCH-7 on a list of entries in place: the entries starting at or before
    ``start_offset`` go and the last of them comes back starting at ``start_offset``;
    returns whether any went."""
    removed = None
    while entries and entries[0].start_offset <= start_offset:
        removed = entries.pop(0)
    if removed is None:
        return False
    entries.insert(0, EpochEntry(removed.epoch, start_offset))
    return True
