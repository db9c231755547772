"""What a run of one scenario found: its failures and its verdict (docs/conformance/results.md).

A ``Failure`` is one failed check: its category, the step and operation, the rules it is
about and the SHOULD choices its expectation rests on, from which its level follows. A
``Result`` is a scenario's verdict with its failures and what its epilogue saw
(``EpilogueRecord``, epilogue.py). ``HarnessError`` is the harness's own bug, never the
testee's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .golden_files import file_entries
from .scenarios import LEVEL_ORDER, Scenario, load_requirements


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
class FullRead:
    """What a read from the log start offset to the LEO returned: whole batches only."""

    data: bytes = b""
    batches: list[list[int]] = field(default_factory=list)  # [base offset, last offset]
    reads: int = 0
    problem: str | None = None

    def summary(self) -> dict:
        """The goldens' record of the read (the bytes themselves are the .log files')."""
        return {
            "sha256": hashlib.sha256(self.data).hexdigest(),
            "size": len(self.data),
            "batches": len(self.batches),
            "first_offset": self.batches[0][0] if self.batches else None,
            "last_offset": self.batches[-1][1] if self.batches else None,
        }


@dataclass
class EpilogueRecord:
    """What the epilogue saw: ``files`` after its close (None when the steps had closed
    the log), the reopened ``state``, and the full ``read``; or why it was ``skipped``."""

    skipped: str | None = None
    files: dict[str, bytes] | None = None
    state: dict | None = None
    read: FullRead | None = None
    finished: bool = False  # reopened, read and closed again without a refusal

    def to_golden(self) -> dict:
        if self.skipped is not None:
            return {"skipped": self.skipped}
        data: dict = {}
        if self.files is not None:
            data["files"] = file_entries(self.files)
        if self.state is not None:
            data["state"] = self.state
        if self.read is not None:
            data["read"] = self.read.summary()
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
