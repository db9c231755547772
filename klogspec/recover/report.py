"""The text report of ``klogspec recover`` (spec/behaviour/recovery.md §7): one block per partition,
the changes in the order the loader makes them, ranges ``[from, to)`` (``to`` exclusive), then
what the operator needs to know: the records removed (RECOV-24), what a failed run did and did
not do (RECOV-25), and that segments below the recovery point were not checked (RECOV-26).
"""

from __future__ import annotations

from rich.markup import escape

from .loss import Loss
from .plan import Action, RecoveryPlan
from .run import RecoverReport
from .safety import shown

_HEADS = {
    "dry-run": "[yellow]would change[/]",
    "recovered": "[yellow]recovered[/]",
    "nothing-to-do": "[green]nothing to do[/]",
    "failed": "[red]could not recover[/]",
    "declined": "[red]not recovered[/] (nothing changed)",
}


def print_report(console, report: RecoverReport) -> None:
    if report.resumed is not None:
        print_report(console, report.resumed)
    say = lambda text: console.print("  " + text)  # noqa: E731
    console.print(f"[bold]{escape(shown(report.partition))}[/]: {_head(report)}")
    if report.error is not None and report.mode in ("failed", "declined"):
        say(f"[red]error:[/] {escape(report.error)}")
    if report.failure is not None:
        _print_failure(say, report)
    else:
        _print_changes(say, report)
    if report.loss is not None and report.loss.records and report.mode != "failed":
        for line in loss_lines(report.loss, done=report.mode in ("recovered", "resumed")):
            say(escape(line))
    _print_after(say, report)


def _head(report: RecoverReport) -> str:
    if report.mode == "dry-run" and not report.status:
        return "[green]nothing to do[/]"
    if report.mode in ("resumed", "would-resume"):
        verb = "finished" if report.mode == "resumed" else "would finish"
        where = "" if report.quarantine is None else " in " + escape(shown(report.quarantine))
        return f"[yellow]{verb} the recovery interrupted{where}[/]"
    return _HEADS[report.mode]


def _print_changes(say, report: RecoverReport) -> None:
    for action in report.pending:
        say(escape(describe(action)))
    plan = report.plan
    if plan is None:
        return
    for action in plan.actions:
        if action.action == "rebuild" and not action.changed:
            continue
        say(escape(describe(action, plan)))
    if plan.changes or report.pending:
        say(
            f"log end offset {plan.log_end_offset}, log start offset {plan.log_start_offset}, "
            f"{_count(report.log_bytes_removed, 'byte')} of .log files "
            + ("removed" if report.mode in ("recovered", "resumed") else "to remove")
        )


def _print_failure(say, report: RecoverReport) -> None:
    """RECOV-25: what the failed run did, what it did not, what it cleaned up."""
    failure = report.failure
    done = [*report.pending, *failure.done]  # a resumed run's own deletions came first
    if done:
        say("done before the failure:")
        for action in done:
            say("  " + escape(describe(action, report.plan)))
    else:
        say("done before the failure: no .log byte was cut or deleted")
    if failure.not_done:
        say("not done:")
        for action in failure.not_done:
            say("  " + escape(describe(action, report.plan)))
    for note in failure.cleanup:
        say(escape(note))
    if failure.needed_bytes:
        say(
            f"the quarantine still needs {_count(failure.needed_bytes, 'byte')} for the cut "
            "ranges it keeps: free that much, or run again with --discard, which keeps no cut "
            "range (the files it deletes are still kept, as hard links)"
        )


def _print_after(say, report: RecoverReport) -> None:
    plan = report.plan
    if plan is not None and plan.recovery_point > 0 and report.mode not in ("failed", "declined"):
        say(f"[dim]{escape(unchecked_note(plan.recovery_point, shown(report.partition)))}[/]")
    if report.mode == "would-resume":
        say("[dim]a run without --dry-run finishes it, then recovers as asked[/]")
    elif report.mode == "failed" and report.quarantine is not None:
        say(
            f"the journal {escape(shown(report.quarantine))} stays in progress: the next run "
            "finishes this recovery first"
        )
    elif report.quarantine is not None:
        say(f"removed bytes kept in {escape(shown(report.quarantine))} (listed in manifest.json)")
    if report.error is not None and report.mode not in ("failed", "declined"):
        say(f"[red]error:[/] {escape(report.error)}")


def unchecked_note(recovery_point: int, partition: str) -> str:
    """RECOV-26: what neither this run nor a broker's start looks at, and what does."""
    return (
        f"segments before the one holding offset {recovery_point} (the recovery point) were not "
        "checked, and a broker's start does not check them either: damage there goes unnoticed "
        f"until a read meets it. `klogspec verify {partition}` finds it; `klogspec recover "
        f"--from-offset 0 {partition}` removes it (stating the loss first)"
    )


def loss_lines(loss: Loss, done: bool) -> list[str]:
    """RECOV-24: the intact records removed, per file, and the intact segments among them."""
    verb = "removed" if done else "removes"
    damaged = f" and {_count(loss.damaged_bytes, 'damaged byte')}" if loss.damaged_bytes else ""
    lines = [
        f"this recovery {verb} {_count(loss.records, 'intact record')}{damaged}, offsets "
        f"{_range(*loss.offsets)}, {_count(loss.bytes, 'byte')} of .log files:"
    ]
    for r in loss.ranges:
        where = (
            "the whole segment" if r.whole else f"bytes {_range(r.position, r.position + r.bytes)}"
        )
        offsets = "" if r.offsets is None else f", offsets {_range(*r.offsets)}"
        state = "every batch intact" if r.intact else _count(r.damaged_bytes, "damaged byte")
        lines.append(
            f"  {r.file}: {where}{offsets}: {_count(r.records, 'intact record')} ({state})"
        )
    intact = loss.intact_segments
    if intact:
        lines.append(
            f"{_count(len(intact), 'intact segment')} "
            f"{'is' if len(intact) == 1 else 'are'} deleted only because "
            f"{'it follows' if len(intact) == 1 else 'they follow'} the damage, as a broker "
            "does (RECOV-5)"
        )
    lines.append(
        "the quarantine keeps every removed byte; `klogspec salvage <quarantine folder> --out "
        "FILE` writes the intact records out for a client to produce again"
    )
    return lines


def describe(action: Action, plan: RecoveryPlan | None = None) -> str:
    """One line per change; ranges are [from, to), ``to`` exclusive, as in the manifest and
    in the names of the stored pieces. With the ``plan``, an index the load rebuilds and then
    deletes says so on both lines (issue 20)."""
    offsets = "" if action.offsets is None else f", offsets {_range(*action.offsets)}"
    if action.action == "truncate":
        end = action.position + action.bytes
        return (
            f"truncate {action.file}: bytes {_range(action.position, end)} "
            f"({_count(action.bytes, 'byte')}{offsets}; {action.error}, {action.reason})"
        )
    if action.action == "delete":
        rebuilt = " as rebuilt above" if _rebuilt_before(plan, action) else ""
        return (
            f"delete {action.file}: {_count(action.bytes, 'byte')}{rebuilt}{offsets} "
            f"({action.reason})"
        )
    if action.action == "rename":
        return f"rename {action.file} to {action.to} ({action.reason})"
    if action.action == "leader_epochs":
        return f"{action.file}: {_epochs(action.before)} -> {_epochs(action.after)}"
    if action.action == "checkpoint":
        return f"{action.file}: {_entry(action.before)} -> {_entry(action.after)}"
    later = ", then deleted below with its segment" if _deleted_after(plan, action) else ""
    return f"{action.action} {action.file} ({action.reason}){later}"


def _rebuilt_before(plan: RecoveryPlan | None, delete: Action) -> bool:
    earlier = _around(plan, delete)[0]
    return any(a.file == delete.file and a.action in ("rebuild", "create") for a in earlier)


def _deleted_after(plan: RecoveryPlan | None, made: Action) -> bool:
    later = _around(plan, made)[1]
    return any(a.file == made.file and a.action == "delete" for a in later)


def _around(plan: RecoveryPlan | None, action: Action) -> tuple[list[Action], list[Action]]:
    """The plan's actions before and after ``action`` (itself, not an equal one)."""
    actions = [] if plan is None else plan.actions
    at = next((i for i, a in enumerate(actions) if a is action), None)
    return ([], []) if at is None else (actions[:at], actions[at + 1 :])


def _range(start: int, end: int) -> str:
    return f"[{start}, {end})"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _entry(offset: int | None) -> str:
    return "no entry" if offset is None else str(offset)


def _epochs(entries: list) -> str:
    if not entries:
        return "no epochs"
    return ", ".join(f"epoch {epoch} from offset {start}" for epoch, start in entries)
