"""The epilogue: every scenario ends closed, compared, reopened and read back.

Bytes a log writes only when it closes (trimmed indexes, the final time-index entry, the
checkpoints, the clean-shutdown marker, the producer snapshot at the LEO) are invisible
to a scenario that ends with the log open, and so is what a clean load makes of them.
After a scenario's last step the harness therefore runs, on the same testee:

1. ``close``, when the steps left the log open; then every file of the
   log directory is compared with the reference's after its own close (the goldens'
   ``epilogue.files``), as the final directory is (file_comparison.py: byte for
   byte where the spec fixes the bytes, by entries where it leaves room, a feature's
   files only when it is claimed), and checked against the invariants of a closed log
   (INDEX-4, INDEX-13 to INDEX-17, FLUSH-9);
2. ``open`` with the configuration and topic ID of the last open: a clean load (LOAD-1).
   Its state is compared with the reference's: log start offset (LOAD-18), LEO
   (LOAD-24), recovery point (LOAD-4, from the checkpoint written at close, CKPT-B-5),
   segments and their sizes (LOAD-11, LOAD-17), the last stable offset (SNAP-B-2, only
   for a testee claiming ``transaction_index`` and ``producer_snapshots``: without
   snapshots a clean load knows no open transaction, SNAP-B-3);
3. ``read`` from the log start offset until the LEO (one segment per read, as READ-3
   allows, ``min_one_message`` so every read makes progress): the bytes must be the
   reference's, since a cleanly closed segment keeps every byte of its ``.log`` (LOAD-17);
4. ``close`` again, and the invariants of a closed log once more.

The epilogue applies when the steps end with the log open or closed; a scenario whose
log never opened, or whose last open failed, has nothing to close. A scenario opts out
only with a written reason (``epilogue: {skip: ...}`` in its YAML, schema-checked).
Failures carry the step ``None`` and a message starting ``epilogue``.

``klogspec conformance --cross-load`` (crossload.py) then hands the closed directory to
a second implementation and compares what it loads with what phase 2 and 3 gave.
"""

from __future__ import annotations

import base64
import contextlib

from reference_impl.errors import KafkaLogError
from reference_impl.records import iter_batches

from . import disk, same_records, scratch
from .diagnostics import printable
from .file_comparison import FileComparison
from .golden_files import reference_file
from .responses import ResponseChecks
from .results import EpilogueRecord, FullRead
from .run_state import RunState
from .transport import TesteeFailure

READ_MAX_BYTES = 1 << 20
MAX_READS = 10_000  # a testee whose reads never reach the LEO stops here
CLOSE_REQS = ["FLUSH-7", "FLUSH-10"]
LOAD_REQS = ["LOAD-1", "LOAD-17"]
STATE_REQS = {  # the state fields a clean load must reproduce, and the rules that fix them
    "log_start_offset": ["LOAD-18", "CKPT-B-6"],
    "log_end_offset": ["LOAD-24"],
    "recovery_point": ["LOAD-4", "CKPT-B-5"],
    "segments": ["LOAD-11", "LOAD-17"],
    "last_stable_offset": ["SNAP-B-2", "TXN-B-7"],
}
READ_REQS = ["LOAD-17", "READ-3"]
LSO_FEATURES = {"transaction_index", "producer_snapshots"}  # a reload's LSO is then fixed


class Epilogue:
    """The epilogue of the module docstring, on the run's own testee and directory
    (``state``); it checks the reopened state as the steps' responses are checked
    (``checks``) and the files after its close as the final ones (``comparison``)."""

    def __init__(self, state: RunState, checks: ResponseChecks, comparison: FileComparison) -> None:
        self.state = state
        self.checks = checks
        self.comparison = comparison
        self.record: EpilogueRecord | None = None  # what it saw; None: it did not apply

    def applies(self) -> bool:
        """The steps left a log to close or reopen: a scenario whose log never opened, or
        whose last open was refused (a directory that must not load), leaves none."""
        state = self.state
        opens = [r for r in state.responses if r["op"] == "open"]
        return (state.log_open or state.closed) and not (opens and not opens[-1]["ok"])

    def run(self) -> None:
        """Phases 1 to 4 of the module docstring, on the run's testee and directory."""
        skip = self.state.scenario.epilogue_skip
        if skip is not None:
            self.record = EpilogueRecord(skipped=skip)
            return
        if not self.applies():
            return
        self.record = EpilogueRecord()
        try:
            self._phases(self.record)
        except TesteeFailure as exc:  # the runner reports it; say where it happened
            exc.message = f"epilogue: {exc.message}"
            raise

    def _phases(self, record: EpilogueRecord) -> None:
        state = self.state
        golden = state.golden.get("epilogue") if state.golden is not None else None
        state.step_index = None
        if state.log_open:
            if not self._close("close"):
                return
            record.files = self._snapshot("after close")
            if record.files is None:
                return
            self._check_closed("after close", record.files, golden)
        response = self._request("open", state.open_wire)
        if not response.ok:
            self._fail(
                f"unexpected_error:{response.code}",
                "reopen",
                f"a clean load was refused with {response.code} ({printable(response.message)})",
                LOAD_REQS,
                f"a clean load was refused with {response.code}",
            )
            return
        state.log_open, state.closed = True, False
        record.state = response.result
        self.checks.check_state_rules(response.result)
        self._compare_state(record, golden)
        record.read = full_read(state.driver, record.state, state.now)
        if record.read.problem is not None:
            self._fail(
                "wrong_result",
                "read from the log start offset",
                record.read.problem,
                READ_REQS,
                "the read failed",
            )
        self._compare_read("read from the log start offset", record.read, golden)
        if not self._close("second close"):
            return
        files = self._snapshot("after the second close")
        if files is None:
            return
        self._check_closed("after the second close", files, None)
        record.finished = True

    def _request(self, op: str, args: dict):
        """A request of the epilogue: sent as the steps' are, but not kept among the responses
        the goldens record (a full read would put every .log into the manifest)."""
        return self.state.driver.request(op, args, self.state.now)

    def _snapshot(self, phase: str) -> dict[str, bytes] | None:
        """Every file of the log directory, or None (a failure) when the testee left
        something the harness cannot read (a directory where a file was, no permission)."""
        try:
            return disk.snapshot(self.state.root, self.state.anchor)
        except (OSError, scratch.UnsafeFile) as exc:
            self._fail(
                "files",
                phase,
                f"the log directory cannot be read: {exc}",
                CLOSE_REQS,
                "the log directory cannot be read",
            )
            return None

    def _fail(
        self, category: str, phase: str, message: str, reqs: list[str], cause: str | None = None
    ) -> None:
        """A failure of the epilogue; ``cause`` (without numbers) groups it with the failures of
        other tests that share its root cause."""
        self.state.fail(
            category,
            f"epilogue {phase}: {message}",
            reqs,
            cause=f"epilogue {phase}: {cause or category}",
        )

    def _close(self, phase: str) -> bool:
        response = self._request("close", {})
        if not response.ok:
            self._fail(f"unexpected_error:{response.code}", phase, f"close was refused with {response.code} ({printable(response.message)})", CLOSE_REQS, f"close was refused with {response.code}")  # fmt: skip
            return False
        self.state.log_open, self.state.closed = False, True
        return True

    def _check_closed(self, phase: str, files: dict[str, bytes], golden: dict | None) -> None:
        """The invariants of a closed log, and (``golden``) the files of the reference's."""
        state = self.state
        visible = disk.visible(files, state.features)
        first = len(state.failures)
        state.check_invariants(visible)
        if golden is not None and "files" in golden:
            self.comparison.compare_files(visible, golden_files=golden["files"])
        for failure in state.failures[first:]:
            failure.message = f"epilogue, {phase}: {failure.message}"
            # the cause stays: a file written wrong at close is the same root cause as the same
            # file written wrong at a step, and is summarised with it

    def _compare_state(self, record: EpilogueRecord, golden: dict | None) -> None:
        """The reopened state against the reference's. (Not against the state before the
        close: a clean load may move the LEO up to an empty active segment's base offset,
        LOAD-24, and the log start offset up to the first segment's, LOAD-18.)"""
        have = record.state
        if golden is not None and "state" in golden:
            for key, reqs in STATE_REQS.items():
                if key not in golden["state"] or key not in have:
                    continue
                if key == "last_stable_offset" and not LSO_FEATURES.issubset(self.state.features):
                    continue  # without snapshots a clean load knows no open transaction (SNAP-B-3)
                mine, ref = shown(key, have[key]), shown(key, golden["state"][key])
                if key == "segments" and self.state.recompressed:
                    mine, ref = [m[0] for m in mine], [r[0] for r in ref]  # sizes: COMPACT-28
                if mine != ref:
                    self._fail("golden_response", "reopen", f"{key} is {shown(key, have[key])}, the reference's clean load gives {shown(key, golden['state'][key])}", reqs, f"{key} differs from the reference's clean load")  # fmt: skip

    def _compare_read(self, phase: str, read: FullRead, golden: dict | None) -> None:
        if golden is None or "read" not in golden:
            return
        want, have = golden["read"], read.summary()
        if have["sha256"] != want["sha256"] and not self._same_records_read(read, want):
            self._fail("golden_log", phase, f"{describe_read(have)}; the reference's {describe_read(want)}", READ_REQS, "the bytes read differ from the reference's")  # fmt: skip

    def _same_records_read(self, read: FullRead, want: dict) -> bool:
        """COMPACT-28: after a cleaner rewrote compressed batches, the full read holds the
        records of the reference's live .log files from the read's first offset on."""
        state = self.state
        if not state.recompressed or want["first_offset"] is None:
            return False
        golden_files = state.golden.get("files", {})
        logs = sorted(
            (disk.segment_file(name)[0], name)
            for name in golden_files
            if name.startswith(state.scenario.partition + "/") and name.endswith(".log")
        )
        parts = [reference_file(state.scenario.id, n, golden_files[n]["sha256"]) for _, n in logs]
        if any(p is None for p in parts):
            return False
        theirs = b"".join(
            b.raw for b in iter_batches(b"".join(parts)) if b.last_offset >= want["first_offset"]
        )
        return same_records.same_records(read.data, theirs)


def full_read(driver, state: dict, now_ms: int) -> FullRead:
    """Read from ``state``'s log start offset up to its LEO, one request per segment."""
    found = FullRead()
    start, end = state["log_start_offset"], state["log_end_offset"]
    chunks = []
    while start < end and found.reads < MAX_READS:
        wire = {"start_offset": start, "max_bytes": READ_MAX_BYTES, "max_offset": None, "min_one_message": True}  # fmt: skip
        response = driver.request("read", wire, now_ms)
        found.reads += 1
        if not response.ok:
            found.problem = f"read from offset {start} was refused with {response.code}"
            break
        data = base64.b64decode(response.result["data"])
        scanner = iter_batches(data)
        batches = []
        with contextlib.suppress(KafkaLogError):  # a tail that does not decode stays (LOAD-17)
            for batch in scanner:
                batches.append([batch.base_offset, batch.last_offset])
        # a read cut by max_bytes ends in part of a batch, which the next read returns whole
        chunks.append(data[: scanner.valid_bytes] if len(data) >= READ_MAX_BYTES else data)
        if not batches:
            break  # nothing from here to the LEO (an empty active segment after a gap)
        if batches[-1][1] < start:
            found.problem = f"read from offset {start} returned only batches below it"
            break
        found.batches += batches
        start = batches[-1][1] + 1
    found.data = b"".join(chunks)
    return found


def shown(key: str, value):
    """A state field as messages show it (segments as [base offset, size] pairs)."""
    if key == "segments" and isinstance(value, list):
        return [[s.get("base_offset"), s.get("size_bytes")] for s in value]
    return value


def describe_read(summary: dict) -> str:
    if not summary["batches"]:
        return "no batch"
    return (
        f"{summary['batches']} batches, offsets {summary['first_offset']} to "
        f"{summary['last_offset']}, {summary['size']} bytes (sha256 {summary['sha256'][:12]})"
    )
