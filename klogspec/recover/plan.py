"""The plan of ``klogspec recover``: what a load after an unclean shutdown would change in a
partition directory, worked out without changing it (spec/behaviour/recovery.md §7).

``plan_recovery`` follows the loader's steps (loader.py, swap_files.py) on a picture of
the directory's files, scanning each ``.log`` the loader would recover with
scan.py. It gives the actions in the order the loader takes them, each with the
file, the bytes and the offsets it affects. ``--dry-run`` prints the plan; a real run
prints it too, after checking that the loader did exactly that (cli.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.constants import INT32_MAX, LONG_MAX, LONG_MIN
from reference_impl.errors import CorruptIndexError, KafkaLogError
from reference_impl.formats.checkpoints import EpochEntry, read_leader_epoch_checkpoint
from reference_impl.formats.file_naming import (
    DELETE_DIR_SUFFIX,
    LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    FileKind,
    classify,
    log_file_name,
    offset_from_file_name,
    offset_index_file_name,
    parse_partition_dir_name,
    time_index_file_name,
    txn_index_file_name,
)
from reference_impl.formats.index_entries import (
    OFFSET_INDEX_ENTRY_SIZE,
    TIME_INDEX_ENTRY_SIZE,
    sanity_check_txn_index,
)
from reference_impl.log.checkpoint_files import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    read_offsets_or_empty,
)
from reference_impl.log.config import LogConfig
from reference_impl.log.leader_epoch import truncate_entries_from_start
from reference_impl.log.load_events import Reason
from reference_impl.log.swap_files import TempFilePass, replaced_by_swaps

from ..index_files import sanity_check_file
from ..safe_files import read_regular
from .scan import (
    claimed_offsets,
    existing_index_entries,
    next_offset_by_framing,
    scan_recovery,
)

_INDEX_KINDS = (FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)


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


@dataclass
class _Segment:
    base: int
    size: int
    recovered: bool = False
    next_offset: int | None = None


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
    key = (name.topic, name.partition)
    checkpoint = read_offsets_or_empty(dir.parent / RECOVERY_POINT_CHECKPOINT).get(key)
    start_entry = read_offsets_or_empty(dir.parent / LOG_START_OFFSET_CHECKPOINT).get(key)
    point = recovery_point if recovery_point is not None else checkpoint or 0
    planner = _Planner(dir, config, point, checkpoint, start_entry, index_sanity_check)
    planner.files -= absent
    planner.progress = progress or (lambda file, size: None)
    return planner.run()


class _Planner:
    def __init__(self, dir, config, recovery_point, checkpoint, start_entry, sanity_check):
        self.dir, self.config = dir, config
        self.plan = RecoveryPlan(dir, checkpoint, recovery_point)
        self.start_entry, self.start_checkpoint = start_entry, start_entry or 0
        self.sanity_check = sanity_check
        self.files = {p.name for p in dir.iterdir() if p.is_file()}
        # files the plan creates, rebuilds or renames: their size then, not on disk now
        self.sizes: dict[str, int] = {}
        self.epochs = self._read_epochs()
        self.epochs_before = list(self.epochs)
        self.segments: dict[int, _Segment] = {}
        self.scanned: set[int] = set()  # segments recovered once: a second pass cuts nothing

    def run(self) -> RecoveryPlan:
        swaps = self._temp_files()
        self._swaps(swaps)
        self._segment_files()
        end = self._recover_log()
        self._finish(end)
        return self.plan

    # --- bookkeeping ---
    def _add(self, action: str, file: str, reason: Reason | str, **fields) -> Action:
        entry = Action(action, file, str(reason), **fields)
        self.plan.actions.append(entry)
        return entry

    def _delete(self, file: str, reason: Reason, size: int | None = None) -> None:
        """``size``: what is left of a .log an earlier step of the plan cut."""
        path = self.dir / file
        size = self._size(file) if size is None else size
        offsets = claimed_offsets(path, 0, size) if classify(path).kind is FileKind.LOG else None
        self._add("delete", file, reason, bytes=size, offsets=offsets)
        self.files.discard(file)
        self.sizes.pop(file, None)

    def _size(self, file: str) -> int:
        """The size ``file`` has at this step of the plan: an index the plan created or
        rebuilt (a segment without its .index, LOAD-13) is not on disk yet."""
        if file in self.sizes:
            return self.sizes[file]
        return (self.dir / file).stat().st_size

    def _created(self, file: str, size: int) -> None:
        self.files.add(file)
        self.sizes[file] = size

    def _read_epochs(self) -> list[EpochEntry]:
        path = self.dir / LEADER_EPOCH_CHECKPOINT
        if LEADER_EPOCH_CHECKPOINT not in self.files:
            self._add("create", LEADER_EPOCH_CHECKPOINT, "missing_leader_epoch_checkpoint")
            return []
        try:  # a regular file of checkpoint size only: never a FIFO, a device or 4 GiB (PART-8)
            return read_leader_epoch_checkpoint(read_regular(path, self.dir), file=str(path))
        except (KafkaLogError, OSError) as exc:
            raise PlanError(f"cannot read {path}: {exc}")

    # --- LOAD-6 to LOAD-10 ---
    def _temp_files(self) -> list[str]:
        temp_files = TempFilePass(self.files)
        for name, reason in temp_files:
            self._delete(name, reason)
        return temp_files.swap_files

    def _swaps(self, swaps: list[str]) -> None:
        low, high = LONG_MAX, LONG_MIN
        for file in swaps:
            if file[: -len(SWAP_FILE_SUFFIX)].endswith(LOG_FILE_SUFFIX):
                base = offset_from_file_name(file)
                low = min(low, base)
                high = max(high, next_offset_by_framing(self.dir / file, base))
                index = offset_index_file_name(base, SWAP_FILE_SUFFIX)
                if index not in self.files:  # opening the swap segment's index creates it
                    self._add("create", index, Reason.SWAP)
                    # opened, so preallocated (INDEX-1)
                    entries = self.config.segment_index_bytes // OFFSET_INDEX_ENTRY_SIZE
                    self._created(index, entries * OFFSET_INDEX_ENTRY_SIZE)
        for file in list(replaced_by_swaps(sorted(self.files), low, high)):
            self._delete(file, Reason.REPLACED_BY_SWAP)
        for file in sorted(f for f in self.files if f.endswith(SWAP_FILE_SUFFIX)):
            target = file[: -len(SWAP_FILE_SUFFIX)]
            self._add("rename", file, Reason.SWAP, to=target)
            self.files.discard(file)
            self.files.add(target)
            self.sizes[target] = self._size(file)
            self.sizes.pop(file, None)

    # --- LOAD-11 to LOAD-16 ---
    def _segment_files(self) -> None:
        for file in sorted(self.files):
            info = classify(file)
            if info.marker is not None or info.kind not in (FileKind.LOG, *_INDEX_KINDS):
                continue
            if info.base_offset is None:
                raise PlanError(f"{file} has no base offset in its name (LOAD-11)")
            base = info.base_offset
            if info.kind is not FileKind.LOG:
                if log_file_name(base) not in self.files:
                    self._delete(file, Reason.ORPHAN_INDEX)
                continue
            if file != log_file_name(base):
                raise PlanError(f"{file}: the loader would open {log_file_name(base)} instead")
            self.segments[base] = segment = _Segment(base, (self.dir / file).stat().st_size)
            if segment.size > INT32_MAX:  # FileRecords' positions are ints: the open fails
                raise PlanError(
                    f"{file} is {segment.size} bytes, larger than the {INT32_MAX} a segment can "
                    "be (its positions are Java ints): a broker's load fails on it too"
                )
            reason = self._load_reason(base)
            if reason is not None and self._recover(segment, reason) < 0:
                raise PlanError(f"{file}: offsets that go back while loading (LOAD-13)")

    def _load_reason(self, base: int) -> Reason | None:
        index, time_index = offset_index_file_name(base), time_index_file_name(base)
        if index not in self.files:
            return Reason.MISSING_OFFSET_INDEX
        new_time_index = time_index not in self.files
        if new_time_index:
            self._add("create", time_index, Reason.MISSING_TIME_INDEX)
            self._created(time_index, 0)  # resized to 0 by the load's sanity check
        txn = txn_index_file_name(base)
        try:
            if txn in self.files:
                sanity_check_txn_index((self.dir / txn).read_bytes(), base)
        except CorruptIndexError:
            return Reason.CORRUPT_TXN_INDEX
        if self.sanity_check:
            try:
                # two slots read, not the file (issue 20: a sparse 4 GiB .index took minutes)
                sanity_check_file(self.dir / index, base, time=False, within=self.dir)
                if not new_time_index:
                    sanity_check_file(self.dir / time_index, base, time=True, within=self.dir)
            except CorruptIndexError:
                return Reason.CORRUPT_INDEX
        return None

    # --- RECOV-1 to RECOV-10 ---
    def _recover(self, segment: _Segment, reason: Reason) -> int:
        """Plan LogSegment.recover of ``segment``; returns the bytes it cuts, -1 for offsets
        that go back (RECOV-6: the segment is emptied)."""
        file = log_file_name(segment.base)
        if segment.base in self.scanned:
            return 0  # recovered while loading (LOAD-13, LOAD-15, LOAD-16): nothing left to cut
        self.scanned.add(segment.base)
        path = self.dir / file
        latest = lambda: self.epochs[-1].epoch if self.epochs else None  # noqa: E731
        scan = scan_recovery(
            path, segment.base, self.config.index_interval_bytes,
            self.config.segment_index_bytes, latest,
        )  # fmt: skip
        self._scanned(file, segment.size)
        for epoch, offset in scan.epochs:
            self.epochs.append(EpochEntry(epoch, offset))
        if scan.outcome in ("overflow", "index_full"):
            raise PlanError(f"{file}: recovery would meet {scan.outcome.replace('_', ' ')}")
        if scan.outcome == "invalid_offset":
            first = claimed_offsets(path, 0, segment.size)
            self._add(
                "truncate", file, Reason.INVALID_OFFSET, position=0, bytes=segment.size,
                error="invalid_offset", offsets=first,
            )  # fmt: skip
            segment.size = 0
            segment.recovered = True
            return -1
        cut = scan.truncated
        if cut:
            self._add(
                "truncate", file, reason, position=scan.valid_bytes, bytes=cut, error=scan.failure,
                offsets=claimed_offsets(path, scan.valid_bytes, segment.size),
            )  # fmt: skip
            segment.size = scan.valid_bytes
        for name, entries, time in (
            (offset_index_file_name(segment.base), scan.offset_entries, False),
            (time_index_file_name(segment.base), scan.time_entries, True),
        ):
            old = (
                existing_index_entries(self.dir / name, segment.base, time)
                if name in self.files and name not in self.sizes
                else None
            )
            self._add("rebuild", name, reason, changed=old != entries)
            self.files.add(name)
            # a recovered index is trimmed to its entries (RECOV-4)
            entry_size = TIME_INDEX_ENTRY_SIZE if time else OFFSET_INDEX_ENTRY_SIZE
            self.sizes[name] = len(entries) * entry_size
        segment.recovered = True
        segment.next_offset = scan.next_offset
        return cut

    def _scanned(self, file: str, size: int) -> None:
        self.plan.scanned_bytes += size
        self.progress(file, size)

    def _recover_log(self) -> int:
        bases = sorted(self.segments)
        point = self.plan.recovery_point
        start = max((b for b in bases if b <= point), default=bases[0] if bases else None)
        unflushed = [b for b in bases if start is not None and b >= start]
        for i, base in enumerate(unflushed):
            if self._recover(self.segments[base], Reason.UNFLUSHED) != 0:
                for later in unflushed[i + 1 :]:
                    self._delete_segment(later, Reason.AFTER_TRUNCATION)
                break
        return self._log_end()

    def _log_end(self) -> int | None:
        if not self.segments:
            return None
        last = self.segments[max(self.segments)]
        if not last.recovered:
            return next_offset_by_framing(self.dir / log_file_name(last.base), last.base)
        return last.base if last.next_offset is None else last.next_offset

    def _delete_segment(self, base: int, reason: Reason) -> None:
        segment = self.segments.pop(base)
        for name in (
            log_file_name(base), offset_index_file_name(base),
            time_index_file_name(base), txn_index_file_name(base),
        ):  # fmt: skip
            if name in self.files:
                self._delete(name, reason, segment.size if name.endswith(LOG_FILE_SUFFIX) else None)

    # --- LOAD-18 to LOAD-22, and the close ---
    def _finish(self, end: int | None) -> None:
        start = self.start_checkpoint
        if end is not None and end < start:
            for base in sorted(self.segments):
                self._delete_segment(base, Reason.LOG_END_BELOW_LOG_START)
            self.epochs.clear()
            end = None
        if not self.segments:
            self._add("create", log_file_name(start), Reason.EMPTY)
            self.segments[start] = _Segment(start, 0)
            end = start
        self.epochs = [e for e in self.epochs if e.start_offset < end]
        truncate_entries_from_start(self.epochs, start)
        if self.epochs != self.epochs_before:
            before = [[e.epoch, e.start_offset] for e in self.epochs_before]
            after = [[e.epoch, e.start_offset] for e in self.epochs]
            self._add(
                "leader_epochs",
                LEADER_EPOCH_CHECKPOINT,
                "truncated_to_log",
                before=before,
                after=after,
            )
        first = min(self.segments)
        self.plan.log_start_offset = max(start, first)
        self.plan.log_end_offset = end
        checkpoint = self.plan.recovery_point_checkpoint
        if checkpoint != end:  # the close flushes everything: the recovery point becomes the LEO
            self._add(
                "checkpoint", RECOVERY_POINT_CHECKPOINT, "flushed", before=checkpoint, after=end
            )
        written = self.plan.log_start_offset if self.plan.log_start_offset > first else None
        if written != self.start_entry:
            self._add(
                "checkpoint", LOG_START_OFFSET_CHECKPOINT, "log_start_offset",
                before=self.start_entry, after=written,
            )  # fmt: skip
