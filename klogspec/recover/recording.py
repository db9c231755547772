"""A storage that records the writes instead of making them: the dry run of ``klogspec
recover`` (spec/behaviour/recovery.md §7, RECOV-13).

``RecordingStorage`` is a ``reference_impl.log.storage.Storage``: the real loader runs over
it (plan.py) and its reads go to the real files, opened read-only under the tools' rules
(klogspec/safe_files.py: regular files only, PART-8; no link out of the directory, PART-9;
a small file no larger than a checkpoint can be), while every write, truncation, creation,
rename and deletion goes to an overlay in memory. A file of the overlay is a ``_File``:
the real file it started as (if any), its length, and the extents written since, so a
preallocated 10 MiB index is a number and a truncated ``.log`` is a shorter view of the
real one, never a copy. Nothing in the partition directory or its log directory is
created, changed or locked: the dry run works on a read-only copy.

``view(path)`` reads a file as the load left it and ``created`` lists what it made, for
the plan; the loader's observer says why (load_events.py).
"""

from __future__ import annotations

import bisect
import errno
import os
from pathlib import Path

from reference_impl.log.storage import FileChannel, Storage

from ..safe_files import open_regular, read_regular, resolve


class _File:
    """A file of the overlay: ``[0, base)`` of ``source`` (the real file, read-only) then
    zeros, up to ``length``, under the ``extents`` written since (sorted, disjoint)."""

    def __init__(self, source: Path | None, within: Path, length: int = 0) -> None:
        self.source, self.within = source, within
        self.length = self.base = length
        self.extents: list[tuple[int, bytearray]] = []
        self.mtime_ns: int | None = None
        self.changed = False  # written or resized since the load found it
        self._handle = None

    def read(self, position: int, size: int) -> bytes:
        end = min(position + size, self.length)
        if end <= position:
            return b""
        data = self._read_source(position, min(end, self.base))
        if len(data) < end - position:
            data += bytes(end - position - len(data))  # past the source: zeros
        over = [(s, d) for s, d in self.extents if s < end and s + len(d) > position]
        if not over:
            return data  # the usual read of a .log: the real bytes, one copy
        out = bytearray(data)
        for start, written in over:
            lo, hi = max(start, position), min(start + len(written), end)
            out[lo - position : hi - position] = written[lo - start : hi - start]
        return bytes(out)

    def _read_source(self, position: int, end: int) -> bytes:
        if end <= position:
            return b""
        if self._handle is None:
            self._handle = open_regular(self.source, self.within)
        return os.pread(self._handle.fileno(), end - position, position)

    def write(self, data, position: int) -> int:
        """Write into the extent ``data`` starts in or right after, in place, when it stays
        clear of the next one (appends, rewrites); else merge the extents it touches."""
        end, self.changed = position + len(data), True
        self.length = max(self.length, end)
        at = bisect.bisect_right(self.extents, position, key=lambda e: e[0]) - 1
        if at >= 0:
            start, old = self.extents[at]
            following = self.extents[at + 1][0] if at + 1 < len(self.extents) else None
            if position <= start + len(old) and (following is None or end < following):
                old[position - start : end - start] = data
                return len(data)
        self._merge(bytearray(data), position, end)
        return len(data)

    def _merge(self, merged: bytearray, position: int, end: int) -> None:
        kept = []
        for start, old in self.extents:
            if start + len(old) < position or start > end:
                kept.append((start, old))
                continue
            if start < position:
                merged[:0] = old[: position - start]
            if start + len(old) > end:
                merged += old[end - start :]
            position, end = min(position, start), max(end, start + len(old))
        bisect.insort(kept, (position, merged), key=lambda e: e[0])
        self.extents = kept

    def truncate(self, size: int) -> None:
        """Set the length: bytes past ``size`` go; growing adds zeros."""
        self.base, self.changed = min(self.base, size), True
        cut = []
        for start, data in self.extents:
            if start < size:
                cut.append((start, data[: size - start]))
        self.extents = cut
        self.length = size

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class RecordingChannel(FileChannel):
    """A FileChannel over a ``_File`` of the overlay."""

    def __init__(self, file: Path, content: _File) -> None:
        self.file, self.content, self._open = file, content, True

    @property
    def closed(self) -> bool:
        return not self._open

    def read_at(self, position: int, size: int) -> bytes:
        return self.content.read(position, size)

    def write_at(self, data, position: int) -> int:
        return self.content.write(data, position)

    def truncate(self, size: int) -> None:
        self.content.truncate(size)

    def size(self) -> int:
        return self.content.length

    def force(self) -> None:
        pass  # nothing reaches a disk

    def set_last_modified(self, ns: int) -> None:
        self.content.mtime_ns = ns

    def close(self) -> None:
        self._open = False


class RecordingStorage(Storage):
    """Real files read, writes recorded in memory (see the module docstring)."""

    def __init__(self) -> None:
        # path -> its file in the overlay, or None once deleted or renamed away
        self._names: dict[Path, _File | None] = {}
        self.created: list[Path] = []  # names the load made that were not there, in order

    # --- the overlay ---
    def _lookup(self, path: Path) -> _File | None:
        path = Path(path)
        if path not in self._names:
            self._names[path] = self._real(path)
        return self._names[path]

    def _real(self, path: Path) -> _File | None:
        if not os.path.lexists(path) or os.path.isdir(path):
            return None
        target = resolve(path, path.parent)  # PART-8, PART-9: raised, not read through
        return _File(target, path.parent, os.stat(target).st_size)

    def _create(self, path: Path, content: _File) -> _File:
        path = Path(path)
        if self._lookup(path) is None and path not in self.created:
            self.created.append(path)
        self._names[path] = content
        return content

    def _existing(self, path: Path) -> _File:
        """``path``'s file in the overlay, or the OS's error for a name that is not there."""
        content = self._lookup(path)
        if content is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
        return content

    def view(self, path: Path) -> _File | None:
        """``path`` as the load left it (None: not there)."""
        return self._lookup(path)

    def touched(self, path: Path) -> bool:
        """Whether the load created, changed, renamed or deleted ``path``'s name."""
        content = self._names.get(Path(path))
        return Path(path) in self._names and (
            content is None or content.source != Path(path) or content.changed
        )

    def close(self) -> None:
        for content in self._names.values():
            if content is not None:
                content.close()

    # --- Storage ---
    def open_channel(self, path: Path) -> RecordingChannel:
        content = self._lookup(path)
        if content is None:
            content = self._create(path, _File(None, Path(path).parent))
        return RecordingChannel(Path(path), content)

    def exists(self, path: Path) -> bool:
        if Path(path) in self._names:
            return self._names[Path(path)] is not None
        return os.path.exists(path)

    def touch(self, path: Path) -> None:
        if not self.exists(path):
            self._create(path, _File(None, Path(path).parent))

    def files(self, dir: Path) -> list[Path]:
        dir = Path(dir)
        names = {p for p in dir.iterdir() if p.is_file()}
        names |= {p for p in self._names if p.parent == dir}
        return sorted(p for p in names if self.exists(p) and not os.path.isdir(p))

    def replace(self, source: Path, target: Path) -> None:
        content = self._existing(source)
        self._names[Path(source)] = None
        self._create(target, content)

    rename = replace

    def unlink(self, path: Path, missing_ok: bool = False) -> bool:
        if missing_ok and self._lookup(path) is None:
            return False
        self._existing(path)
        self._names[Path(path)] = None
        return True

    def last_modified_ns(self, path: Path) -> int:
        content = self._existing(path)
        if content.mtime_ns is not None or content.source is None:
            return content.mtime_ns or 0
        return os.stat(content.source).st_mtime_ns

    def set_last_modified(self, path: Path, ns: int) -> None:
        content = self._existing(path)
        content.mtime_ns = ns

    def read_file(self, path: Path) -> bytes:
        content = self._existing(path)
        if content.source is not None and not content.extents:
            # a checkpoint's size at most, never a FIFO (PART-8): a hostile 4 GiB one is refused
            return read_regular(content.source, content.within)[: content.length]
        return content.read(0, content.length)

    def write_file(self, path: Path, data: bytes, *, sync: bool) -> None:
        content = _File(None, Path(path).parent)
        content.write(data, 0)
        self._create(path, content)

    def sync_dir(self, path: Path) -> None:
        pass

    def make_dirs(self, path: Path) -> None:
        if not os.path.isdir(path):
            raise FileNotFoundError(
                errno.ENOENT, "No such directory (a dry run creates none)", str(path)
            )
