"""The plan of ``klogspec recover``: what a load after an unclean shutdown would change in a
partition directory, worked out without changing it (spec/behaviour/recovery.md §7).

``plan_recovery`` runs the loader itself, ``Log.open`` then ``close()`` as a real run does
(run.py), over a storage that records the writes instead of making them (recording.py),
with an observer (load_events.py) that turns each change the loader reports into an
``Action``: the file, the bytes and the offsets it affects, in the loader's order. What no
event reports is read from the recording afterwards: the leader epochs and the two offset
checkpoints the close writes. One loader serves the dry run and the real run, as LevelDB's
one log reader serves recovery, repair and dump with different reporters (issue 24).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from reference_impl.constants import INT32_MAX
from reference_impl.errors import Category, InvalidFileNameError, KafkaLogError
from reference_impl.formats.checkpoints import EpochEntry, read_leader_epoch_checkpoint
from reference_impl.formats.file_naming import (
    DELETE_DIR_SUFFIX,
    SWAP_FILE_SUFFIX,
    FileKind,
    classify,
    log_file_name,
    offset_index_file_name,
    parse_partition_dir_name,
    time_index_file_name,
)
from reference_impl.log.checkpoint_files import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    read_offsets_or_empty,
)
from reference_impl.log.config import LogConfig
from reference_impl.log.load_events import LoadObserver, Reason
from reference_impl.log.loader import LoadOptions
from reference_impl.log.storage import using
from reference_impl.log.unified_log import Log
from reference_impl.records import iter_file_batches

from ..index_files import DECODE, ENTRY_SIZE, entries_before_zero_tail
from ..safe_files import open_regular, read_regular
from .recording import RecordingChannel, RecordingStorage


class PlanError(Exception):
    """The directory cannot be recovered as it is (the loader would fail too)."""


@dataclass
class Action:
    """One change. ``file`` is a name inside the partition directory (or, for a checkpoint,
    the log directory); ``offsets`` is [first, end) of what a truncation or deletion
    removes, as the batch headers claim (None when no header frames)."""

    action: str  # delete, truncate, rename, rebuild, create, leader_epochs, checkpoint
    file: str
    reason: str
    position: int | None = None
    bytes: int | None = None
    error: str | None = None
    offsets: tuple[int, int] | None = None
    to: str | None = None
    changed: bool = True  # a rebuilt index: does it differ from the file's entries?
    before: object = None
    after: object = None

    def to_dict(self) -> dict:
        out = {"action": self.action, "file": self.file, "reason": self.reason}
        for key in ("position", "bytes", "error", "offsets", "to", "before", "after"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        if self.action == "rebuild":
            out["changed"] = self.changed
        return out


@dataclass
class RecoveryPlan:
    partition: Path
    recovery_point_checkpoint: int | None
    recovery_point: int
    log_start_offset: int = 0
    log_end_offset: int = 0
    actions: list[Action] = field(default_factory=list)
    scanned_bytes: int = 0  # of the .log files the load will read (RECOV-2)

    @property
    def changes(self) -> list[Action]:
        return [a for a in self.actions if a.changed]

    @property
    def log_bytes_removed(self) -> int:
        """Bytes of ``.log`` files cut or deleted: data, where index bytes are derived."""
        return sum(
            a.bytes or 0
            for a in self.actions
            if a.action in ("truncate", "delete") and classify(a.file).kind is FileKind.LOG
        )


def plan_recovery(
    dir: Path,
    config: LogConfig,
    *,
    recovery_point: int | None = None,
    index_sanity_check: bool = True,
    progress: Callable[[str, int], None] | None = None,
    absent: set[str] = frozenset(),
) -> RecoveryPlan:
    """What ``Log.open`` with ``LoadOptions(had_clean_shutdown=False, recovery_point,
    index_sanity_check)`` followed by ``close()`` would change in ``dir``, as if the files
    ``absent`` were not there. ``progress(file, size)`` is told of each ``.log`` read."""
    name = parse_partition_dir_name(dir.name)
    if dir.name.endswith(DELETE_DIR_SUFFIX):
        raise PlanError(f"{dir} is queued for deletion: it is not recovered (LOAD-23)")
    layer = RecordingStorage()
    try:
        with using(layer):
            return _Planner(dir, (name.topic, name.partition), layer, absent).run(
                config, recovery_point, index_sanity_check, progress or (lambda f, s: None)
            )
    finally:
        layer.close()


class _Planner(LoadObserver):
    """The loader's observer during a dry run: each event an ``Action`` (see the module)."""

    def __init__(self, dir: Path, key: tuple[str, int], layer: RecordingStorage, absent) -> None:
        super().__init__()
        self.dir, self.key, self.layer = dir, key, layer
        for file in sorted(absent):  # deleted first by a resumed run (run.py)
            layer.unlink(dir / file, missing_ok=True)
        self.checkpoint = self._offset(RECOVERY_POINT_CHECKPOINT)
        self.start_entry = self._offset(LOG_START_OFFSET_CHECKPOINT)
        self.epochs_before = self._read_epochs()
        self.recovered_files: set[str] = set()  # a second pass over a segment plans nothing
        self.untouched: dict[str, bool] = {}  # an index's name: the file on disk, as it was
        self.created_seen = 0  # how many of the layer's creations the plan has looked at
        self.current: str | None = None  # the .log being recovered

    def run(self, config, recovery_point, sanity_check, progress) -> RecoveryPlan:
        point = recovery_point if recovery_point is not None else self.checkpoint or 0
        self.plan = RecoveryPlan(self.dir, self.checkpoint, point)
        self.progress = progress
        self._check_segment_names()
        options = LoadOptions(
            had_clean_shutdown=False,
            recovery_point=point,
            index_sanity_check=sanity_check,
            observer=self,
        )
        try:
            log = Log.open(self.dir, replace(config, file_delete_delay_ms=0), load=options)
            self.plan.log_start_offset = log.log_start_offset
            self.plan.log_end_offset = log.log_end_offset
            log.close()
        except KafkaLogError as exc:
            raise PlanError(self._load_failure(exc)) from exc
        self._creations()
        self._finish()
        return self.plan

    # --- reading, before and after ---
    def _offset(self, checkpoint: str) -> int | None:
        """This partition's entry of a log directory checkpoint, as the load reads it."""
        return read_offsets_or_empty(self.dir.parent / checkpoint).get(self.key)

    def _read_epochs(self) -> list[EpochEntry]:
        path = self.dir / LEADER_EPOCH_CHECKPOINT
        if not self.layer.exists(path) or not path.is_file():
            return []
        try:  # a regular file of checkpoint size only: never a FIFO, a device or 4 GiB (PART-8)
            return read_leader_epoch_checkpoint(read_regular(path, self.dir), file=str(path))
        except (KafkaLogError, OSError) as exc:
            raise PlanError(f"cannot read {path}: {exc}")

    def _check_segment_names(self) -> None:
        """A ``.log`` named for a base offset but not as the loader names it (``0.log``): the
        loader would open (and create) the canonical name instead."""
        for path in self.layer.files(self.dir):
            info = classify(path.name)
            if info.marker is not None or info.kind is not FileKind.LOG:
                continue
            expected = info.base_offset is not None and log_file_name(info.base_offset)
            if expected and path.name != expected:
                raise PlanError(f"{path.name}: the loader would open {expected} instead")

    def _load_failure(self, exc: KafkaLogError) -> str:
        """The rule a failed load met, in the plan's words."""
        file = self.current
        if isinstance(exc, InvalidFileNameError) and exc.file is not None:
            return f"{Path(exc.file).name} has no base offset in its name (LOAD-11)"
        if exc.category is Category.INVALID_OFFSET and file is not None:
            return f"{file}: offsets that go back while loading (LOAD-13)"
        if exc.category is Category.INVALID_ARGUMENT and exc.file is not None:
            size = self._size(Path(exc.file))
            if exc.file.endswith(".log") and size is not None and size > INT32_MAX:
                return (
                    f"{Path(exc.file).name} is {size} bytes, larger than the {INT32_MAX} a "
                    "segment can be (its positions are Java ints): a broker's load fails on it too"
                )
            if file is not None:
                return f"{file}: recovery would meet index full"
        return str(exc)

    def _size(self, file: Path) -> int | None:
        content = self.layer.view(file)
        return None if content is None else content.length

    # --- the loader's events ---
    def _add(self, action: str, file: Path | str, reason: Reason | str, **fields) -> None:
        self._creations()
        self.plan.actions.append(Action(action, Path(file).name, str(reason), **fields))

    def _creations(self) -> None:
        """Files the load made that no event names: a missing leader-epoch-checkpoint (the
        cache creates it) and a ``.swap`` segment's offset index (opened to find its end)."""
        for path in self.layer.created[self.created_seen :]:
            if path.parent != self.dir:
                continue
            if path.name == LEADER_EPOCH_CHECKPOINT:
                self._note("create", path, "missing_leader_epoch_checkpoint")
            elif path.name.endswith(SWAP_FILE_SUFFIX) and classify(path.name).kind in (
                FileKind.OFFSET_INDEX,
            ):
                self._note("create", path, Reason.SWAP)
        self.created_seen = len(self.layer.created)

    def _note(self, action: str, file: Path, reason: Reason | str) -> None:
        self.plan.actions.append(Action(action, file.name, str(reason)))

    def deleting(self, file: Path, reason: Reason) -> None:
        if reason is Reason.OFFSET_OVERFLOW:
            raise PlanError(f"{self.current or file.name}: recovery would meet overflow")
        size = self._size(file)
        self._add("delete", file, reason, bytes=size, offsets=self._claimed(file, 0, size))

    def truncating(self, file, position, size, reason, error) -> None:
        offsets = self._claimed(file, position, position + size)
        self._add("truncate", file, reason, position=position, bytes=size, error=error,
                  offsets=offsets)  # fmt: skip

    def renamed(self, file: Path, to: Path, reason: Reason) -> None:
        self._add("rename", file, reason, to=to.name)

    def created(self, file: Path, reason: Reason) -> None:
        if reason is Reason.OFFSET_OVERFLOW:
            raise PlanError(f"{self.current or file.name}: recovery would meet overflow")
        self._add("create", file, reason)

    def recovering(self, file: Path, reason: Reason) -> None:
        self.current = file.name
        if file.name in self.recovered_files:
            return
        size = self._size(file) or 0
        self.plan.scanned_bytes += size
        self.progress(file.name, size)
        base = classify(file.name).base_offset
        for name in (offset_index_file_name(base), time_index_file_name(base)):
            self.untouched[name] = not self.layer.touched(self.dir / name)

    def recovered(self, file: Path, reason: Reason) -> None:
        self.current = None
        if file.name in self.recovered_files:
            return  # recovered while loading (LOAD-13, LOAD-15, LOAD-16): nothing new
        self.recovered_files.add(file.name)
        base = classify(file.name).base_offset
        for name, time in (
            (offset_index_file_name(base), False),
            (time_index_file_name(base), True),
        ):
            old = self._entries_on_disk(name, base, time) if self.untouched[name] else None
            self._add("rebuild", name, reason, changed=old != self._entries_now(name, base, time))

    # --- index entries, before and after ---
    def _entries_on_disk(self, name: str, base: int, time: bool) -> list | None:
        """An index file's entries as a reopened file counts them, trailing all-zero slots
        dropped: what a rebuild is compared with. None: unreadable, or not whole entries."""
        path = self.dir / name
        if not path.is_file():
            return None
        try:
            with open_regular(path, self.dir) as handle:
                if path.stat().st_size % ENTRY_SIZE[time]:
                    return None
                # windows, holes skipped (issue 20: a sparse 4 GiB .index took minutes)
                return entries_before_zero_tail(handle, base, time=time)
        except OSError:
            return None

    def _entries_now(self, name: str, base: int, time: bool) -> list:
        """A recovered index's entries: recovery trims it to them (RECOV-4)."""
        content = self.layer.view(self.dir / name)
        data = b"" if content is None else content.read(0, content.length)
        size = ENTRY_SIZE[time]
        return [DECODE[time](data, i, base) for i in range(len(data) // size)]

    def _claimed(self, file: Path, position: int, end: int | None) -> tuple[int, int] | None:
        content = self.layer.view(file)
        if classify(file.name).kind is not FileKind.LOG or content is None:
            return None
        return claimed_offsets(RecordingChannel(file, content), position, end)

    # --- after the close: what the files say ---
    def _finish(self) -> None:
        after = self._epochs_after()
        if after != self.epochs_before:
            self._note_epochs(after)
        end, written = self._offset(RECOVERY_POINT_CHECKPOINT), None
        if end != self.checkpoint:  # the close flushes everything: the recovery point is the LEO
            self._add(
                "checkpoint",
                RECOVERY_POINT_CHECKPOINT,
                "flushed",
                before=self.checkpoint,
                after=end,
            )
        written = self._offset(LOG_START_OFFSET_CHECKPOINT)
        if written != self.start_entry:
            self._add(
                "checkpoint", LOG_START_OFFSET_CHECKPOINT, "log_start_offset",
                before=self.start_entry, after=written,
            )  # fmt: skip

    def _epochs_after(self) -> list[EpochEntry]:
        content = self.layer.view(self.dir / LEADER_EPOCH_CHECKPOINT)
        data = b"" if content is None else content.read(0, content.length)
        return read_leader_epoch_checkpoint(data, file=LEADER_EPOCH_CHECKPOINT)

    def _note_epochs(self, after: list[EpochEntry]) -> None:
        self._add(
            "leader_epochs", LEADER_EPOCH_CHECKPOINT, "truncated_to_log",
            before=[[e.epoch, e.start_offset] for e in self.epochs_before],
            after=[[e.epoch, e.start_offset] for e in after],
        )  # fmt: skip


def claimed_offsets(source, position: int = 0, end: int | None = None) -> tuple[int, int] | None:
    """[first, last + 1) of the offsets the batch headers from ``position`` claim in
    ``source`` (a path, or a storage channel), read with the framing rules only (no CRC):
    what a truncation or deletion takes away, as far as the bytes tell."""
    if not isinstance(source, Path):
        return _claimed(source, str(source.file), position, end)
    try:
        with open(source, "rb") as handle:
            return _claimed(handle, str(source), position, end)
    except OSError:
        return None


def _claimed(handle, file: str, position: int, end: int | None) -> tuple[int, int] | None:
    first = last = None
    try:
        for batch in iter_file_batches(handle, file=file, start=position, end=end):
            first = batch.base_offset if first is None else first
            last = batch.last_offset
    except (KafkaLogError, OSError):
        pass  # stop at the first entry that does not frame
    return None if first is None else (first, last + 1)
