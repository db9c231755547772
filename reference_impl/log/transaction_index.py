"""The transaction index, ``<base>.txnindex`` (spec/formats/transaction-index.md, spec/behaviour/index.md).

An append-only file of 34-byte AbortedTxn entries, one per aborted transaction
whose ABORT marker lies in the segment [storage/.../log/TransactionIndex.java].
Unlike the offset and time indexes it is not preallocated, and the file is
created only by the first append: most segments never have one.

The reader stops before a trailing partial entry; the writer appends at the end
of the file, where the "channel position" stands.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError
from ..formats.index_entries import (
    ABORTED_TXN_SIZE,
    AbortedTxn,
    decode_aborted_txn,
    encode_aborted_txn,
    sanity_check_txn_index,
)
from .storage import FileChannel, storage


@dataclass(frozen=True, slots=True)
class TxnIndexSearchResult:
    """What one segment contributed to a fetch: the overlapping aborted transactions, and
    whether the search is complete (no later segment can add any)."""

    aborted_transactions: list[AbortedTxn]
    is_complete: bool


class TransactionIndex:
    def __init__(self, start_offset: int, file: str | Path) -> None:
        self.start_offset = start_offset
        self.file = Path(file)
        self._handle: FileChannel | None = None
        self._position = 0  # the end of the entries written so far (the channel position)
        self._last_offset: int | None = None  # in memory only, not reloaded on open
        if storage().exists(self.file):
            self._open()

    def _open(self) -> FileChannel:
        self._handle = storage().open_channel(self.file)
        self._position = self._handle.size()
        return self._handle

    def _channel(self) -> FileChannel:
        return self._handle if self._handle is not None else self._open()

    def append(self, txn: AbortedTxn) -> None:
        """TXN-7: each entry's lastOffset must be strictly above the previous one appended
        (``invalid_argument`` otherwise). The first append creates the file."""
        if self._last_offset is not None and self._last_offset >= txn.last_offset:
            raise InvalidArgumentError(
                f"the last offset of appended transactions must increase sequentially, but "
                f"{txn.last_offset} is not greater than current last offset {self._last_offset}",
                file=str(self.file),
            )
        self._last_offset = txn.last_offset
        data = encode_aborted_txn(txn)
        self._channel().write_at(data, self._position)
        self._position += len(data)

    def _entries_with_positions(self) -> Iterator[tuple[AbortedTxn, int]]:
        if self._handle is None:
            return
        data = self._handle.read_at(0, self._position)
        for position in range(0, self._position - ABORTED_TXN_SIZE + 1, ABORTED_TXN_SIZE):
            yield decode_aborted_txn(data, position, file=str(self.file)), position

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return [txn for txn, _ in self._entries_with_positions()]

    def truncate_to(self, offset: int) -> None:
        """Cut the file at the first entry whose lastOffset >= ``offset``."""
        new_last_offset = None
        for txn, position in self._entries_with_positions():
            if txn.last_offset >= offset:
                self._handle.truncate(position)
                self._position = position
                self._last_offset = new_last_offset
                return
            new_last_offset = txn.last_offset

    def reset(self) -> None:
        """Remove every entry (length 0); the file stays if it existed."""
        if self._handle is not None:
            self._handle.truncate(0)
            self._position = 0
        self._last_offset = None

    def collect_aborted_txns(
        self, fetch_offset: int, upper_bound_offset: int
    ) -> TxnIndexSearchResult:
        """The entries overlapping [fetch_offset, upper_bound_offset): lastOffset >= fetch
        offset and firstOffset < upper bound. Complete once an entry's last stable offset
        reaches the upper bound."""
        found = []
        for txn, _ in self._entries_with_positions():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def sanity_check(self) -> None:
        """``corrupt_index`` when an entry's lastOffset is below the segment's base offset."""
        if self._handle is None:
            return
        data = self._handle.read_at(0, self._position)
        sanity_check_txn_index(data, self.start_offset, file=str(self.file))

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.force()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
        self._handle = None

    def rename_to(self, path: str | Path) -> None:
        try:
            if storage().exists(self.file):
                storage().replace(self.file, Path(path))
        finally:
            self.file = Path(path)
            if self._handle is not None:
                self._handle.file = self.file

    def delete_if_exists(self) -> bool:
        self.close()
        return storage().unlink(self.file, missing_ok=True)
