"""What the offset and time indexes share: Kafka's AbstractIndex and LazyIndex (spec/behaviour/index.md).

An index file is an array of fixed-size entries with no header
[storage/.../log/AbstractIndex.java]. Kafka memory-maps it; the reference keeps the
entries' bytes in a ``bytearray``, decodes an entry only when a lookup reads it, and
mirrors every change with a positional write, which gives the same bytes on disk:

* a **new** file is extended at once to ``roundDown(max_index_size, entry_size)``
  zero bytes and holds 0 entries;
* an **existing** file holds ``floor(length / entry_size)`` entries, *zero-filled
  preallocated slots included* (quirk 3), so a trimmed reopened index is full
  (entries == max entries) until ``resize`` grows it; its slots are read on first use,
  so a ``reset`` (recovery's first step) never reads them;
* ``resize`` sets the file length (rounded down to whole entries) and keeps the
  entries; ``trim_to_valid_size`` resizes to exactly the entries; ``reset`` drops
  every entry and resizes to the maximum;
* dropping entries never rewrites bytes: stale entries stay in the file past the
  last valid one until a trim or a resize removes them, as with Kafka's mmap.

``LazyIndex`` defers opening (and so creating) the file to the first access, so a
freshly rolled, untouched segment has only its ``.log``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from ..constants import INT32_MAX
from ..errors import Category, InvalidArgumentError, KafkaLogError, raise_first
from ..formats.index_entries import (  # Kafka's search, kept with the index rules
    index_problems,
    largest_lower_bound_slot,
    smallest_upper_bound_slot,
)
from .storage import storage

__all__ = ["AbstractIndex", "LazyIndex", "largest_lower_bound_slot", "smallest_upper_bound_slot"]


def round_down_to_exact_multiple(number: int, factor: int) -> int:
    """roundDownToExactMultiple(67, 8) == 64."""
    return factor * (number // factor)


class AbstractIndex:
    """A file of ``ENTRY.size``-byte entries; subclasses say how an entry is coded."""

    ENTRY: struct.Struct  # the on-disk entry layout
    TIME: bool  # a time index: which rules of formats/index_entries.py its entries follow

    def __init__(self, file: str | Path, base_offset: int, max_index_size: int = -1) -> None:
        """Open ``file``, creating and preallocating it when missing (``max_index_size`` is
        needed then, and by ``reset``; Kafka passes -1 when opening an existing file)."""
        self.file = Path(file)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        newly_created = not storage().exists(self.file)
        self._channel = storage().open_channel(self.file)
        if newly_created and max_index_size < self.entry_size:
            # INDEX-3, INDEX-22: Kafka creates the file (AbstractIndex.java:90), then refuses
            # the size (99-101): a 0-byte file is left
            self._channel.close()
            raise InvalidArgumentError(f"invalid max index size: {max_index_size}")
        if newly_created:
            self._channel.truncate(round_down_to_exact_multiple(max_index_size, self.entry_size))
        self.length = self._channel.size()
        self.max_entries = self.length // self.entry_size
        # the entries' bytes, slot n at n * entry_size; None until an existing file's
        # slots are first needed (INDEX-5: all its whole slots, zero slots included)
        self._data: bytearray | None = bytearray() if newly_created else None
        self._unread_entries = self.max_entries

    def _slots(self) -> bytearray:
        """The entries' bytes, read from the file on first use."""
        if self._data is None:
            size = self._unread_entries * self.entry_size
            self._data = bytearray(self._channel.read_at(0, size) if size else b"")
        return self._data

    # --- entry decoding, per subclass ---
    def _decode(self, fields: tuple):
        raise NotImplementedError

    def _offset_at(self, slot: int) -> int:
        """One slot's offset: the key ``truncate_to`` searches by."""
        raise NotImplementedError

    def _fields_at(self, slot: int) -> tuple:
        """One slot's fields, decoded on demand (a search reads a handful of slots)."""
        return self.ENTRY.unpack_from(self._slots(), slot * self.ENTRY.size)

    def _last_fields(self) -> tuple:
        """The last entry's fields; callers have checked there is one."""
        slots = self._slots()
        return self.ENTRY.unpack_from(slots, len(slots) - self.ENTRY.size)

    def _entry_at(self, slot: int):
        return self._decode(self._fields_at(slot))

    def _slot_on_disk(self, slot: int):
        """One slot's entry, from memory once read, else from the file alone: a sanity check
        reads two slots, not a (sparse, 4 GiB) file."""
        if self._data is not None:
            return self._entry_at(slot)
        raw = self._channel.read_at(slot * self.ENTRY.size, self.ENTRY.size)
        return self._decode(self.ENTRY.unpack(raw))

    # --- sizes ---
    @property
    def entry_size(self) -> int:
        return self.ENTRY.size

    @property
    def entries(self) -> int:
        if self._data is None:
            return self._unread_entries
        return len(self._data) // self.ENTRY.size

    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def size_in_bytes(self) -> int:
        return self.entries * self.entry_size

    # --- relative offsets (INDEX-13: offset - baseOffset must fit an int32) ---
    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def relative_offset(self, offset: int) -> int:
        if not self.can_append_offset(offset):
            raise KafkaLogError(
                Category.OFFSET_OVERFLOW,
                f"integer overflow for offset {offset} (base offset {self.base_offset})",
                file=str(self.file),
                offset=offset,
            )
        return offset - self.base_offset

    # --- changing the entries ---
    def _append_entry(self, *fields: int) -> None:
        """Write an entry of these fields in the next slot; callers have checked fullness,
        order and the relative offset's range."""
        self.append_packed(self.ENTRY.pack(*fields))

    def append_packed(self, entries: bytes) -> None:
        """Write whole entries, already packed in ``ENTRY``'s layout, after the last one,
        in one write: the compiled recovery and append (reference_impl/kernels) pack them
        with the checks of ``append`` made (fullness, order, the relative offset)."""
        slots = self._slots()
        self._channel.write_at(entries, len(slots))
        slots += entries

    def _truncate_to_entries(self, entries: int) -> None:
        """Keep the first ``entries`` entries; the bytes after them stay as they are."""
        if self._data is None:  # unread slots stay unread (a reset reads none)
            self._unread_entries = min(self._unread_entries, entries)
        else:
            del self._data[entries * self.entry_size :]

    def truncate(self) -> None:
        """Remove every entry (the file keeps its length)."""
        self._truncate_to_entries(0)

    def truncate_to(self, offset: int) -> None:
        """INDEX-6: remove the entries with offset >= ``offset``, searched by their offsets.

        With ``slot`` the largest entry <= offset: none leaves 0 entries; an exact match
        leaves ``slot`` (the match goes too); otherwise ``slot + 1`` remain.
        """
        slot = largest_lower_bound_slot(self._offset_at, self.entries, offset, self.entry_size)
        if slot < 0:
            new_entries = 0
        elif self._offset_at(slot) == offset:
            new_entries = slot
        else:
            new_entries = slot + 1
        self._truncate_to_entries(new_entries)

    def sanity_check(self) -> None:
        """OffsetIndex/TimeIndex.sanityCheck: ``corrupt_index`` for the first problem of
        ``index_problems`` (OIDX-2, OIDX-3; TIDX-5 to TIDX-7), on the two slots it reads."""
        where = {"entries": self.entries, "file": str(self.file)}
        slot = self._slot_on_disk
        raise_first(index_problems(self.length, slot, self.base_offset, time=self.TIME, **where))

    def resize(self, new_size: int) -> bool:
        """Set the file length to ``roundDown(new_size, entry_size)``, keeping the entries.

        Returns False, touching nothing, when the length is already that.
        """
        rounded = round_down_to_exact_multiple(new_size, self.entry_size)
        if self.length == rounded:
            return False
        if rounded < self.size_in_bytes():
            # Kafka's mmap.position(position) throws here (IllegalArgumentException)
            raise InvalidArgumentError(
                f"cannot resize {self.file} to {rounded} bytes below its {self.entries} entries"
            )
        self._channel.truncate(rounded)
        self.length = rounded
        self.max_entries = rounded // self.entry_size
        return True

    def trim_to_valid_size(self) -> None:
        self.resize(self.size_in_bytes())

    def reset(self) -> None:
        self.truncate()
        self.resize(self.max_index_size)

    # --- the file ---
    def read_file(self) -> bytes:
        return self._channel.read_at(0, self.length)

    def flush(self) -> None:
        self._channel.force()

    def close(self) -> None:
        self.trim_to_valid_size()
        self.close_handler()

    def close_handler(self) -> None:
        self._channel.close()

    def rename_to(self, path: str | Path) -> None:
        try:
            storage().replace(self.file, Path(path))
        finally:
            self.file = self._channel.file = Path(path)

    def delete_if_exists(self) -> bool:
        self.close_handler()
        return storage().unlink(self.file, missing_ok=True)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(file={self.file}, entries={self.entries}, "
            f"max_entries={self.max_entries})"
        )


IndexT = TypeVar("IndexT", bound=AbstractIndex)


class LazyIndex(Generic[IndexT]):
    """Kafka's LazyIndex: the index file is opened (created if missing) on first ``get()``.

    Until then renames move the file only if it exists, and close does nothing, so an
    untouched segment never gains index files.
    """

    def __init__(self, file: str | Path, load: Callable[[Path], IndexT]) -> None:
        self._file = Path(file)
        self._load = load
        self._index: IndexT | None = None

    @property
    def file(self) -> Path:
        return self._index.file if self._index is not None else self._file

    @property
    def is_loaded(self) -> bool:
        return self._index is not None

    def get(self) -> IndexT:
        if self._index is None:
            self._index = self._load(self._file)
        return self._index

    def rename_to(self, path: str | Path) -> None:
        if self._index is not None:
            self._index.rename_to(path)
            return
        try:
            storage().replace(self._file, Path(path))
        except FileNotFoundError:
            pass  # never created: there is nothing to rename
        finally:
            self._file = Path(path)

    def delete_if_exists(self) -> bool:
        if self._index is not None:
            return self._index.delete_if_exists()
        return storage().unlink(self._file, missing_ok=True)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def close_handler(self) -> None:
        if self._index is not None:
            self._index.close_handler()
