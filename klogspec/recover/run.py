"""One partition's recovery: plan, journal, load, close (spec/behaviour/recovery.md §7).

``recover_partition`` plans the load (plan.py: the same loader over a storage that records
the writes); with ``dry_run``, or when the plan changes nothing, it stops there. Otherwise
it starts a journal (journal.py), keeps the producer snapshots, and loads the directory with the reference loader as after an unclean shutdown
(every segment from the recovery point on is checked, LOAD-16's index check on), every
removed byte kept in the quarantine folder before it goes (quarantine.py, unless
``discard``); then it closes the log (everything flushed, the recovery point checkpointed at
the log end offset), marks the journal complete and checks that the loader did what the
plan said (RECOV-16: with one loader, what this guards is the recording layer's fidelity).

A journal still ``in-progress`` is a run that was killed (RECOV-21). It is finished first,
as it was started (its recovery point, its folder): the segments it planned to delete after a
truncation (RECOV-5) go first, since a new load would keep them once the truncation is done
(their batches are intact), then the directory is loaded again. Every other change of the
load is one a new load makes again by itself.

The caller holds the log directory's lock (lock.py). The clean-shutdown marker of the log
directory is left as it is: other partitions of the directory may need their own recovery
(RECOV-18).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import LOG_FILE_SUFFIX
from reference_impl.log.clock import SystemClock
from reference_impl.log.config import LogConfig
from reference_impl.log.load_events import LoadEvent, Reason
from reference_impl.log.loader import LoadOptions
from reference_impl.log.unified_log import Log

from .failure import FailedRun, failed_run, index_sizes
from .journal import Journal, fsync_dir, step
from .loss import Loss, measure_loss
from .plan import Action, PlanError, RecoveryPlan, claimed_offsets, plan_recovery
from .quarantine import Quarantine, quarantine_folder, quarantine_folders
from .safety import shown

EXIT_OK, EXIT_CHANGED, EXIT_FAILED = 0, 1, 2  # RECOV-17 (klogspec/cli.py's statuses)


@dataclass
class RecoverReport:
    partition: Path
    mode: str  # dry-run, recovered, nothing-to-do, failed, declined, resumed, would-resume
    plan: RecoveryPlan | None = None
    quarantine: Path | None = None
    error: str | None = None
    pending: list[Action] = field(default_factory=list)  # a resumed run's own deletions first
    resumed: RecoverReport | None = None  # the interrupted run this one finished first
    loss: Loss | None = None  # the records the plan removes (RECOV-24)
    failure: FailedRun | None = None  # what a failed load did and did not do (RECOV-25)

    @property
    def log_bytes_removed(self) -> int:
        """Bytes of ``.log`` files cut or deleted, a resumed run's own deletions included."""
        pending = sum(a.bytes or 0 for a in self.pending if a.file.endswith(LOG_FILE_SUFFIX))
        return pending + (self.plan.log_bytes_removed if self.plan is not None else 0)

    @property
    def status(self) -> int:
        if self.error is not None:
            return EXIT_FAILED
        changed = self.pending or (self.plan is not None and self.plan.changes)
        own = EXIT_CHANGED if changed or self.mode in ("resumed", "would-resume") else EXIT_OK
        return max(own, self.resumed.status if self.resumed is not None else EXIT_OK)

    def to_dict(self) -> dict:
        out = {"type": "partition", "partition": shown(self.partition), "mode": self.mode}
        if self.resumed is not None:
            out["resumed"] = self.resumed.to_dict()
        if self.pending:
            out["pending"] = [a.to_dict() for a in self.pending]
        if self.plan is not None:
            plan = self.plan
            out.update(
                recoveryPointCheckpoint=plan.recovery_point_checkpoint,
                recoverFrom=plan.recovery_point,
                logStartOffset=plan.log_start_offset,
                logEndOffset=plan.log_end_offset,
                logBytesRemoved=self.log_bytes_removed,
                actions=[a.to_dict() for a in plan.actions],
            )
        if self.loss is not None and self.loss.ranges:
            out["loss"] = self.loss.to_dict()
        if self.failure is not None:
            out["failure"] = self.failure.to_dict()
        out["quarantine"] = None if self.quarantine is None else shown(self.quarantine)
        if self.error is not None:
            out["error"] = self.error
        out["exitStatus"] = self.status
        return out


@dataclass
class Progress:
    """Where a run reports the bytes it reads: ``scanned(file, size)`` as the plan reads a
    segment, ``loaded(file)`` as the loader recovers one, ``expect(size)`` before a load,
    ``done()`` at the end."""

    scanned: Callable[[str, int], None] = lambda file, size: None
    loaded: Callable[[Path], None] = lambda file: None
    expect: Callable[[int], None] = lambda size: None
    done: Callable[[], None] = lambda: None


_NO_PROGRESS = Progress()
Approve = Callable[[Path, Loss], str | None]  # None: go on; else why the change was refused


def recover_partition(
    dir: Path,
    config: LogConfig,
    *,
    from_offset: int | None = None,
    dry_run: bool = False,
    discard: bool = False,
    progress: Progress = _NO_PROGRESS,
    approve: Approve | None = None,
) -> RecoverReport:
    """Finish an interrupted run of ``dir`` if there is one, then plan and (unless ``dry_run``
    or nothing to do) load, quarantine and close ``dir``. A plan that removes records is
    first passed to ``approve`` (RECOV-24), when given: a refusal changes nothing."""
    try:
        return _recover(dir, config, from_offset, dry_run, discard, progress, approve)
    finally:
        progress.done()


def _recover(dir, config, from_offset, dry_run, discard, progress, approve) -> RecoverReport:
    resumed = None
    try:
        interrupted = unfinished_journals(dir)
    except OSError as exc:
        return RecoverReport(dir, "failed", error=f"cannot read the quarantine folder: {exc}")
    if interrupted:
        if dry_run:
            return _would_resume(dir, config, interrupted[0], progress)
        for journal in interrupted:
            resumed = _resume(dir, config, journal, progress, discard)
            if resumed.error is not None:
                return resumed
    try:
        plan = plan_recovery(dir, config, recovery_point=from_offset, progress=progress.scanned)
        loss = measure_loss(dir, plan)
    except (PlanError, KafkaLogError, OSError) as exc:
        return RecoverReport(dir, "failed", error=str(exc), resumed=resumed)
    if dry_run or not plan.changes:
        mode = "dry-run" if dry_run else "nothing-to-do"
        return RecoverReport(dir, mode, plan, resumed=resumed, loss=loss)
    refused = approve(dir, loss) if approve is not None and loss.records else None
    if refused is not None:
        return RecoverReport(dir, "declined", plan, error=refused, resumed=resumed, loss=loss)
    folder = quarantine_folder(dir)
    try:
        journal = Journal.start(
            folder, dir, recoverFrom=plan.recovery_point, planned=_intent(plan),
            **({"discard": True} if discard else {}),
        )  # fmt: skip
    except OSError as exc:
        error = f"cannot start the journal in {shown(folder)}: {_why(exc)}; nothing was changed"
        return RecoverReport(dir, "failed", plan, error=error, resumed=resumed, loss=loss)
    report = _load(dir, config, plan, Quarantine(dir, journal, discard=discard), progress)
    report.resumed, report.loss = resumed, loss
    return report


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def unfinished_journals(dir: Path) -> list[Journal]:
    """The journals of runs on ``dir`` that were killed (RECOV-21), oldest first."""
    journals = [Journal.read(folder) for folder in quarantine_folders(dir)]
    return [j for j in journals if j is not None and j.unfinished]


def _intent(plan: RecoveryPlan) -> list[dict]:
    """The truncations and deletions the plan makes: what a resumed run must finish."""
    keys = ("action", "file", "position", "bytes", "reason")
    return [
        {k: v for k, v in a.to_dict().items() if k in keys}
        for a in plan.actions
        if a.action in ("truncate", "delete")
    ]


def pending_deletions(dir: Path, journal: Journal) -> list[Action]:
    """The deletions after a truncation (RECOV-5) the journal planned and that did not happen:
    the file is there (a ``.log`` with the size planned, so it is the same one)."""
    pending = []
    for planned in journal.manifest.get("planned", []):
        if planned["action"] != "delete" or planned["reason"] != Reason.AFTER_TRUNCATION:
            continue
        path = dir / planned["file"]
        if not path.is_file():
            continue
        if planned["file"].endswith(LOG_FILE_SUFFIX) and path.stat().st_size != planned["bytes"]:
            continue
        offsets = claimed_offsets(path) if path.name.endswith(LOG_FILE_SUFFIX) else None
        pending.append(
            Action("delete", planned["file"], planned["reason"], bytes=path.stat().st_size,
                   offsets=offsets)
        )  # fmt: skip
    return pending


def _resume(dir, config, journal: Journal, progress: Progress, discard: bool) -> RecoverReport:
    """RECOV-21: finish the run ``journal`` records, in its folder, from its recovery point;
    ``discard``, asked now (after a full disk stopped it), copies no more cut ranges but still
    keeps the files it deletes as hard links, which need no space (RECOV-25)."""
    started_keeping = not journal.manifest.get("discard")
    quarantine = Quarantine(
        dir, journal, discard=discard or not started_keeping, links=discard and started_keeping
    )
    pending = pending_deletions(dir, journal)
    try:
        for action in pending:
            path = dir / action.file
            quarantine.deleting(path, Reason(action.reason))  # kept and journaled first
            os.unlink(path)
            fsync_dir(dir)
            step(f"deleted {action.file}")
        quarantine.events.clear()  # the load's own events are checked against its plan
        point = journal.manifest.get("recoverFrom", 0)
        plan = plan_recovery(dir, config, recovery_point=point, progress=progress.scanned)
    except (PlanError, KafkaLogError, OSError) as exc:
        error = f"cannot finish the recovery interrupted in {journal.folder}: {exc}"
        return RecoverReport(dir, "failed", quarantine=journal.folder, error=error)
    # loaded and closed even when the plan changes nothing: the kill may have come before the
    # close trimmed the indexes and wrote the checkpoints (FLUSH-7 to FLUSH-10)
    report = _load(dir, config, plan, quarantine, progress)
    if report.error is None:
        report.mode = "resumed"
    report.pending = pending
    return report


def _would_resume(dir, config, journal: Journal, progress: Progress) -> RecoverReport:
    """A dry run's view of an interrupted run: the deletions it would finish, then the plan of
    the load after them."""
    pending = pending_deletions(dir, journal)
    point = journal.manifest.get("recoverFrom", 0)
    try:
        plan = plan_recovery(
            dir, config, recovery_point=point, progress=progress.scanned,
            absent={a.file for a in pending},
        )  # fmt: skip
    except (PlanError, KafkaLogError, OSError) as exc:
        return RecoverReport(dir, "failed", quarantine=journal.folder, error=str(exc))
    return RecoverReport(dir, "would-resume", plan, journal.folder, pending=pending)


def _load(
    dir: Path, config: LogConfig, plan: RecoveryPlan, quarantine: Quarantine, progress: Progress
) -> RecoverReport:
    """Load ``dir`` as after an unclean shutdown from the plan's recovery point, observed by
    ``quarantine``, then close it and finish the journal."""
    options = LoadOptions(
        had_clean_shutdown=False,
        recovery_point=plan.recovery_point,
        index_sanity_check=True,
        observer=quarantine,
    )
    quarantine.segment_recovered = progress.loaded
    progress.expect(plan.scanned_bytes)
    before = index_sizes(dir)
    try:
        quarantine.remember_snapshots()
        log = Log.open(dir, replace(config, file_delete_delay_ms=0), SystemClock(), load=options)
        log.close()
        step("closed")
    except (KafkaLogError, OSError) as exc:
        # the journal stays in progress: the next run finishes it (RECOV-21)
        failure = failed_run(dir, plan, before, quarantine.cleanup)
        error = f"the load failed: {_why(exc) if isinstance(exc, OSError) else exc}"
        return RecoverReport(dir, "failed", plan, quarantine.folder, error, failure=failure)
    try:
        folder = quarantine.finish(
            recoverFrom=plan.recovery_point, logEndOffset=plan.log_end_offset
        )
    except OSError as exc:
        failure = failed_run(dir, plan, None, quarantine.cleanup)
        error = (
            f"the recovery was made, but its manifest could not be marked complete "
            f"({_why(exc)}): the next run completes it"
        )
        return RecoverReport(dir, "failed", plan, quarantine.folder, error, failure=failure)
    differences = plan_differences(plan, quarantine.events)
    if differences:
        error = "the loader did not follow the plan: " + "; ".join(differences)
        return RecoverReport(dir, "failed", plan, folder, error=error)
    return RecoverReport(dir, "recovered", plan, folder)


def plan_differences(plan: RecoveryPlan, events: list[LoadEvent]) -> list[str]:
    """RECOV-16: the truncations, deletions and renames the loader made, against the plan's."""
    planned = [_key(a.action, a.file, a.position, a.bytes, a.to) for a in plan.actions]
    done = [
        _key(e.action, e.file.name, e.position, e.size, None if e.to is None else e.to.name)
        for e in events
    ]
    planned = [k for k in planned if k is not None]
    done = [k for k in done if k is not None]
    return [f"planned {p}, done {d}" for p, d in zip(planned, done, strict=False) if p != d] + (
        [f"planned {len(planned)} changes, done {len(done)}"] if len(planned) != len(done) else []
    )


def _key(action, file, position, size, to):
    if action == "truncate":
        return ("truncate", file, position, size)
    if action in ("delete", "rename"):
        return (action, file, to)
    return None
