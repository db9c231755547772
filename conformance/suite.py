"""Run the suite: scenarios x one implementation, judged against expected failures.

``run_suite`` is what ``klogspec conformance`` and the mutant tests call; the pytest
plugin runs the same ``Runner`` one scenario per test.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import expected as xf
from . import milestones
from .crossload import CrossLoader
from .goldens import load_manifest_entries
from .results import Result
from .runner import Runner
from .scenarios import Scenario, load_all, load_requirements
from .transport import DEFAULT_TIMEOUT_S, CannotStart, ImplSpec, TesteeFailure

FAILED_STATUSES = ("failed", "xpass", "xfail-mismatch", "xskip")


@dataclass
class TestOutcome:
    result: Result
    status: str  # passed failed skipped xfail xpass xfail-mismatch xskip
    note: str | None = None

    __test__ = False

    @property
    def id(self) -> str:
        return self.result.scenario.id

    @property
    def failure_level(self) -> str | None:
        """MUST or SHOULD for a failed test; xpass and other list violations count as MUST."""
        if self.status == "failed":
            return self.result.level
        if self.status in ("xpass", "xfail-mismatch", "xskip"):
            return "MUST"
        return None


@dataclass
class SuiteResult:
    impl: ImplSpec
    hello: dict | None
    outcomes: list[TestOutcome] = field(default_factory=list)
    list_problems: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    def count(self, *statuses: str) -> int:
        return sum(1 for o in self.outcomes if o.status in statuses)

    @property
    def summary_line(self) -> str:
        return (
            f"{self.count('passed')} passed, {self.count(*FAILED_STATUSES)} failed, "
            f"{self.count('skipped')} skipped, {self.count('xfail')} expected failures"
        )

    @property
    def must_failures(self) -> list[TestOutcome]:
        return [o for o in self.outcomes if o.failure_level == "MUST"]

    @property
    def should_failures(self) -> list[TestOutcome]:
        return [o for o in self.outcomes if o.failure_level == "SHOULD"]

    @property
    def ok(self) -> bool:
        return not self.must_failures and not self.list_problems


def select(patterns: Iterable[str] | None) -> tuple[list[Scenario], list[str]]:
    """Scenarios whose ID equals, or matches as a glob, one of ``patterns`` (all when none),
    ``milestone:N`` standing for milestones 1 to N (milestones.py); and the patterns that
    matched nothing."""
    scenarios = list(load_all())
    patterns = [p for pattern in patterns or () for p in pattern.split(",") if p]
    if not patterns:
        return scenarios, []
    chosen, unknown = [], []
    for pattern in patterns:
        number = milestones.parse(pattern)  # ValueError for a milestone that is not one
        if number is not None:
            chosen += milestones.up_to(number)
            continue
        matched = [s for s in scenarios if s.id == pattern or fnmatch.fnmatchcase(s.id, pattern)]
        if not matched:
            unknown.append(pattern)
        chosen += matched
    seen: set[str] = set()
    return [s for s in chosen if not (s.id in seen or seen.add(s.id))], unknown


def run_suite(
    impl: ImplSpec,
    scenarios: list[Scenario] | None = None,
    expected: dict[str, xf.Expectation] | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    goldens: bool = True,
    workdir: str | None = None,
    on_result: Callable[[TestOutcome], None] | None = None,
    trace=None,
    cross_load: ImplSpec | None = None,
) -> SuiteResult:
    """Every scenario on one implementation. Raises CannotStart when the implementation
    cannot be started or does not answer its first ``hello``, and runner.HarnessError when
    the harness fails on its own; ``trace`` (a text file) receives every request and
    response; ``cross_load``: a second implementation that loads every directory the first
    leaves (crossload.py)."""
    scenarios = list(load_all()) if scenarios is None else scenarios
    expected = expected or {}
    started = time.perf_counter()
    driver = impl.driver(timeout)
    driver.trace = trace
    runner = Runner(
        driver,
        load_manifest_entries() if goldens else None,
        workdir=workdir,
        cross_loader=None if cross_load is None else CrossLoader(cross_load, timeout),
    )
    try:
        try:
            hello = runner.driver.hello(scenarios[0].start_ms if scenarios else 0)
        except TesteeFailure as exc:
            stderr = exc.detail if impl.transport == "subprocess" else ""
            raise CannotStart(impl.label, f"{exc.kind}: {exc.message}", stderr) from None
        suite = SuiteResult(impl, hello)
        for scenario in scenarios:
            result = runner.run(scenario)
            status, note = xf.judge(result.status, result.category, expected.get(scenario.id))
            outcome = TestOutcome(result, status, note)
            suite.outcomes.append(outcome)
            if on_result is not None:
                on_result(outcome)
    finally:
        runner.close()
    known = {s.id for s in load_all()}
    suite.list_problems = [
        f"{e.test_id} (line {e.line}): no such test"
        for e in expected.values()
        if e.test_id not in known
    ]
    suite.duration_s = time.perf_counter() - started
    return suite


def requirement_rows(suite: SuiteResult) -> list[dict]:
    """One row per requirement the run's scenarios cite or a failure names: how its
    scenarios went. A scenario counts under every rule it cites or failed; a failed rule
    is ``fail`` when some failure naming it is MUST, else ``recommended`` (a failure whose
    expectation rests on a SHOULD choice is SHOULD whatever the rules it names). A rule is
    ``passed`` only where it was judged: a scenario that stopped at an earlier step (its
    open failed, the testee crashed) never reached the steps citing it, nor its end
    (Result.judged), and counts as ``not_judged`` there (issue 20 §5)."""
    levels = load_requirements()
    rows: dict[str, dict] = {}
    for outcome in suite.outcomes:
        failed = set(outcome.result.failed_requirements)
        must = {r for f in outcome.result.failures if f.level == "MUST" for r in f.requirements}
        for req, judged in _cited(outcome.result).items():
            row = rows.setdefault(
                req,
                {"id": req, "level": levels.get(req, {}).get("level", "?"), "scenarios": 0,
                 "passed": 0, "failed": 0, "skipped": 0, "expected_failures": 0,
                 "not_judged": 0, "must_failed": False},
            )  # fmt: skip
            row["scenarios"] += 1
            if outcome.status == "skipped" or outcome.status == "xskip":
                row["skipped"] += 1
            elif outcome.status == "xfail":
                row["expected_failures"] += 1
            elif req in failed:
                row["failed"] += 1
                row["must_failed"] |= req in must
            elif judged:
                row["passed"] += 1
            else:
                row["not_judged"] += 1
    for row in rows.values():
        row["status"] = _row_status(row, row.pop("must_failed"))
    return [rows[k] for k in sorted(rows, key=_req_key)]


def _cited(result: Result) -> dict[str, bool]:
    """Every rule a result cites or failed -> whether the run reached a place citing it:
    the scenario's own rules at its end, a step's ``reqs`` at that step."""
    s = result.scenario
    judged = dict.fromkeys(s.requirements, result.judged(None))
    for number, step in enumerate(s.steps, 1):
        for req in step.get("reqs", ()):
            judged[req] = judged.get(req, False) or result.judged(number)
    for req in result.failed_requirements:
        judged[req] = True
    return judged


def _row_status(row: dict, must_failed: bool) -> str:
    if row["failed"]:
        return "fail" if must_failed else "recommended"
    for key, status in (("passed", "pass"), ("expected_failures", "xfail"), ("not_judged", "not judged")):  # fmt: skip
        if row[key]:
            return status
    return "skipped"


def common_causes(suite: SuiteResult, least: int = 2) -> list[dict]:
    """Root causes shared by failures of ``least`` or more tests, most tests first: the
    failures' ``cause`` (a phrase without numbers), level and rules."""
    groups: dict[tuple, dict] = {}
    for outcome in suite.outcomes:
        if outcome.status not in FAILED_STATUSES + ("xfail",):
            continue
        for f in outcome.result.failures:
            key = (f.cause, f.level, tuple(f.requirements))
            group = groups.setdefault(
                key,
                {"cause": f.cause, "level": f.level, "requirements": list(f.requirements),
                 "failures": 0, "tests": []},
            )  # fmt: skip
            group["failures"] += 1
            if outcome.id not in group["tests"]:
                group["tests"].append(outcome.id)
    shared = [g for g in groups.values() if len(g["tests"]) >= least]
    return sorted(shared, key=lambda g: (-len(g["tests"]), -g["failures"], g["cause"]))


def _req_key(req: str) -> tuple:
    prefix, _, number = req.rpartition("-")
    return (prefix, int(number) if number.isdigit() else 0)
