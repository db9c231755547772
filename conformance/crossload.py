"""Cross-loading: can another implementation open the directory yours left?

``klogspec conformance --cross-load IMPL`` runs a second testee beside the one under
test. After each scenario, once the epilogue (epilogue.py) has closed the log, reopened
it, read it back from its log start offset and closed it again, the second testee
opens the same log directory with the same configuration and topic ID, at the same
clock, and must load the same log:

* the **log start offset** (LOAD-4, LOAD-18: the larger of the log-start-offset
  checkpoint and the first segment's base offset);
* the **log end offset** (LOAD-24: the last segment's next offset);
* the **segments**, base offset and size in bytes (LOAD-11, LOAD-17: a cleanly closed
  segment keeps every byte of its ``.log``);
* the **bytes of a read** from the log start offset to the LEO, one read per segment
  (READ-3), ``min_one_message`` on (LOAD-17: the same bytes).

They are compared with what the implementation under test reported when the epilogue
reopened its own directory, so a difference means the directory reads two ways: the
files say something the two loaders take differently. Nothing else is compared, and why:

* the recovery point: after a clean close it is the LEO by CKPT-B-5, and the epilogue
  already compares the checkpoint file byte for byte and the reloaded value with the
  reference's; a loader is not what writes it;
* the last stable offset: it comes from the producer snapshots, an optional feature
  (``producer_snapshots``); a directory written without them loads with no open
  transaction whatever was open (SNAP-B-3), and both answers are allowed;
* the files the second testee writes while it loads and closes (a snapshot at the LEO, a
  resized index): its own behaviour, judged when it is the one under test.

A scenario whose features the second testee does not claim is not cross-loaded (it may
not read such a directory at all); neither is one whose epilogue did not finish (the
failure is already the testee's) or was skipped. A difference is a failure of category
``cross_load`` naming both implementations and both values. Requests of the second
testee are not recorded among the scenario's responses.
"""

from __future__ import annotations

from .diagnostics import MAX_TAIL, printable
from .epilogue import describe_read, full_read, shown
from .results import EpilogueRecord
from .run_state import RunState
from .transport import DEFAULT_TIMEOUT_S, ImplSpec, TesteeFailure

CATEGORY = "cross_load"
COMPARED = {  # the state fields both loaders must agree on, and the rules that fix them
    "log_start_offset": ["LOAD-4", "LOAD-18"],
    "log_end_offset": ["LOAD-24"],
    "segments": ["LOAD-11", "LOAD-17"],
}
OPEN_REQS = ["LOAD-1", "LOAD-17"]
READ_REQS = ["LOAD-17", "READ-3"]


class CrossLoader:
    """The second testee, driven over its own transport for the whole run."""

    def __init__(self, spec: ImplSpec, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.spec = spec
        self.driver = spec.driver(timeout)
        self._features: set[str] | None = None

    @property
    def label(self) -> str:
        return self.spec.label

    def features(self) -> set[str]:
        if self._features is None:
            self._features = self.driver.features
        return self._features

    def check(self, run: RunState, record: EpilogueRecord | None) -> None:
        """Load the closed directory of ``run`` (its epilogue saw ``record``) with the
        second testee and compare."""
        if record is None or record.skipped is not None or not record.finished:
            return
        try:
            if run.scenario.needs - self.features():
                return
            self._load_and_compare(run, record)
        except TesteeFailure as exc:
            detail = (
                f" [{printable(exc.detail, MAX_TAIL, 'end', lines=True)}]" if exc.detail else ""
            )
            self._fail(
                run,
                f"{exc.kind}: {exc.message}{detail}",
                OPEN_REQS,
                f"the second testee {exc.kind}",
            )
        finally:
            self.driver.end_scenario(run.now)

    def close(self) -> None:
        self.driver.shutdown()

    # --- one scenario ---
    def _load_and_compare(self, run: RunState, record: EpilogueRecord) -> None:
        response = self.driver.request("open", dict(run.open_wire), run.now)
        if not response.ok:
            self._fail(run, f"open was refused with {response.code} ({printable(response.message)}); the implementation under test loads it", OPEN_REQS, f"open refused with {response.code}")  # fmt: skip
            return
        theirs, ours = response.result, record.state
        for key, reqs in COMPARED.items():
            if shown(key, theirs.get(key)) != shown(key, ours.get(key)):
                self._fail(run, f"{key} is {shown(key, theirs.get(key))} there, {shown(key, ours.get(key))} in the implementation under test's own reload", reqs, f"{key} differs")  # fmt: skip
        read = full_read(self.driver, theirs, run.now)
        if read.problem is not None:
            self._fail(run, read.problem, READ_REQS, "the read failed")
        elif read.summary()["sha256"] != record.read.summary()["sha256"]:
            self._fail(run, f"a read from the log start offset gives {describe_read(read.summary())} there, {describe_read(record.read.summary())} in the implementation under test", READ_REQS, "the bytes read differ")  # fmt: skip
        closed = self.driver.request("close", {}, run.now)
        if not closed.ok:
            self._fail(
                run,
                f"close was refused with {closed.code}",
                ["FLUSH-10"],
                f"close refused with {closed.code}",
            )

    def _fail(self, run: RunState, message: str, reqs: list[str], cause: str) -> None:
        run.fail(
            CATEGORY, f"cross-load by {self.label}: {message}", reqs, cause=f"cross-load: {cause}"
        )
