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

Where each part lives: ``Runner`` (here) runs one scenario and turns the run into a
``Result`` (results.py, with ``Failure`` and ``HarnessError``); ``Run`` (steps.py) does the
steps, the harness's own among them (damage.py), and the ``files`` steps (file_checks.py);
what the run knows is its ``RunState`` (run_state.py), which each part is given: the
response checks (responses.py), the segment invariants (index_invariants.py), the files
against the goldens (file_comparison.py) and the epilogue (epilogue.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from . import disk, scratch
from .crossload import CrossLoader
from .diagnostics import (
    MAX_TAIL,
    printable,
)
from .results import Failure, HarnessError, Result
from .scenarios import Scenario
from .steps import Run
from .transport import Driver, TesteeFailure


def fast_tmp() -> str | None:
    """Scratch space in memory when there is some (fsync is cheap there)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


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
        state = run.state
        self.driver.context = scenario.id
        try:
            run.run()
        except TesteeFailure as exc:
            detail = (
                f" [{printable(exc.detail, MAX_TAIL, 'end', lines=True)}]" if exc.detail else ""
            )
            step = (
                scenario.steps[state.step_index]
                if state.step_index is not None and state.step_index >= 0
                else {}
            )
            state.fail(exc.kind, exc.message + detail, state.step_reqs(step), cause=exc.cause)
        except Exception as exc:  # noqa: BLE001 - the harness's own bug, never the testee's
            raise HarnessError(scenario.id, state.step_index, state.operation, exc) from exc
        finally:
            self.driver.end_scenario(state.now)
        run.checks.settle_choices()
        if self.cross_loader is not None:
            self.cross_loader.check(state, run.epilogue.record)
        result = Result(
            scenario,
            "failed" if state.failures else "passed",
            state.failures,
            duration_s=time.perf_counter() - started,
            responses=state.responses,
            corrupt_files=run.corrupt_files,
            closed=run.steps_closed,
            epilogue=run.epilogue.record,
            stopped_at=None if run.steps_done else _step_number(state.step_index),
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
        return disk.snapshot(run.state.root, run.state.anchor)
    except (scratch.UnsafeFile, OSError):
        return {}
