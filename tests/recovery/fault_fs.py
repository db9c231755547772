"""Fault injection by recording: every file-system write the reference makes, and the directory
as it stands after each one.

``WriteRecorder`` patches the ``os`` calls the reference (and ``klogspec recover``'s journal)
writes through (``pwrite``, ``write``, ``ftruncate``, ``replace``, ``rename``, ``link``,
``unlink``, creating ``open``, ``fsync``). After each it snapshots the log directory: snapshot *N* is exactly what a
process killed right after write *N* leaves on disk, so replaying a snapshot is a crash
at that write boundary. A write into a ``.log`` also yields **torn** states: the file as
it was plus the first *k* bytes of the write.

It also keeps a **durable image**, what a power failure could leave: a file's bytes as of
its last fsync; renames and deletions durable at once (Kafka fsyncs the directory after
creating segment files); a truncation durable at the next fsync of any file, as a
journalling file system commits metadata in order (so the trims of a clean close are on
disk once the clean-shutdown marker is).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

Snapshot = dict[str, bytes]  # path relative to the root -> content


@dataclass(frozen=True)
class TornWrite:
    """A write into a ``.log`` that a crash cut short: ``before`` plus ``data[:k]`` at
    ``position`` of ``file``."""

    index: int  # the write's number: its full effect is snapshot ``index``
    file: str
    position: int
    data: bytes
    before: Snapshot

    def state(self, k: int) -> Snapshot:
        files = dict(self.before)
        old = files.get(self.file, b"")
        new = old[: self.position].ljust(self.position, b"\0") + self.data[:k]
        files[self.file] = new + old[len(new) :]
        return files


@dataclass
class WriteRecorder:
    root: Path
    snapshots: list[Snapshot] = field(default_factory=list)
    durable_images: list[Snapshot] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)  # (call, file)
    torn: list[TornWrite] = field(default_factory=list)
    _durable: Snapshot = field(default_factory=dict)
    _cuts: dict[str, int] = field(default_factory=dict)  # truncations not yet committed
    _saved: dict = field(default_factory=dict)

    # --- the patched calls ---
    def __enter__(self) -> WriteRecorder:
        self.root = self.root.resolve()
        real = {name: getattr(os, name) for name in _PATCHED}
        self._saved = real

        def pwrite(fd, data, position):
            file = self._name(fd)
            before = self._snapshot() if file.endswith(".log") else None
            result = real["pwrite"](fd, data, position)
            self._wrote("pwrite", file)
            if before is not None and len(data) > 1:
                self.torn.append(
                    TornWrite(len(self.snapshots) - 1, file, position, bytes(data), before)
                )
            return result

        def write(fd, data):
            result = real["write"](fd, data)
            self._wrote("write", self._name(fd))
            return result

        def ftruncate(fd, length):
            result = real["ftruncate"](fd, length)
            file = self._name(fd)
            self._cuts[file] = min(length, self._cuts.get(file, length))
            self._wrote("ftruncate", file)
            return result

        def open_(path, flags, mode=0o777, *, dir_fd=None):
            new = bool(flags & os.O_CREAT) and not os.path.exists(path)
            fd = real["open"](path, flags, mode, dir_fd=dir_fd)
            if new:
                self._wrote("create", self._relative(path))
            return fd

        def rename(kind):
            def call(src, dst, *args, **kwargs):
                result = real[kind](src, dst, *args, **kwargs)
                source, target = self._relative(src), self._relative(dst)
                if source in self._durable:
                    self._durable[target] = self._durable.pop(source)
                else:
                    self._durable.pop(target, None)
                if source in self._cuts:
                    self._cuts[target] = self._cuts.pop(source)
                self._wrote(kind, target)
                return result

            return call

        def link(src, dst, *args, **kwargs):
            result = real["link"](src, dst, *args, **kwargs)
            self._wrote("link", self._relative(dst))
            return result

        def unlink(path, *args, **kwargs):
            result = real["unlink"](path, *args, **kwargs)
            self._durable.pop(self._relative(path), None)
            self._wrote("unlink", self._relative(path))
            return result

        def fsync(fd):
            result = real["fsync"](fd)
            for cut, length in self._cuts.items():
                if cut in self._durable:
                    self._durable[cut] = self._durable[cut][:length]
            self._cuts.clear()
            file = self._name(fd)
            path = self.root / file
            if path.is_file():
                self._durable[file] = path.read_bytes()
            self._wrote("fsync", file)
            return result

        patched = {
            "pwrite": pwrite, "write": write, "ftruncate": ftruncate, "open": open_,
            "replace": rename("replace"), "rename": rename("rename"), "unlink": unlink,
            "fsync": fsync, "link": link,
        }  # fmt: skip
        for name, function in patched.items():
            setattr(os, name, function)
        return self

    def __exit__(self, *exc_info) -> None:
        for name, function in self._saved.items():
            setattr(os, name, function)

    # --- bookkeeping ---
    def _relative(self, path) -> str:
        try:
            return str(Path(os.path.abspath(path)).relative_to(self.root))
        except ValueError:
            return str(path)

    def _name(self, fd: int) -> str:
        return self._relative(os.readlink(f"/proc/self/fd/{fd}"))

    def _snapshot(self) -> Snapshot:
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }

    def _wrote(self, call: str, file: str) -> None:
        if not file.startswith(str(self.root)) and not file.startswith("/"):
            snapshot = self._snapshot()
            if self.snapshots and snapshot == self.snapshots[-1]:
                return  # an fsync or a rename to itself: nothing a crash could tell apart
            self.writes.append((call, file))
            self.snapshots.append(snapshot)
            self.durable_images.append({name: self._durable.get(name, b"") for name in snapshot})

    @property
    def count(self) -> int:
        return len(self.snapshots)


_PATCHED = (
    "pwrite", "write", "ftruncate", "open", "replace", "rename", "unlink", "fsync", "link",
)  # fmt: skip


def materialize(snapshot: Snapshot, root: Path) -> None:
    """Make ``root`` hold exactly ``snapshot`` (directories included)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for name, data in snapshot.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
