"""Run one scenario against one testee and judge what it did.

Each step is sent to the testee (``Driver``) or done by the harness (clock, damage,
mtimes, file inspection); its response is checked against the step's ``expect``. At
the end the testee's directory is checked against the index invariants and, when
goldens are given, against the reference's run of the same scenario: every response,
and the files, byte for byte where the spec fixes the bytes (``.log`` files and the
checkpoint files) and by their entries where it does not (index files: placement and
preallocation are SHOULD, index.md; producer snapshots: their entry order is open,
SNAP-8). Then the epilogue (epilogue.py) closes the log, compares its files again, reloads
and reads it back; with ``--cross-load`` a second testee loads it too (crossload.py).

Files of an optional feature the testee does not claim (``.snapshot`` files without
``producer_snapshots``) are left out of every comparison, and result fields of one
(``last_stable_offset``, ``aborted_transactions`` without ``transaction_index``) out of
the golden comparison of responses: a testee neither fails for them nor passes a
scenario about them (such scenarios need the feature and are skipped).

A failure carries a category (how it failed), the step and its operation, the requirement
IDs it checks (the step's ``reqs``, else the scenario's; the specific rule of an invariant
or of a golden field, check_rules.py) and a level: MUST unless the expectation rests on a
SHOULD choice (index placement, preallocation, lazy index files). A testee that crashes,
hangs or breaks the protocol ends the scenario with that category; a step the harness
does itself (damage, set_mtime, file checks) on files the testee did not write, or wrote
as something else, ends it as ``harness_step`` (Run.apply). Only the harness's own bugs
escape, as HarnessError: the run stops with exit status 2.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import parse_partition_dir_name
from reference_impl.records import iter_batches

from . import check_rules, disk, scratch
from .batches import build_all
from .crossload import CrossLoader
from .diagnostics import (
    MAX_TAIL,
    OP_KEYS,
    bytes_difference,
    describe_damage,
    describe_step,
    names,
    printable,
    show,
    text_difference,
)
from .epilogue import EpilogueRecord, RunEpilogue
from .golden_files import reference_file
from .scenarios import LEVEL_ORDER, Scenario, load_requirements
from .transport import Driver, Response, TesteeFailure

DEFAULT_MAX_BYTES = 1 << 20
SEGMENT_INDEX_KINDS = ("index", "timeindex")
# offset checkpoints of the log directory: their entries' order is open (one line a partition)
OFFSET_CHECKPOINTS = {
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
}
ROOT_CHECKPOINTS = {  # log-directory files a log writes when it chooses, until close
    "recovery-point-offset-checkpoint": ["CKPT-B-5"],
    "log-start-offset-checkpoint": ["CKPT-B-6"],
    ".kafka_cleanshutdown": ["CLEAN-1", "CLEAN-3"],
}
HARNESS_KEYS = ("clock", "damage", "set_mtime", "files", "snapshot")
FEATURE_RESULTS = {  # result fields only a testee claiming the feature is compared on
    "last_stable_offset": ("transaction_index", ["TXN-B-7"]),
    "aborted_transactions": ("transaction_index", ["READ-22"]),
}


def fast_tmp() -> str | None:
    """Scratch space in memory when there is some (fsync is cheap there)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def level_of(requirements: list[str]) -> str:
    levels = load_requirements()
    found = [levels[r]["level"] for r in requirements if r in levels]
    return min(found, key=LEVEL_ORDER.__getitem__) if found else "MUST"


def weakest(*levels: str) -> str:
    return max(levels, key=LEVEL_ORDER.__getitem__)


@dataclass
class Failure:
    """One failed check. ``requirements`` are the rules it is about; ``choice`` the SHOULD
    rules its expectation rests on (check_rules.py): with one, the failure is SHOULD.
    ``step`` is the step's number as ``klogspec conformance show`` prints it (1 for the
    first of ``steps``, 0 for the scenario's implicit ``open``, None for the checks at
    the end); ``operation`` says what the step did; ``cause`` is a short phrase without
    numbers, the same for every failure of one root cause (report.py groups by it)."""

    category: str
    message: str
    requirements: list[str]
    step: int | None = None
    operation: str | None = None
    cause: str | None = None
    choice: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.requirements = sorted(set(self.requirements) | set(self.choice))
        if self.cause is None:
            self.cause = self.category

    @property
    def level(self) -> str:
        own = level_of([r for r in self.requirements if r not in self.choice] or self.choice)
        # a MAY choice is failed only for a kafka_exact implementation, as a SHOULD
        return weakest(own, *(level_of([c]).replace("MAY", "SHOULD") for c in self.choice))

    @property
    def where(self) -> str:
        """``step 5 delete_segments_before(2)``, ``the end of the scenario``."""
        if self.step is None:
            return self.operation or "the end of the scenario"
        return f"step {self.step} {self.operation or ''}".rstrip()

    def render(self) -> str:
        """The failure as one line of text output."""
        rules = ", ".join(self.requirements)
        return f"[{self.level} {rules}] {self.category} at {self.where}: {self.message}"

    def to_data(self) -> dict:
        data = {
            "category": self.category,
            "message": self.message,
            "requirements": self.requirements,
            "level": self.level,
            "step": self.step,
            "operation": self.where,
            "cause": self.cause,
        }
        if self.choice:
            data["choice"] = list(self.choice)
        return data


@dataclass
class Result:
    scenario: Scenario
    status: str  # passed | failed | skipped
    failures: list[Failure] = field(default_factory=list)
    skip_reason: str | None = None
    duration_s: float = 0.0
    responses: list[dict] = field(default_factory=list)
    final_files: dict[str, bytes] | None = None
    corrupt_files: dict[str, bytes] | None = None
    closed: bool = False
    epilogue: EpilogueRecord | None = None
    stopped_at: int | None = None  # the step (Failure.step's numbering) the run ended at early

    def judged(self, step_number: int | None) -> bool:
        """Whether the run got as far as step ``step_number`` (None: the scenario's end,
        where its own requirements are checked): a scenario that stopped at step 0 judged
        none of its later steps' rules (issue 20 §5)."""
        if self.status == "skipped":
            return False
        if self.stopped_at is None:
            return True
        return step_number is not None and step_number <= self.stopped_at

    @property
    def failed_requirements(self) -> list[str]:
        return sorted({r for f in self.failures for r in f.requirements})

    @property
    def level(self) -> str:
        """The level of the failure: MUST when any failed check is a MUST."""
        if not self.failures:
            return self.scenario.level
        return min((f.level for f in self.failures), key=LEVEL_ORDER.__getitem__)

    @property
    def category(self) -> str | None:
        return self.failures[0].category if self.failures else None


def _norm(op: str, response: Response) -> dict:
    if response.ok:
        return {"op": op, "ok": True, "result": response.result}
    return {"op": op, "ok": False, "code": response.code}


class _Absent:
    """A result field the testee did not answer (shown as ``absent``)."""

    def __repr__(self) -> str:
        return "absent"


ABSENT = _Absent()


class StepError(Exception):
    """A step the harness does itself (damage, set_mtime, snapshot, files) could not be
    done on the testee's files: the test fails with this message, the run goes on."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


_OS_REASONS = {
    errno.ENOENT: "does not exist",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "is not a directory, or a directory on its path is a file",
    errno.EACCES: "cannot be read or written (permission denied)",
    errno.EPERM: "cannot be read or written (operation not permitted)",
    errno.EEXIST: "already exists",
}


def os_reason(exc: OSError) -> str:
    return _OS_REASONS.get(exc.errno, exc.strerror or type(exc).__name__)


class Run(RunEpilogue):
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
    def fail(
        self,
        category: str,
        message: str,
        reqs: list[str] | None = None,
        *,
        cause: str | None = None,
        choice: list[str] | None = None,
    ) -> None:
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
        self.responses.append({"step": self.step_index, **_norm(op, response)})
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
        expect = step.get("expect") or {}
        reqs = self.reqs(step)
        if "clock" in step:
            self.now = step["clock"].get("set", self.now + step["clock"].get("advance", 0))
        elif "damage" in step:
            self.damaged = True
            for damage in step["damage"]:
                self._damage(damage)
            if self.corrupt_files is None:
                self.corrupt_files = disk.snapshot(self.root, self.anchor)
        elif "set_mtime" in step:
            ns = step["set_mtime"]["ms"] * 1_000_000
            path = self._path(step["set_mtime"]["file"])
            what = scratch.status(path, self.anchor)
            if what is not None:
                reason = (
                    self._absent(path) if what == "absent" else f"is {what}, not a regular file"
                )
                raise StepError(
                    f"sets the modification time of {self._shown(path)}, but it {reason}",
                    "set_mtime of a file the testee did not write"
                    if what == "absent"
                    else "set_mtime of a file that is not a regular file",
                )
            scratch.set_mtime(path, self.anchor, ns)
        elif "snapshot" in step:
            self.snapshots[step["snapshot"]] = self._files()
        elif "files" in step:
            self._check_files(step, reqs)
            if "unchanged_since" in step["files"]:
                self._unchanged_since(step["files"]["unchanged_since"], reqs)
        elif "open" in step:
            self.do_open(step["open"] or {}, expect, reqs)
        elif "crash" in step:
            self.driver.crash(self.now)
            self.responses.append(
                {"step": self.step_index, "op": "crash", "ok": True, "result": {}}
            )
            self.log_open, self.crashed, self.closed = False, True, False
        else:
            op = next(k for k in OP_KEYS if k in step)
            self.do_op(op, step[op] or {}, expect, reqs)

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
        problems = disk.check_files(
            step["files"], self.root, self.s.partition, self.topic, self.partition_number,
            self.features,
        )  # fmt: skip
        if not problems:
            return
        live = [disk.segment_file(n) for n in scratch.regular_names(self.pdir, self.anchor)]
        active = max((b for b, k, m in live if k == "log" and not m), default=None)
        for problem in problems:
            base, kind, marker = disk.segment_file(problem.file or "")
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
                if mine is not None and _epoch_entries(mine) == _epoch_entries(want) is not None:
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
        return (
            self.root / name[3:] if name.startswith("../") else self.pdir / disk.expand_name(name)
        )

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
                response = self.check_response(op, wire, expect if k == times - 1 else {}, reqs)
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
        response = self.check_response(op, args, expect, reqs)
        if op == "close" and response.ok:
            self.log_open, self.closed = False, True

    # --- checking a response ---
    def check_response(self, op: str, args: dict, expect: dict, reqs: list[str]) -> Response:
        before = self._observe() if expect.get("unchanged") else None
        response = self.send(op, args)
        problems_before = len(self.failures)
        wanted = expect.get("error")
        if expect.get("refused"):  # the rule leaves the code open: any refusal passes
            if response.ok:
                self.fail("missing_error", f"{op}: succeeded, expected a refusal", reqs)
        elif wanted is not None:
            if response.ok:
                self.fail(
                    "missing_error", f"succeeded, expected {wanted}", reqs,
                    cause=f"{op}: succeeded, expected {wanted}",
                )  # fmt: skip
            elif response.code != wanted:
                self.fail(
                    "wrong_error", f"refused with {response.code}, expected {wanted}", reqs,
                    cause=f"{op}: refused with {response.code}, expected {wanted}",
                )  # fmt: skip
        elif not response.ok:
            said = f" ({printable(response.message)})" if response.message else ""
            self.fail(
                f"unexpected_error:{response.code}", f"refused with {response.code}{said}", reqs,
                cause=f"{op}: refused with {response.code}",
            )  # fmt: skip
        else:
            for key, want in expect.items():
                if key in ("unchanged", "error", "refused"):
                    continue
                have = self._actual(op, key, response.result)
                if key == "aborted_transactions" and isinstance(want, list):
                    want = sorted(want)  # in any order (READ-22)
                if have != want:
                    shown = "absent" if have is ABSENT else show(have)
                    self.fail(
                        "wrong_result", f"{key} is {shown}, expected {show(want)}", reqs,
                        cause=f"{op}: {key} differs from the scenario's",
                    )  # fmt: skip
        if response.ok and op in ("open", "state"):
            self._state_rules(response.result)
        if before is not None:
            after = self._observe()
            if after != before and not (op == "append" and _only_epochs_added(before, after)):
                changed = sorted(
                    k for k in set(before[0]) | set(after[0]) if before[0].get(k) != after[0].get(k)
                )
                what = (
                    f"the files {names(changed)}"
                    if changed
                    else f"the state {show(before[1])} -> {show(after[1])}"
                )
                self.fail(
                    "changed",
                    f"a refused operation changed {what}",
                    sorted(set(reqs) | {"MODEL-11"}),
                    cause=f"{op}: a refused operation changed {'files' if changed else 'the state'}",
                )
        if self.golden is not None and len(self.failures) == problems_before:
            self._compare_response(op, response, reqs, any_code=bool(expect.get("refused")))
        return response

    def _observe(self) -> tuple[dict, dict | None]:
        files = self._files()
        state = None
        if self.log_open:
            response = self.driver.request("state", {}, self.now)
            state = response.result if response.ok else {"error": response.code}
        return files, state

    def _actual(self, op: str, key: str, result: dict):
        if key == "segments":
            return [[s["base_offset"], s["size_bytes"]] for s in result.get("segments", ())]
        if key == "segment_bases":
            return [s["base_offset"] for s in result.get("segments", ())]
        if key == "aborted_transactions":
            return _aborted(result.get(key, ABSENT))
        if key == "fetch_offset_metadata":
            m = result["fetch_offset_metadata"]
            return [
                m["message_offset"],
                m["segment_base_offset"],
                m["relative_position_in_segment"],
            ]
        if op == "read" and key in (
            "batches",
            "offsets",
            "keys",
            "size",
            "empty",
            "epochs",
            "max_timestamps",
            "crc_valid",
        ):
            data = base64.b64decode(result["data"])
            if key == "size":
                return len(data)
            if key == "empty":
                return not data and not result["first_entry_incomplete"]
            try:
                batches = list(iter_batches(data))
            except KafkaLogError as exc:
                return f"undecodable ({exc.category.value})"
            if key == "batches":
                return [[b.base_offset, b.last_offset] for b in batches]
            if key == "epochs":
                return [getattr(b, "partition_leader_epoch", -1) for b in batches]
            if key == "max_timestamps":
                return [b.max_timestamp for b in batches]
            if key == "crc_valid":
                return all(b.is_valid for b in batches)
            if key == "keys":  # compaction: which keys a cleaning kept
                return [
                    None if r.key is None else r.key.decode("utf-8", "replace")
                    for b in batches
                    for r in b.records()
                ]
            return [r.offset for b in batches for r in b.records()]
        return result.get(key, ABSENT)

    def _state_rules(self, state: dict) -> None:
        # MODEL-4: above the LEO only at the base offset of a segment rolled in beyond it
        active_base = max((s["base_offset"] for s in state["segments"]), default=0)
        if state["recovery_point"] > max(state["log_end_offset"], active_base):
            self.fail(
                "invariant",
                f"recovery point {state['recovery_point']} above both the LEO "
                f"{state['log_end_offset']} and the active segment's base offset {active_base}",
                ["MODEL-4"],
                cause="the recovery point above the LEO",
            )
        lso = state.get("last_stable_offset")
        if (
            lso is not None
            and "transaction_index" in self.features
            and not min(state["log_start_offset"], state["log_end_offset"])
            <= lso
            <= state["log_end_offset"]
        ):
            self.fail(
                "invariant",
                f"last stable offset {lso} outside [log start offset "
                f"{state['log_start_offset']}, LEO {state['log_end_offset']}]",
                ["TXN-B-7"],
                cause="the last stable offset outside the log",
            )
        bases = [s["base_offset"] for s in state["segments"]]
        if bases != sorted(set(bases)):
            self.fail(
                "invariant",
                f"segment base offsets {show(bases)} do not strictly increase",
                ["MODEL-1"],
                cause="segment base offsets that do not increase",
            )
        limit = self.config.get("segment_bytes")
        if limit is not None and not self.damaged:
            for s in state["segments"]:
                if s["size_bytes"] > limit:
                    self.fail(
                        "invariant",
                        f"segment {s['base_offset']} holds {s['size_bytes']} bytes, above segment_bytes {limit}",
                        ["ROLL-21"],
                        cause="a segment above segment_bytes",
                    )

    def _compare_response(
        self, op: str, response: Response, reqs: list[str], any_code: bool = False
    ) -> None:
        """The response against the reference's to the same request: each field that
        differs is tagged with the rule that defines it (check_rules.py), or with the
        step's rules when no single rule does. ``any_code``: the rule leaves a refusal's
        code open, so only refused-or-not is compared."""
        index = len(self.responses) - 1
        golden = self.golden.get("responses", [])
        if index >= len(golden):
            return
        want, have = golden[index], self.responses[index]
        if want["op"] != op:
            return  # the scenario changed since the goldens were made
        if want["ok"] != have["ok"] or (want.get("code") != have.get("code") and not any_code):
            got = "success" if have["ok"] else have["code"]
            wanted = "success" if want["ok"] else want["code"]
            self.fail(
                "golden_response", f"{got}, the reference gives {wanted}", reqs,
                cause=f"{op}: {got}, the reference gives {wanted}",
            )  # fmt: skip
            return
        if not want["ok"]:
            return
        for key, value in want["result"].items():
            if key not in have["result"]:
                continue  # optional fields of the result
            if op == "append" and key == "first_offset" and value == -1:
                continue
            feature, feature_reqs = FEATURE_RESULTS.get(key, (None, []))
            if feature is not None and feature not in self.features:
                continue
            mine = have["result"][key]
            if key == "aborted_transactions":
                mine, value = _aborted(mine), _aborted(value)  # in any order
            if mine == value:
                continue
            if op == "read" and key == "data":
                shown = bytes_difference(base64.b64decode(mine), base64.b64decode(value))
                message = f"data differs from the reference's: {shown}"
            else:
                message = f"{key} is {show(mine)}, the reference gives {show(value)}"
            rules = check_rules.response_field_rules(op, key) or sorted(
                set(reqs) | set(feature_reqs)
            )
            self.fail(
                "golden_response", message, rules,
                cause=f"{op}: {key} differs from the reference's",
            )  # fmt: skip

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
            found = disk.invariants(
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

    def _compare_files(self, files: dict[str, bytes], golden_files: dict | None = None) -> None:
        golden = self.golden.get("files", {}) if golden_files is None else golden_files
        recovered = any("crash" in s or "damage" in s for s in self.s.steps)
        truncated = any(
            "truncate_to" in s or "truncate_fully_and_start_at" in s for s in self.s.steps
        )
        live = [disk.segment_file(n) for n in files if n.startswith(self.s.partition + "/")]
        active = max((b for b, k, m in live if k == "log" and not m), default=None)
        for name in sorted(set(golden) | set(files)):
            base, kind, marker = disk.segment_file(name)
            fixed = name.rpartition("/")[2]
            if not disk.is_visible(name, self.features):
                continue  # a file of a feature the testee does not claim
            if fixed in ROOT_CHECKPOINTS and not self.closed:
                continue  # written when the log chooses, until close (CKPT-B-7, CLEAN-1)
            if (
                fixed == "leader-epoch-checkpoint"
                and "leader_epoch_checkpoint" not in self.features
            ):
                continue
            reqs = self._file_reqs(fixed, kind, marker)
            want, have = golden.get(name), files.get(name)
            if want is None or have is None:
                self._existence_difference(name, have, golden, files, reqs, base == active)
                continue
            if hashlib.sha256(have).hexdigest() == want["sha256"]:
                continue
            view = disk.decode(name, have)
            if kind == "snapshot" and _same_entries(view, want["decoded"]):
                continue  # the same producers: SNAP-8 leaves their order open
            if fixed in OFFSET_CHECKPOINTS and _same_lines_any_order(view, want["decoded"]):
                continue  # the same entries: Kafka writes a HashMap's, in no fixed order
            stale = kind in SEGMENT_INDEX_KINDS and self.log_open and base == active
            if stale and (truncated or recovered):
                # past its entries an open index may hold the bytes of entries a truncation
                # or a recovery removed, or zeros (INDEX-6): one side's decoded entries must
                # start the other's
                mine, ref_entries = view["entries"], want["decoded"]["entries"]
                shorter = min(len(mine), len(ref_entries))
                if mine[:shorter] == ref_entries[:shorter]:
                    continue
            theirs = reference_file(self.s.id, name, want["sha256"])
            if kind in SEGMENT_INDEX_KINDS:
                placement = check_rules.placement(recovered)
                if view["entries"] != want["decoded"]["entries"]:
                    self.fail(
                        "golden_index",
                        f"{name}: entries {show(view['entries'])}, the reference's {show(want['decoded']['entries'])}",
                        [placement], cause=f"{kind} entries placed otherwise", choice=[placement],
                    )  # fmt: skip
                else:
                    sized = len(have) != want["size"]
                    text = (
                        f"{len(have)} bytes, the reference's {want['size']} (the same entries before any zero-filled slot)"
                        if sized
                        else "the same entries and size, other bytes after the entries"
                    )
                    if theirs is not None:
                        text += f": {bytes_difference(have, theirs)}"
                    choice = check_rules.index_size_choice(kind, len(have), want["size"])
                    self.fail(
                        "golden_index", f"{name}: {text}", choice,
                        cause=f"{kind} file {'sized' if sized else 'filled'} otherwise",
                        choice=choice,
                    )  # fmt: skip
            elif kind == "log":
                self._log_difference(name, have, view, want, theirs, reqs)
            elif kind in ("snapshot", "txnindex"):
                mine = view.get("entries", view.get("error"))
                ref = want["decoded"].get("entries", want["decoded"].get("error"))
                self.fail(
                    "golden_files",
                    f"{name}: entries {show(mine)}, the reference's {show(ref)}",
                    sorted(set(reqs) | {"TXN-B-5"}) if kind == "txnindex" else sorted(set(reqs) | {"PSTATE-1"}),
                    cause=f"{kind}: entries differ from the reference's",
                )  # fmt: skip
            elif fixed == "leader-epoch-checkpoint" and self._epochs_allowed(files, have, theirs):
                continue  # APPEND-27: entries at the LEO that a refused append assigned
            else:
                self._text_difference(name, fixed, have, want, theirs, reqs)

    def _epochs_allowed(self, files: dict[str, bytes], have: bytes, theirs: bytes | None) -> bool:
        """Whether the testee's epoch file is the reference's plus APPEND-27's entries, each
        starting at or above the directory's LEO (the active segment's next offset)."""
        logs = [
            (base, name)
            for name in files
            if name.startswith(self.s.partition + "/")
            for base, kind, marker in [disk.segment_file(name)]
            if kind == "log" and not marker
        ]
        if not logs or theirs is None:
            return False
        base, name = max(logs)
        batches = disk.decode(name, files[name]).get("batches") or []
        leo = batches[-1]["last_offset"] + 1 if batches else base
        mine = _epoch_entries(have) if have else []
        ref = _epoch_entries(theirs) if theirs else []
        if mine is None or ref is None:
            return False
        return check_rules.epochs_a_refusal_may_add(ref, mine, leo)

    def _existence_difference(self, name, have, golden, files, reqs, active=False) -> None:
        """A file one run has and the other does not (``active``: of the active segment)."""
        base, kind, marker = disk.segment_file(name)
        missing = have is None
        where = (
            "is missing (the reference's run has it)"
            if missing
            else "should not exist (the reference's run does not have it)"
        )
        category = (
            "golden_index"
            if kind in SEGMENT_INDEX_KINDS + ("txnindex",) and not marker
            else "golden_files"
        )
        choice: list[str] = []
        if kind in SEGMENT_INDEX_KINDS and not marker:
            closing = not missing and active and self.closed
            choice = [check_rules.CLOSE_INDEXES if closing else check_rules.LAZY_INDEXES]
        elif name.endswith("leader-epoch-checkpoint") and missing and not golden[name]["size"]:
            choice = [check_rules.EMPTY_EPOCH_FILE]
        elif kind == "txnindex" and not marker:
            if not missing and not have:
                choice = [check_rules.LAZY_TXN_INDEX]
            else:
                reqs = sorted({r for r in reqs if r != check_rules.LAZY_TXN_INDEX} | {"TXN-B-5"})
        elif kind in SEGMENT_INDEX_KINDS + ("txnindex",) and marker == ".deleted":
            log = f"{name.rpartition('/')[0]}/{base:020d}.log.deleted"
            if (log in golden) == (log in files):
                # both runs deleted the segment: only whether its index existed differs
                choice = [
                    check_rules.LAZY_INDEXES if kind != "txnindex" else check_rules.LAZY_TXN_INDEX
                ]
                if kind != "txnindex" and not missing:
                    choice = [check_rules.REPLACED_INDEXES]
            else:
                choice = [check_rules.DELETED_FILES]
        elif marker == ".deleted":
            choice = [check_rules.DELETED_FILES]  # deleted at once instead (RET-13)
        label = f".{kind}{marker}" if kind else name.rpartition("/")[2]
        self.fail(
            category, f"{name} {where}", reqs,
            cause=f"{label} file {'missing' if missing else 'not in the reference'}", choice=choice,
        )  # fmt: skip

    def _log_difference(self, name, have, view, want, theirs, reqs) -> None:
        """A .log that differs: the first batch field that differs, tagged with the rule that
        sets it, and where the bytes first differ."""
        follower = any((s.get("append") or {}).get("follower") for s in self.s.steps)
        leader = any(
            "append" in s and not (s["append"] or {}).get("follower") for s in self.s.steps
        )
        fields, text = _batch_difference(view, want["decoded"])
        rules = (fields and check_rules.log_field_rules(fields, follower, leader)) or reqs
        where = f"; {bytes_difference(have, theirs)}" if theirs is not None else ""
        self.fail(
            "golden_log", f"{name}: {text}{where}", rules,
            cause=f".log: {'batch ' + ', '.join(fields) if fields else 'batches'} differ from the reference's",
        )  # fmt: skip

    def _text_difference(self, name, fixed, have, want, theirs, reqs) -> None:
        """A checkpoint or other text file that differs: both sides, faithfully. A
        leader-epoch-checkpoint with the reference's entries written otherwise breaks only
        its format rule."""
        if theirs is None:  # no golden bytes at hand: the decoded lines, ends unknown
            theirs = "\n".join(want["decoded"].get("lines", [])).encode()
        cause = f"{fixed}: differs from the reference's"
        if fixed == "leader-epoch-checkpoint":
            mine_entries, ref_entries = _epoch_entries(have), _epoch_entries(theirs)
            if mine_entries is not None and mine_entries == ref_entries:
                reqs, cause = check_rules.EPOCH_FORMAT, f"{fixed}: format (the same entries)"
            else:
                cause = f"{fixed}: entries differ from the reference's"
        elif fixed in check_rules.TEXT_FILE_RULES:
            reqs = check_rules.TEXT_FILE_RULES[fixed]
        self.fail("golden_files", f"{name}: {text_difference(have, theirs)}", reqs, cause=cause)

    def _file_reqs(self, fixed: str, kind: str | None, marker: str) -> list[str]:
        snapshot_reqs = [r for r in self.s.requirements if r.startswith("SNAP-B-")]
        if kind == "snapshot" and marker == ".deleted":
            return sorted({"SNAP-B-8", *snapshot_reqs})
        if kind == "snapshot":
            recovered = any("crash" in s or "damage" in s for s in self.s.steps)
            return sorted({"SNAP-B-1", *(["SNAP-B-2"] if recovered else []), *snapshot_reqs})
        if marker == ".deleted":
            return ["RET-13", "RET-14"]
        if kind in SEGMENT_INDEX_KINDS:
            return [check_rules.LAZY_INDEXES]
        if kind == "txnindex":
            txn = (r for r in self.s.requirements if r.startswith("TXN-B-"))
            return sorted({check_rules.LAZY_TXN_INDEX, *txn})
        if fixed in ROOT_CHECKPOINTS:
            return ROOT_CHECKPOINTS[fixed]
        if fixed == "leader-epoch-checkpoint":
            return sorted(set(self.s.requirements) | {"CKPT-B-4"})
        if fixed == "partition.metadata":
            return ["CKPT-B-8"]
        return list(self.s.requirements)


def _aborted(value):
    """aborted_transactions as sorted [producer_id, first_offset] pairs (READ-22 leaves the
    order open); anything else as it is."""
    if not isinstance(value, list):
        return value
    try:
        return sorted([t["producer_id"], t["first_offset"]] for t in value)
    except (TypeError, KeyError):
        return value


def _same_lines_any_order(view: dict, want: dict) -> bool:
    """An offset checkpoint's version and count lines equal, and its entry lines the same set."""
    mine, ref = view.get("lines"), want.get("lines")
    return (
        mine is not None and ref is not None and mine[:2] == ref[:2] and sorted(mine) == sorted(ref)
    )


def _same_entries(view: dict, want: dict) -> bool:
    """Two decoded producer snapshots hold the same entries, in any order."""
    if "entries" not in view or "entries" not in want:
        return False
    return sorted(view["entries"]) == sorted(want["entries"])


def _only_epochs_added(before: tuple[dict, dict | None], after: tuple[dict, dict | None]) -> bool:
    """A refused append whose one change is leader epoch entries APPEND-27 allows."""
    (files_before, state), (files_after, state_after) = before, after
    changed = [
        k for k in set(files_before) | set(files_after) if files_before.get(k) != files_after.get(k)
    ]
    if state is None or state != state_after or len(changed) != 1:
        return False
    (name,) = changed
    if not name.endswith("leader-epoch-checkpoint") or name not in files_after:
        return False
    old = _epoch_entries(files_before[name]) if files_before.get(name) else []  # CKPT-B-1
    new = _epoch_entries(files_after[name])
    if old is None or new is None:
        return False
    return check_rules.epochs_a_refusal_may_add(old, new, state["log_end_offset"])


def _epoch_entries(data: bytes) -> list[list[int]] | None:
    from reference_impl.formats.checkpoints import read_leader_epoch_checkpoint

    try:
        return [[e.epoch, e.start_offset] for e in read_leader_epoch_checkpoint(data)]
    except (KafkaLogError, ValueError):
        return None


def _batch_difference(view: dict, want: dict) -> tuple[list[str], str]:
    """The batch fields that first differ between two decoded .log views (empty when the
    batches differ in number or only in their tail), and the difference in words."""
    have_b, want_b = view.get("batches", []), want.get("batches", [])
    for i, (h, w) in enumerate(zip(have_b, want_b, strict=False)):
        if h != w:
            keys = [k for k in sorted(set(h) | set(w)) if h.get(k) != w.get(k)]
            shown = ", ".join(
                f"{k} {show(h.get(k))} (the reference's {show(w.get(k))})" for k in keys
            )
            return keys, f"batch {i} at byte {h.get('position')}: {shown}"
    if len(have_b) != len(want_b):
        return [], f"{len(have_b)} batches, the reference's {len(want_b)}"
    return [], f"{view['size']} bytes, the reference's {want['size']} (after the batches)"


def apply_damage(
    root: Path, pdir: Path, damage: dict, now_ms: int = 0, anchor: Path | None = None
) -> None:
    """One damage operation of a scenario (schema: #/$defs/damage). Only regular files
    inside ``anchor`` (the scenario's directory; ``root``'s parent by default) are read or
    written, never through a link (scratch.py): anything else raises scratch.UnsafeFile."""
    anchor = root.parent if anchor is None else anchor

    def resolve(name: str) -> Path:
        return root / name[3:] if name.startswith("../") else pdir / disk.expand_name(name)

    path = resolve(damage["file"])
    if damage.get("delete"):
        scratch.unlink(path, anchor)
        return
    if damage.get("make_dir"):
        scratch.make_dirs(path, anchor)
        return
    if (
        "write_hex" in damage
        or "write_text" in damage
        or "write_batches" in damage
        or "copy_from" in damage
    ):
        if "write_hex" in damage:
            data = bytes.fromhex(damage["write_hex"])
        elif "write_text" in damage:
            data = damage["write_text"].encode()
        elif "copy_from" in damage:
            data = scratch.read_bytes(resolve(damage["copy_from"]), anchor)
        else:
            data = b"".join(build_all(damage["write_batches"], now_ms))
        scratch.write_bytes(path, anchor, data)
        return
    data = bytearray(scratch.read_bytes(path, anchor))

    def at(position: int) -> int:
        found = position if position >= 0 else len(data) + position
        if not 0 <= found < len(data):
            raise StepError(
                f"{describe_damage(damage)}, but {disk.expand_name(damage['file'])} holds only {len(data)} bytes",
                "damage of a byte beyond the end of a file",
            )
        return found

    if "truncate_to" in damage:
        cut = damage["truncate_to"]
        del data[(cut if cut >= 0 else at(cut)) :]
    elif "flip_bit" in damage:
        data[at(damage["flip_bit"]["at"])] ^= 1 << damage["flip_bit"].get("bit", 0)
    elif "zero" in damage:
        start = at(damage["zero"]["at"])
        end = min(len(data), start + damage["zero"]["length"])
        data[start:end] = bytes(end - start)
    elif "append_hex" in damage:
        data += bytes.fromhex(damage["append_hex"])
    elif "append_zeros" in damage:
        data += bytes(damage["append_zeros"])
    scratch.write_bytes(path, anchor, bytes(data))


class HarnessError(Exception):
    """The harness failed on its own (a bug in klogspec, not in the testee): the run stops
    and ``klogspec conformance`` exits 2."""

    def __init__(self, scenario: str, step: int | None, operation: str | None, exc: BaseException):
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        at = f" at {Path(frame.filename).name}:{frame.lineno} in {frame.name}" if frame else ""
        where = "" if step is None else f" step {step + 1} {operation or ''}".rstrip()
        super().__init__(
            f"harness error in {scenario}{where}: {type(exc).__name__}: {exc}{at} "
            "(a bug in klogspec, not in the implementation under test)"
        )


class Runner:
    """Runs scenarios on one driver; ``goldens`` maps a scenario ID to its manifest entry."""

    def __init__(
        self,
        driver: Driver,
        goldens: dict | None = None,
        keep_files: bool = False,
        workdir: str | None = None,
        cross_loader: CrossLoader | None = None,
    ):
        self.driver = driver
        self.goldens = goldens
        self.cross_loader = cross_loader  # --cross-load: a second testee loads each directory
        self.keep_files = keep_files
        self.workdir = Path(tempfile.mkdtemp(prefix="klogspec-", dir=workdir or fast_tmp()))
        self._features: set[str] | None = None
        self._hello_failure: TesteeFailure | None = None

    def features(self) -> set[str]:
        if self._features is None:
            self._features = self.driver.features
        return self._features

    def run(self, scenario: Scenario) -> Result:
        started = time.perf_counter()
        try:
            features = self.features()
        except TesteeFailure as exc:
            failure = Failure(exc.kind, f"hello: {exc.message}", list(scenario.requirements))
            elapsed = time.perf_counter() - started
            return Result(scenario, "failed", [failure], duration_s=elapsed, stopped_at=-1)
        missing = sorted(scenario.needs - features)
        if missing:
            return Result(
                scenario,
                "skipped",
                skip_reason=f"needs {', '.join(missing)} (not claimed in hello)",
            )
        workdir = self.workdir / scenario.id
        shutil.rmtree(workdir, ignore_errors=True)
        golden = None if self.goldens is None else self.goldens.get(scenario.id)
        run = Run(scenario, self.driver, workdir, golden, features)
        self.driver.context = scenario.id
        try:
            run.run()
        except TesteeFailure as exc:
            detail = (
                f" [{printable(exc.detail, MAX_TAIL, 'end', lines=True)}]" if exc.detail else ""
            )
            step = (
                run.s.steps[run.step_index]
                if run.step_index is not None and run.step_index >= 0
                else {}
            )
            run.fail(exc.kind, exc.message + detail, run.reqs(step), cause=exc.cause)
        except Exception as exc:  # noqa: BLE001 - the harness's own bug, never the testee's
            raise HarnessError(scenario.id, run.step_index, run.operation, exc) from exc
        finally:
            self.driver.end_scenario(run.now)
        if self.cross_loader is not None:
            self.cross_loader.check(run)
        result = Result(
            scenario,
            "failed" if run.failures else "passed",
            run.failures,
            duration_s=time.perf_counter() - started,
            responses=run.responses,
            corrupt_files=run.corrupt_files,
            closed=run.steps_closed,
            epilogue=run.epilogue,
            stopped_at=None if run.steps_done else _step_number(run.step_index),
        )
        if self.keep_files:
            result.final_files = (
                run.final_files if run.final_files is not None else _kept_files(run)
            )
        shutil.rmtree(workdir, ignore_errors=True)
        return result

    def close(self) -> None:
        self.driver.shutdown()
        if self.cross_loader is not None:
            self.cross_loader.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _step_number(step_index: int | None) -> int:
    """Failure.step's number of a step index (-1, the scenario's own open, is step 0)."""
    return 0 if step_index is None else step_index + 1


def _kept_files(run: Run) -> dict[str, bytes]:
    """The files a run left (``keep_files``); none when the testee left something the
    harness does not open (its test has failed for it)."""
    try:
        return disk.snapshot(run.root, run.anchor)
    except (scratch.UnsafeFile, OSError):
        return {}
