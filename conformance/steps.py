"""One scenario on one testee, step by step (docs/conformance/scenarios.md: the steps;
docs/conformance/results.md: what each failure means).

``Run`` sends each step to the testee (``Driver``) or does it itself (clock, damage,
mtimes, file inspection), and owns the parts that judge what the testee did, each given
the run's ``RunState`` (run_state.py): the response checks (``checks``, responses.py), at
the end the segment invariants (index_invariants.py) and the reference's files
(``comparison``, file_comparison.py), then the epilogue (``epilogue``, epilogue.py).
"""

from __future__ import annotations

import base64
import errno
import os
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import parse_partition_dir_name

from . import check_rules, disk, file_checks, scratch
from .batches import build_all
from .damage import StepError, apply_damage, os_reason
from .diagnostics import (
    OP_KEYS,
    describe_damage,
    describe_step,
    names,
)
from .disk import epoch_entries
from .epilogue import Epilogue
from .file_comparison import FileComparison
from .file_names import segment_file
from .responses import ResponseChecks
from .run_state import RunState
from .scenarios import Scenario
from .transport import Driver

DEFAULT_MAX_BYTES = 1 << 20


class Run:
    """One scenario on one driver: ``run`` drives the steps; ``state`` is what the run
    knows, ``checks``, ``comparison`` and ``epilogue`` the parts that judge it."""

    def __init__(
        self,
        scenario: Scenario,
        driver: Driver,
        workdir: Path,
        golden: dict | None,
        features: set[str],
    ):
        self.state = RunState.start(scenario, driver, workdir, golden, features)
        self.checks = ResponseChecks(self.state)
        self.comparison = FileComparison(self.state)
        self.epilogue = Epilogue(self.state, self.checks, self.comparison)
        self.corrupt_files: dict[str, bytes] | None = None  # the files after the first damage
        self.final_files: dict[str, bytes] | None = None  # the files after the last step
        self.snapshots: dict[str, dict[str, bytes]] = {}  # a ``snapshot`` step's files, by name
        self.steps_closed = False  # the steps ended with a successful close
        self.steps_done = False  # every step ran (else the run stopped at state.step_index)

    # --- the run ---
    def run(self) -> None:
        state, scenario = self.state, self.state.scenario
        state.root.mkdir(parents=True, exist_ok=True)
        last_operation = None  # the last step that was not a files check
        if scenario.open:
            state.step_index, state.operation = -1, "open (the scenario's own)"
            self.do_open({}, {}, scenario.requirements)
            last_operation = "open"
        for i, step in enumerate(scenario.steps):
            state.step_index = i
            state.operation = "damage" if "damage" in step else describe_step(step)
            if "files" in step and last_operation:
                state.operation = f"{last_operation} then files"
            if not self.apply(step, lambda step=step: self.do_step(step)):
                return  # the later steps assume this one happened
            if "files" not in step and "snapshot" not in step:
                last_operation = state.operation
            if "crash" in step or "damage" in step:
                state.recovered = True
        self.steps_done = True
        state.step_index, state.operation = None, "the end of the scenario"
        if not self.apply({}, self.final_checks):
            return
        self.steps_closed = state.closed
        state.operation = "the epilogue (close, compare, reopen, read)"
        self.apply({}, self.epilogue.run)

    def apply(self, step: dict, action) -> bool:
        """Do one step (or the final checks). A step the harness cannot do on the testee's
        files (a file it did not write, a directory where a file should be, a file that
        does not read) fails the test with the step, the operation and the file; it never
        ends the run. False when the scenario cannot go on."""
        state = self.state
        reqs = state.step_reqs(step)
        try:
            action()
        except StepError as exc:
            state.fail("harness_step", str(exc), reqs, cause=exc.cause)
        except scratch.UnsafeFile as exc:
            state.fail("harness_step", state.unsafe(exc), reqs, cause=exc.cause)
        except OSError as exc:
            where = state.relative(exc.filename)
            state.fail(
                "harness_step",
                f"{where} {os_reason(exc)}" if where else os_reason(exc),
                reqs,
                cause=f"a file of the testee {os_reason(exc)}",
            )
        except KafkaLogError as exc:
            state.fail(
                "harness_step",
                f"a file of the testee does not decode: {exc}",
                reqs,
                cause=f"a file of the testee does not decode ({exc.category.value})",
            )
        else:
            return True
        return False

    def do_step(self, step: dict) -> None:
        """One step: the harness's own (``HARNESS_STEPS``, by the step's key, in that
        order), else an operation sent to the testee."""
        for key, handler in HARNESS_STEPS.items():
            if key in step:
                handler(self, step)
                return
        op = next(k for k in OP_KEYS if k in step)
        expect, reqs = step.get("expect") or {}, self.state.step_reqs(step)
        # ``may``: another answer a MAY rule allows (ResponseChecks.check_response_or_may)
        self.do_op(op, step[op] or {}, expect, reqs, step.get("may"))

    def do_clock(self, step: dict) -> None:
        """``clock``: set or advance the time the testee is told, its only clock (MODEL-5)."""
        state = self.state
        state.now = step["clock"].get("set", state.now + step["clock"].get("advance", 0))

    def do_damage(self, step: dict) -> None:
        """``damage``: change the testee's files as a crash or a disk would; the rules such
        damage can break are off from now on (``damaged``)."""
        self.state.damaged = True
        for damage in step["damage"]:
            self._damage(damage)
        if self.corrupt_files is None:
            self.corrupt_files = disk.snapshot(self.state.root, self.state.anchor)

    def do_set_mtime(self, step: dict) -> None:
        """``set_mtime``: a file's modification time, which a segment without timestamps
        counts as its largest timestamp (RET-9)."""
        state = self.state
        path = state.path(step["set_mtime"]["file"])
        what = scratch.status(path, state.anchor)
        if what is not None:
            reason = state.absent(path) if what == "absent" else f"is {what}, not a regular file"
            raise StepError(
                f"sets the modification time of {state.shown(path)}, but it {reason}",
                "set_mtime of a file the testee did not write"
                if what == "absent"
                else "set_mtime of a file that is not a regular file",
            )
        scratch.set_mtime(path, state.anchor, step["set_mtime"]["ms"] * 1_000_000)

    def do_snapshot(self, step: dict) -> None:
        """``snapshot``: remember every file now, for a later ``unchanged_since``."""
        self.snapshots[step["snapshot"]] = self.state.visible_files()

    def do_files(self, step: dict) -> None:
        """``files``: the directory against the step's expectations (file_checks.py)."""
        self._check_files(step, self.state.step_reqs(step))
        if "unchanged_since" in step["files"]:
            self._unchanged_since(step["files"]["unchanged_since"], self.state.step_reqs(step))

    def do_open_step(self, step: dict) -> None:
        self.do_open(step["open"] or {}, step.get("expect") or {}, self.state.step_reqs(step))

    def do_crash(self, step: dict) -> None:
        """``crash``: the testee loses everything not on disk; the next open is unclean and
        recovers (RECOV-1)."""
        state = self.state
        state.driver.crash(state.now)
        state.responses.append({"step": state.step_index, "op": "crash", "ok": True, "result": {}})
        state.log_open, state.crashed, state.closed = False, True, False

    def _damage(self, damage: dict) -> None:
        """One damage operation; a file it needs that the testee did not write fails the
        test, naming the operation and the file."""
        state = self.state
        try:
            apply_damage(state.root, state.pdir, damage, state.now, state.anchor)
        except scratch.UnsafeFile as exc:
            raise StepError(
                f"{describe_damage(damage)}, but {state.unsafe(exc)}", exc.cause
            ) from exc
        except OSError as exc:
            path = Path(os.fsdecode(exc.filename)) if exc.filename else None
            reason = state.absent(path) if path and exc.errno == errno.ENOENT else os_reason(exc)
            shown = f"{state.shown(path)} " if path else ""
            raise StepError(
                f"{describe_damage(damage)}, but {shown}{reason}",
                f"damage needs a file that {'the testee did not write' if exc.errno == errno.ENOENT else os_reason(exc)}",
            ) from exc

    def _check_files(self, step: dict, reqs: list[str]) -> None:
        """A ``files`` step: each failed expectation tagged with the rules it checks and
        the SHOULD choices it rests on (check_rules.py)."""
        state = self.state
        parsed = parse_partition_dir_name(state.scenario.partition)
        problems = file_checks.check_files(
            step["files"], state.root, state.scenario.partition, parsed.topic, parsed.partition,
            state.features,
        )  # fmt: skip
        if not problems:
            return
        live = [segment_file(n) for n in scratch.regular_names(state.pdir, state.anchor)]
        active = max((b for b, k, m in live if k == "log" and not m), default=None)
        for problem in problems:
            base, kind, marker = segment_file(problem.file or "")
            path = state.path(problem.file) if problem.file else None
            choice = check_rules.files_check_choice(
                problem.key, kind, marker,
                recovered=state.recovered,
                trimmed=state.closed or (base is not None and base != active),
                created_with_log=base == 0 and "MODEL-2" in state.scenario.requirements,
                empty=path is not None and state.read(path) == b"",
                name=problem.file or "",
                log_renamed=(base, "log", ".deleted") in live,
                closed_active=state.closed and base is not None and base == active,
            )  # fmt: skip
            subject = f".{kind}{marker}" if kind else (problem.file or "").rpartition("/")[2]
            rules, cause = reqs, f"files: {problem.key} {subject}".rstrip()
            if problem.key == "text" and subject == "leader-epoch-checkpoint":
                want = step["files"]["text"][subject].encode()
                mine = state.read(path) if path is not None else None
                if mine is not None and epoch_entries(mine) == epoch_entries(want) is not None:
                    rules, cause = check_rules.EPOCH_FORMAT, f"{subject}: format (the same entries)"
            state.fail("files", problem.message, rules, cause=cause, choice=choice)

    def _unchanged_since(self, name: str, reqs: list[str]) -> None:
        def kept(files: dict[str, bytes]) -> dict[str, bytes]:
            return {k: v for k, v in files.items() if not k.endswith(".deleted")}

        before, now = kept(self.snapshots.get(name, {})), kept(self.state.visible_files())
        changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        if changed:
            self.state.fail(
                "files",
                f"changed since snapshot {name}: {names(changed)}",
                reqs,
                cause="files: changed where nothing may change",
            )

    def do_open(self, args: dict, expect: dict, reqs: list[str]) -> None:
        state = self.state
        config = (
            dict(args.get("config") or {})
            if args.get("replace_config")
            else {**state.scenario.config, **(args.get("config") or {})}
        )
        wire = {"dir": str(state.pdir), "config": config}
        topic_id = args.get("topic_id", state.scenario.topic_id)
        if topic_id is not None:
            wire["topic_id"] = topic_id
        response = self.checks.check_response("open", wire, expect, reqs)
        if response.ok:
            state.config = config
            state.open_wire = wire
            state.log_open, state.closed, state.crashed = True, False, False

    def do_op(self, op: str, args: dict, expect: dict, reqs: list[str], may: dict | None) -> None:
        """An operation sent to the testee; ``may``: another answer a MAY rule allows."""
        if op == "append":
            self._append(args, expect, reqs, may)
            return
        if op == "read":
            wire = {
                "start_offset": args["start_offset"],
                "max_bytes": args.get("max_bytes", DEFAULT_MAX_BYTES),
                "max_offset": args.get("max_offset"),
                "min_one_message": args.get("min_one_message", False),
            }
            if args.get("isolation", "high_watermark") != "high_watermark":
                wire["isolation"] = args["isolation"]  # sent only when needed
            args = wire
        response = self.checks.check_response_or_may(op, args, expect, may, reqs)
        if op == "close" and response.ok:
            self.state.log_open, self.state.closed = False, True

    def _append(self, args: dict, expect: dict, reqs: list[str], may: dict | None) -> None:
        """An ``append`` step: its batches built at the run's clock, ``times`` times over."""
        specs = [args["batch"]] if "batch" in args else list(args.get("batches", ()))
        times = args.get("times", 1)
        for k in range(times):
            batches = build_all(specs, self.state.now)
            wire = {
                "batches": [base64.b64encode(b).decode("ascii") for b in batches],
                "assign_offsets": not args.get("follower", False),
                "leader_epoch": args.get("leader_epoch", 0),
            }
            if args.get("origin", "client") != "client":  # sent only when needed
                wire["origin"] = args["origin"]
            last = k == times - 1  # the step's expectations (and MAY answer) are the last append's
            self.checks.check_response_or_may(
                "append", wire, expect if last else {}, may if last else None, reqs
            )

    # --- the end ---
    def final_checks(self) -> None:
        """The directory after the last step: the segment invariants while the log is open
        or closed, and the reference's files (goldens)."""
        state = self.state
        self.final_files = disk.snapshot(state.root, state.anchor)
        files = disk.visible(self.final_files, state.features)
        if state.log_open or state.closed:
            scenario = state.scenario
            pristine = not state.recovered and not scenario.truncates
            state.check_invariants(files, pristine=pristine)
        if state.golden is not None:
            self.comparison.compare_files(files)


# the steps the harness does itself (or, for open and crash, with the driver's own
# request), by the step's key; any other step is an operation sent to the testee (OP_KEYS)
HARNESS_STEPS = {
    "clock": Run.do_clock,
    "damage": Run.do_damage,
    "set_mtime": Run.do_set_mtime,
    "snapshot": Run.do_snapshot,
    "files": Run.do_files,
    "open": Run.do_open_step,
    "crash": Run.do_crash,
}
