"""Run one scenario against one testee and judge what it did.

Each step is sent to the testee (``Driver``) or done by the harness (clock, damage,
mtimes, file inspection); its response is checked against the step's ``expect``. At
the end the testee's directory is checked against the index invariants and, when
goldens are given, against the reference's run of the same scenario: every response,
and the files, byte for byte where the spec fixes the bytes (``.log`` files and the
checkpoint files) and by their entries where it does not (index files: placement and
preallocation are SHOULD, index.md; producer snapshots: their entry order is open,
SNAP-8).

Files of an optional feature the testee does not claim (``.snapshot`` files without
``producer_snapshots``) are left out of every comparison, and result fields of one
(``last_stable_offset``, ``aborted_transactions`` without ``transaction_index``) out of
the golden comparison of responses: a testee neither fails for them nor passes a
scenario about them (such scenarios need the feature and are skipped).

A failure carries a category (how it failed) and the requirement IDs it breaks (the
step's ``reqs``, else the scenario's, or the specific rule of an invariant). A testee
that crashes, hangs or breaks the protocol ends the scenario with that category.
"""

from __future__ import annotations

import base64
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

from . import disk
from .batches import build_all
from .scenarios import LEVEL_ORDER, Scenario, load_requirements
from .transport import Driver, Response, TesteeFailure

DEFAULT_MAX_BYTES = 1 << 20
SEGMENT_INDEX_KINDS = ("index", "timeindex")
ROOT_CHECKPOINTS = {  # log-directory files a log writes when it chooses, until close
    "recovery-point-offset-checkpoint": ["CKPT-B-5"],
    "log-start-offset-checkpoint": ["CKPT-B-6"],
    ".kafka_cleanshutdown": ["CLEAN-1", "CLEAN-3"],
}
OP_KEYS = (
    "open", "append", "read", "roll", "flush", "truncate_to", "truncate_fully_and_start_at",
    "delete_segments_before", "delete_old_segments", "fetch_offset_by_timestamp", "state",
    "close", "crash",
)  # fmt: skip
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


@dataclass
class Failure:
    category: str
    message: str
    requirements: list[str]
    step: int | None = None

    @property
    def level(self) -> str:
        return level_of(self.requirements)

    def to_data(self) -> dict:
        return {
            "category": self.category,
            "message": self.message,
            "requirements": self.requirements,
            "level": self.level,
            "step": self.step,
        }


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


class _Abort(Exception):
    pass


class Run:
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
        parsed = parse_partition_dir_name(scenario.partition)
        self.topic, self.partition_number = parsed.topic, parsed.partition

    # --- helpers ---
    def fail(self, category: str, message: str, reqs: list[str] | None = None) -> None:
        self.failures.append(
            Failure(category, message, sorted(reqs or self.s.requirements), self.step_index)
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
            self.step_index = -1
            self.do_open({}, {}, self.s.requirements)
        for i, step in enumerate(self.s.steps):
            self.step_index = i
            self.do_step(step)
        self.step_index = None
        self.final_checks()

    def do_step(self, step: dict) -> None:
        expect = step.get("expect") or {}
        reqs = self.reqs(step)
        if "clock" in step:
            self.now = step["clock"].get("set", self.now + step["clock"].get("advance", 0))
        elif "damage" in step:
            self.damaged = True
            for damage in step["damage"]:
                apply_damage(self.root, self.pdir, damage, self.now)
            if self.corrupt_files is None:
                self.corrupt_files = disk.snapshot(self.root)
        elif "set_mtime" in step:
            ns = step["set_mtime"]["ms"] * 1_000_000
            os.utime(self._path(step["set_mtime"]["file"]), ns=(ns, ns))
        elif "snapshot" in step:
            self.snapshots[step["snapshot"]] = self._files()
        elif "files" in step:
            for problem in disk.check_files(
                step["files"],
                self.root,
                self.s.partition,
                self.topic,
                self.partition_number,
                self.features,
            ):
                self.fail("files", problem, reqs)
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

    def _unchanged_since(self, name: str, reqs: list[str]) -> None:
        def kept(files: dict[str, bytes]) -> dict[str, bytes]:
            return {k: v for k, v in files.items() if not k.endswith(".deleted")}

        before, now = kept(self.snapshots.get(name, {})), kept(self._files())
        changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        if changed:
            self.fail("files", f"changed since snapshot {name}: {changed}", reqs)

    def _files(self) -> dict[str, bytes]:
        """Every file under the log directory this testee is judged on (disk.visible)."""
        return disk.visible(disk.snapshot(self.root), self.features)

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
        if wanted is not None:
            if response.ok:
                self.fail("missing_error", f"{op}: succeeded, expected {wanted}", reqs)
            elif response.code != wanted:
                self.fail(
                    "wrong_error", f"{op}: refused with {response.code}, expected {wanted}", reqs
                )
        elif not response.ok:
            self.fail(
                f"unexpected_error:{response.code}",
                f"{op}: refused with {response.code} ({response.message[:200]})",
                reqs,
            )
        else:
            for key, want in expect.items():
                if key in ("unchanged", "error"):
                    continue
                have = self._actual(op, key, response.result)
                if key == "aborted_transactions" and isinstance(want, list):
                    want = sorted(want)  # in any order (READ-22)
                if have != want:
                    self.fail("wrong_result", f"{op}: {key} is {have}, expected {want}", reqs)
        if response.ok and op in ("open", "state"):
            self._state_rules(response.result)
        if before is not None:
            after = self._observe()
            if after != before:
                changed = sorted(
                    k for k in set(before[0]) | set(after[0]) if before[0].get(k) != after[0].get(k)
                )
                what = f"files {changed}" if changed else f"state {before[1]} -> {after[1]}"
                self.fail(
                    "changed",
                    f"{op}: a refused operation changed {what}",
                    sorted(set(reqs) | {"MODEL-11"}),
                )
        if self.golden is not None and len(self.failures) == problems_before:
            self._compare_response(op, response, reqs)
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
            return _aborted(result.get(key, "<absent>"))
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
            return [r.offset for b in batches for r in b.records()]
        return result.get(key, "<absent>")

    def _state_rules(self, state: dict) -> None:
        if state["recovery_point"] > state["log_end_offset"]:
            self.fail(
                "invariant",
                f"recovery point {state['recovery_point']} above the LEO {state['log_end_offset']}",
                ["MODEL-4"],
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
            )
        bases = [s["base_offset"] for s in state["segments"]]
        if bases != sorted(set(bases)):
            self.fail(
                "invariant", f"segment base offsets {bases} do not strictly increase", ["MODEL-1"]
            )
        limit = self.config.get("segment_bytes")
        if limit is not None and not self.damaged:
            for s in state["segments"]:
                if s["size_bytes"] > limit:
                    self.fail(
                        "invariant",
                        f"segment {s['base_offset']} holds {s['size_bytes']} bytes, above segment_bytes {limit}",
                        ["ROLL-21"],
                    )

    def _compare_response(self, op: str, response: Response, reqs: list[str]) -> None:
        index = len(self.responses) - 1
        golden = self.golden.get("responses", [])
        if index >= len(golden):
            return
        want, have = golden[index], self.responses[index]
        if want["op"] != op:
            return  # the scenario changed since the goldens were made
        if want["ok"] != have["ok"] or want.get("code") != have.get("code"):
            got = "success" if have["ok"] else have["code"]
            wanted = "success" if want["ok"] else want["code"]
            self.fail("golden_response", f"{op}: {got}, the reference gives {wanted}", reqs)
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
            if mine != value:
                self.fail(
                    "golden_response",
                    f"{op}: {key} is {_short(mine)}, the reference gives {_short(value)}",
                    sorted(set(reqs) | set(feature_reqs)),
                )

    # --- the end ---
    def final_checks(self) -> None:
        self.final_files = disk.snapshot(self.root)
        files = disk.visible(self.final_files, self.features)
        partition_files = {
            name.partition("/")[2]: data
            for name, data in files.items()
            if name.startswith(self.s.partition + "/")
        }
        if self.log_open or self.closed:
            for reqs, problem in disk.invariants(partition_files, self.config, self.closed):
                if self.damaged and ("wrong CRC" in problem or "unreadable" in problem):
                    continue  # the harness's own damage, in a segment recovery need not read
                self.fail("invariant", problem, reqs)
        if self.golden is not None:
            self._compare_files(files)

    def _compare_files(self, files: dict[str, bytes]) -> None:
        golden = self.golden.get("files", {})
        names = sorted(set(golden) | set(files))
        recovered = any("crash" in s or "damage" in s for s in self.s.steps)
        truncated = any(
            "truncate_to" in s or "truncate_fully_and_start_at" in s for s in self.s.steps
        )
        live = [disk.segment_file(n) for n in files if n.startswith(self.s.partition + "/")]
        active = max((b for b, k, m in live if k == "log" and not m), default=None)
        for name in names:
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
                where = "is missing" if have is None else "should not exist"
                category = (
                    "golden_index"
                    if kind in SEGMENT_INDEX_KINDS + ("txnindex",) and not marker
                    else "golden_files"
                )
                self.fail(
                    category,
                    f"{name} {where} (the reference's run {'has' if have is None else 'does not have'} it)",
                    reqs,
                )
                continue
            if hashlib.sha256(have).hexdigest() == want["sha256"]:
                continue
            view = disk.decode(name, have)
            if kind == "snapshot" and _same_entries(view, want["decoded"]):
                continue  # the same producers: SNAP-8 leaves their order open
            if kind in SEGMENT_INDEX_KINDS and self.log_open and base == active and truncated:
                continue  # past its in-memory entries an open index may hold stale bytes
            if kind in SEGMENT_INDEX_KINDS:
                if view["entries"] != want["decoded"]["entries"]:
                    placement = ["INDEX-8"] if recovered else ["INDEX-7"]
                    self.fail(
                        "golden_index",
                        f"{name}: entries {view['entries']}, the reference's {want['decoded']['entries']}",
                        placement,
                    )
                else:
                    self.fail(
                        "golden_index",
                        f"{name}: {len(have)} bytes, the reference's {want['size']} (same entries)",
                        ["INDEX-2"],
                    )
            elif kind == "log":
                self.fail(
                    "golden_log",
                    f"{name}: differs from the reference's: {_log_difference(view, want['decoded'])}",
                    reqs,
                )
            elif kind in ("snapshot", "txnindex"):
                mine = view.get("entries", view.get("error"))
                theirs = want["decoded"].get("entries", want["decoded"].get("error"))
                self.fail(
                    "golden_files",
                    f"{name}: entries {_short(mine)}, the reference's {_short(theirs)}",
                    reqs if kind == "txnindex" else sorted(set(reqs) | {"PSTATE-1"}),
                )
            else:
                shown = have.decode("utf-8", "replace")[:200]
                self.fail(
                    "golden_files",
                    f"{name}: {shown!r} differs from the reference's {chr(10).join(want['decoded'].get('lines', []))!r}",
                    reqs,
                )

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
            return ["ROLL-20"]
        if kind == "txnindex":
            return sorted({"INDEX-21", *(r for r in self.s.requirements if r.startswith("TXN-B-"))})
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


def _same_entries(view: dict, want: dict) -> bool:
    """Two decoded producer snapshots hold the same entries, in any order."""
    if "entries" not in view or "entries" not in want:
        return False
    return sorted(view["entries"]) == sorted(want["entries"])


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."


def _log_difference(view: dict, want: dict) -> str:
    have_b, want_b = view.get("batches", []), want.get("batches", [])
    for i, (h, w) in enumerate(zip(have_b, want_b, strict=False)):
        if h != w:
            diff = {
                k: (h.get(k), w.get(k)) for k in sorted(set(h) | set(w)) if h.get(k) != w.get(k)
            }
            return f"batch {i}: " + ", ".join(
                f"{k} {a} (reference {b})" for k, (a, b) in diff.items()
            )
    if len(have_b) != len(want_b):
        return f"{len(have_b)} batches, the reference's {len(want_b)}"
    return f"{view['size']} bytes, the reference's {want['size']} (tail)"


def apply_damage(root: Path, pdir: Path, damage: dict, now_ms: int = 0) -> None:
    """One damage operation of a scenario (schema: #/$defs/damage)."""

    def resolve(name: str) -> Path:
        return root / name[3:] if name.startswith("../") else pdir / disk.expand_name(name)

    path = resolve(damage["file"])
    if damage.get("delete"):
        path.unlink(missing_ok=True)
        return
    if damage.get("make_dir"):
        path.mkdir(parents=True, exist_ok=True)
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
            data = resolve(damage["copy_from"]).read_bytes()
        else:
            data = b"".join(build_all(damage["write_batches"], now_ms))
        path.write_bytes(data)
        return
    data = bytearray(path.read_bytes())

    def at(position: int) -> int:
        return position if position >= 0 else len(data) + position

    if "truncate_to" in damage:
        del data[at(damage["truncate_to"]) :]
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
    path.write_bytes(bytes(data))


class Runner:
    """Runs scenarios on one driver; ``goldens`` maps a scenario ID to its manifest entry."""

    def __init__(
        self,
        driver: Driver,
        goldens: dict | None = None,
        keep_files: bool = False,
        workdir: str | None = None,
    ):
        self.driver = driver
        self.goldens = goldens
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
            return Result(scenario, "failed", [failure], duration_s=time.perf_counter() - started)
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
        try:
            run.run()
        except TesteeFailure as exc:
            detail = f" [{exc.detail[-600:]}]" if exc.detail else ""
            step = (
                run.s.steps[run.step_index]
                if run.step_index is not None and run.step_index >= 0
                else {}
            )
            run.fail(exc.kind, exc.message + detail, run.reqs(step))
        finally:
            self.driver.end_scenario(run.now)
        result = Result(
            scenario,
            "failed" if run.failures else "passed",
            run.failures,
            duration_s=time.perf_counter() - started,
            responses=run.responses,
            corrupt_files=run.corrupt_files,
            closed=run.closed,
        )
        if self.keep_files:
            result.final_files = (
                run.final_files if run.final_files is not None else disk.snapshot(run.root)
            )
        shutil.rmtree(workdir, ignore_errors=True)
        return result

    def close(self) -> None:
        self.driver.shutdown()
        shutil.rmtree(self.workdir, ignore_errors=True)
