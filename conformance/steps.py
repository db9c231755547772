"""One scenario on one testee, step by step (docs/conformance/scenarios.md: the steps;
docs/conformance/results.md: what each failure means).

``Run`` sends each step to the testee (``Driver``) or does it itself (clock, damage,
mtimes, file inspection), checks each response (responses.py) and, at the end, the
directory against the segment invariants (index_invariants.py) and the reference's files
(file_comparison.py); then the epilogue (epilogue.py).
"""

from __future__ import annotations

import base64
import errno
import os
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import parse_partition_dir_name

from . import check_rules, disk, file_checks, index_invariants, scratch
from .batches import build_all
from .damage import StepError, apply_damage, os_reason
from .diagnostics import (
    OP_KEYS,
    describe_damage,
    describe_step,
    names,
)
from .disk import epoch_entries
from .epilogue import EpilogueRecord, RunEpilogue
from .file_comparison import RunFileComparison
from .file_names import expand_name, segment_file
from .golden_files import reference_file
from .responses import RunResponses, normalized
from .results import Failure
from .scenarios import Scenario
from .transport import Driver, Response

DEFAULT_MAX_BYTES = 1 << 20


class Run(RunResponses, RunFileComparison, RunEpilogue):
    """One scenario on one driver."""

    def __init__(
        self,
        scenario: Scenario,
        driver: Driver,
        workdir: Path,
        golden: dict | None,
        features: set[str],
    ):
        self.s = scenario
        self.driver = driver
        self.anchor = workdir  # the scenario's directory: no file operation leaves it
        self.root = workdir / "logs"
        self.pdir = self.root / scenario.partition
        self.golden = golden
        self.features = features
        self.now = scenario.start_ms
        self.config = dict(scenario.config)
        steps = scenario.steps  # a cleaner may rewrite compressed batches (COMPACT-28)
        self.recompressed = any("clean" in s for s in steps) and "codec" in repr(steps)
        self.failures: list[Failure] = []
        self.responses: list[dict] = []
        self.log_open = False
        self.closed = False
        self.crashed = False
        self.damaged = False  # the harness changed files: rules its damage can break are off
        self.corrupt_files: dict[str, bytes] | None = None
        self.final_files: dict[str, bytes] | None = None
        self.snapshots: dict[str, dict[str, bytes]] = {}
        self.step_index: int | None = None
        self.operation: str | None = None  # what the current step does, in words
        self.last_operation: str | None = None  # the last step that was not a files check
        self.recovered = False  # a crash or damage came before the current step
        self.open_wire: dict = {}  # the last successful open's request (the epilogue's reopen)
        self.epilogue: EpilogueRecord | None = None
        self.steps_closed = False  # the steps ended with a successful close
        self.steps_done = False  # every step ran (else the run stopped at step_index)
        parsed = parse_partition_dir_name(scenario.partition)
        self.topic, self.partition_number = parsed.topic, parsed.partition

    # --- helpers ---
    def fail(self, category: str, message: str, reqs: list[str] | None = None, *,
             cause: str | None = None, choice: list[str] | None = None) -> None:  # fmt: skip
        if check_rules.open_choice(choice or (), self.features):
            return  # a MAY: both answers are allowed (spec README §1.6)
        step = None if self.step_index is None else self.step_index + 1
        self.failures.append(
            Failure(
                category,
                message,
                sorted(reqs or self.s.requirements),
                step,
                self.operation,
                cause,
                list(choice or ()),
            )
        )

    def reqs(self, step: dict) -> list[str]:
        return list(step.get("reqs") or self.s.requirements)

    def send(self, op: str, args: dict) -> Response:
        response = self.driver.request(op, args, self.now)
        self.responses.append({"step": self.step_index, **normalized(op, response)})
        return response

    # --- the run ---
    def run(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.s.open:
            self.step_index, self.operation = -1, "open (the scenario's own)"
            self.do_open({}, {}, self.s.requirements)
            self.last_operation = "open"
        for i, step in enumerate(self.s.steps):
            self.step_index = i
            self.operation = "damage" if "damage" in step else describe_step(step)
            if "files" in step and self.last_operation:
                self.operation = f"{self.last_operation} then files"
            if not self.apply(step, lambda step=step: self.do_step(step)):
                return  # the later steps assume this one happened
            if "files" not in step and "snapshot" not in step:
                self.last_operation = self.operation
            if "crash" in step or "damage" in step:
                self.recovered = True
        self.steps_done = True
        self.step_index, self.operation = None, "the end of the scenario"
        if not self.apply({}, self.final_checks):
            return
        self.steps_closed = self.closed
        self.operation = "the epilogue (close, compare, reopen, read)"
        self.apply({}, self.run_epilogue)

    def apply(self, step: dict, action) -> bool:
        """Do one step (or the final checks). A step the harness cannot do on the testee's
        files (a file it did not write, a directory where a file should be, a file that
        does not read) fails the test with the step, the operation and the file; it never
        ends the run. False when the scenario cannot go on."""
        try:
            action()
        except StepError as exc:
            self.fail("harness_step", str(exc), self.reqs(step), cause=exc.cause)
        except scratch.UnsafeFile as exc:
            self.fail("harness_step", self._unsafe(exc), self.reqs(step), cause=exc.cause)
        except OSError as exc:
            where = self._relative(exc.filename)
            self.fail(
                "harness_step",
                f"{where} {os_reason(exc)}" if where else os_reason(exc),
                self.reqs(step),
                cause=f"a file of the testee {os_reason(exc)}",
            )
        except KafkaLogError as exc:
            self.fail(
                "harness_step",
                f"a file of the testee does not decode: {exc}",
                self.reqs(step),
                cause=f"a file of the testee does not decode ({exc.category.value})",
            )
        else:
            return True
        return False

    def _relative(self, filename) -> str | None:
        if not filename:
            return None
        path = Path(os.fsdecode(filename))
        for base in (self.pdir, self.root):
            if path.is_relative_to(base):
                return path.relative_to(base).as_posix()
        return str(path)

    def do_step(self, step: dict) -> None:
        """One step: the harness's own (``HARNESS_STEPS``, by the step's key, in that
        order), else an operation sent to the testee."""
        for key, handler in HARNESS_STEPS.items():
            if key in step:
                handler(self, step)
                return
        op = next(k for k in OP_KEYS if k in step)
        self.may = step.get("may")  # another answer a MAY rule allows (check_response_or_may)
        self.do_op(op, step[op] or {}, step.get("expect") or {}, self.reqs(step))

    def do_clock(self, step: dict) -> None:
        """``clock``: set or advance the time the testee is told, its only clock (MODEL-5)."""
        self.now = step["clock"].get("set", self.now + step["clock"].get("advance", 0))

    def do_damage(self, step: dict) -> None:
        """``damage``: change the testee's files as a crash or a disk would; the rules such
        damage can break are off from now on (``damaged``)."""
        self.damaged = True
        for damage in step["damage"]:
            self._damage(damage)
        if self.corrupt_files is None:
            self.corrupt_files = disk.snapshot(self.root, self.anchor)

    def do_set_mtime(self, step: dict) -> None:
        """``set_mtime``: a file's modification time, which a segment without timestamps
        counts as its largest timestamp (RET-9)."""
        path = self._path(step["set_mtime"]["file"])
        what = scratch.status(path, self.anchor)
        if what is not None:
            reason = self._absent(path) if what == "absent" else f"is {what}, not a regular file"
            raise StepError(
                f"sets the modification time of {self._shown(path)}, but it {reason}",
                "set_mtime of a file the testee did not write"
                if what == "absent"
                else "set_mtime of a file that is not a regular file",
            )
        scratch.set_mtime(path, self.anchor, step["set_mtime"]["ms"] * 1_000_000)

    def do_snapshot(self, step: dict) -> None:
        """``snapshot``: remember every file now, for a later ``unchanged_since``."""
        self.snapshots[step["snapshot"]] = self._files()

    def do_files(self, step: dict) -> None:
        """``files``: the directory against the step's expectations (file_checks.py)."""
        self._check_files(step, self.reqs(step))
        if "unchanged_since" in step["files"]:
            self._unchanged_since(step["files"]["unchanged_since"], self.reqs(step))

    def do_open_step(self, step: dict) -> None:
        self.do_open(step["open"] or {}, step.get("expect") or {}, self.reqs(step))

    def do_crash(self, step: dict) -> None:
        """``crash``: the testee loses everything not on disk; the next open is unclean and
        recovers (RECOV-1)."""
        self.driver.crash(self.now)
        self.responses.append({"step": self.step_index, "op": "crash", "ok": True, "result": {}})
        self.log_open, self.crashed, self.closed = False, True, False

    def _damage(self, damage: dict) -> None:
        """One damage operation; a file it needs that the testee did not write fails the
        test, naming the operation and the file."""
        try:
            apply_damage(self.root, self.pdir, damage, self.now, self.anchor)
        except scratch.UnsafeFile as exc:
            raise StepError(
                f"{describe_damage(damage)}, but {self._unsafe(exc)}", exc.cause
            ) from exc
        except OSError as exc:
            path = Path(os.fsdecode(exc.filename)) if exc.filename else None
            reason = self._absent(path) if path and exc.errno == errno.ENOENT else os_reason(exc)
            shown = f"{self._shown(path)} " if path else ""
            raise StepError(
                f"{describe_damage(damage)}, but {shown}{reason}",
                f"damage needs a file that {'the testee did not write' if exc.errno == errno.ENOENT else os_reason(exc)}",
            ) from exc

    def _unsafe(self, exc: scratch.UnsafeFile) -> str:
        """An UnsafeFile's message, the file named as the other failures name files."""
        return exc.shown(self._shown(self.anchor / exc.name))

    def _shown(self, path: Path) -> str:
        return self._relative(path) or str(path)

    def _absent(self, path: Path) -> str:
        """Why a file is not there, and whether the reference's run has it."""
        if not self.pdir.is_dir():
            return "does not exist, nor does the testee's partition directory"
        name = self._relative(path)
        relative = f"{self.s.partition}/{name}" if path.is_relative_to(self.pdir) else name
        has = reference_file(self.s.id, relative) is not None if self.golden else None
        return "does not exist: the testee did not write it" + (
            " (the reference's run has it)" if has else ""
        )

    def _check_files(self, step: dict, reqs: list[str]) -> None:
        """A ``files`` step: each failed expectation tagged with the rules it checks and
        the SHOULD choices it rests on (check_rules.py)."""
        problems = file_checks.check_files(
            step["files"], self.root, self.s.partition, self.topic, self.partition_number,
            self.features,
        )  # fmt: skip
        if not problems:
            return
        live = [segment_file(n) for n in scratch.regular_names(self.pdir, self.anchor)]
        active = max((b for b, k, m in live if k == "log" and not m), default=None)
        for problem in problems:
            base, kind, marker = segment_file(problem.file or "")
            path = self._path(problem.file) if problem.file else None
            choice = check_rules.files_check_choice(
                problem.key, kind, marker,
                recovered=self.recovered,
                trimmed=self.closed or (base is not None and base != active),
                created_with_log=base == 0 and "MODEL-2" in self.s.requirements,
                empty=path is not None and self._read(path) == b"",
                name=problem.file or "",
                log_renamed=(base, "log", ".deleted") in live,
                closed_active=self.closed and base is not None and base == active,
            )  # fmt: skip
            subject = f".{kind}{marker}" if kind else (problem.file or "").rpartition("/")[2]
            rules, cause = reqs, f"files: {problem.key} {subject}".rstrip()
            if problem.key == "text" and subject == "leader-epoch-checkpoint":
                want = step["files"]["text"][subject].encode()
                mine = self._read(path) if path is not None else None
                if mine is not None and epoch_entries(mine) == epoch_entries(want) is not None:
                    rules, cause = check_rules.EPOCH_FORMAT, f"{subject}: format (the same entries)"
            self.fail("files", problem.message, rules, cause=cause, choice=choice)

    def _unchanged_since(self, name: str, reqs: list[str]) -> None:
        def kept(files: dict[str, bytes]) -> dict[str, bytes]:
            return {k: v for k, v in files.items() if not k.endswith(".deleted")}

        before, now = kept(self.snapshots.get(name, {})), kept(self._files())
        changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        if changed:
            self.fail(
                "files",
                f"changed since snapshot {name}: {names(changed)}",
                reqs,
                cause="files: changed where nothing may change",
            )

    def _files(self) -> dict[str, bytes]:
        """Every file under the log directory this testee is judged on (disk.visible)."""
        return disk.visible(disk.snapshot(self.root, self.anchor), self.features)

    def _read(self, path: Path) -> bytes | None:
        """A regular file's bytes (None: absent or a directory), never through a link."""
        return scratch.read_if_file(path, self.anchor)

    def _path(self, name: str) -> Path:
        return self.root / name[3:] if name.startswith("../") else self.pdir / expand_name(name)

    def do_open(self, args: dict, expect: dict, reqs: list[str]) -> None:
        config = (
            dict(args.get("config") or {})
            if args.get("replace_config")
            else {**self.s.config, **(args.get("config") or {})}
        )
        wire = {"dir": str(self.pdir), "config": config}
        topic_id = args.get("topic_id", self.s.topic_id)
        if topic_id is not None:
            wire["topic_id"] = topic_id
        response = self.check_response("open", wire, expect, reqs)
        if response.ok:
            self.config = config
            self.open_wire = wire
            self.log_open, self.closed, self.crashed = True, False, False

    def do_op(self, op: str, args: dict, expect: dict, reqs: list[str]) -> None:
        if op == "append":
            specs = [args["batch"]] if "batch" in args else list(args.get("batches", ()))
            times = args.get("times", 1)
            for k in range(times):
                wire = {
                    "batches": [
                        base64.b64encode(b).decode("ascii") for b in build_all(specs, self.now)
                    ],
                    "assign_offsets": not args.get("follower", False),
                    "leader_epoch": args.get("leader_epoch", 0),
                }
                if args.get("origin", "client") != "client":  # sent only when needed
                    wire["origin"] = args["origin"]
                last = (
                    k == times - 1
                )  # the step's expectations (and MAY answer) are the last append's
                response = self.check_response_or_may(op, wire, expect if last else {}, self.may if last else None, reqs)  # fmt: skip
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
        response = self.check_response_or_may(op, args, expect, self.may, reqs)
        if op == "close" and response.ok:
            self.log_open, self.closed = False, True

    # --- the end ---
    def final_checks(self) -> None:
        self.final_files = disk.snapshot(self.root, self.anchor)
        files = disk.visible(self.final_files, self.features)
        partition_files = {
            name.partition("/")[2]: data
            for name, data in files.items()
            if name.startswith(self.s.partition + "/")
        }
        if self.log_open or self.closed:
            pristine = not self.recovered and not any(
                "truncate_to" in s or "truncate_fully_and_start_at" in s for s in self.s.steps
            )
            found = index_invariants.invariants(
                partition_files,
                self.config,
                self.closed,
                self.s.reloads_after_failure,
                pristine=pristine,
                forgetful=self.s.may_forget_timestamps,
            )
            for reqs, problem in found:
                if self.damaged and ("wrong CRC" in problem or "unreadable" in problem):
                    continue  # the harness's own damage, in a segment recovery need not read
                self.fail("invariant", problem, reqs, cause=f"invariant {', '.join(reqs)}")
        if self.golden is not None:
            self._compare_files(files)


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
