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
from .crossload import CrossLoader
from .goldens import load_manifest_entries
from .runner import Result, Runner
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
    """Scenarios whose ID equals, or matches as a glob, one of ``patterns`` (all when none);
    and the patterns that matched nothing."""
    scenarios = list(load_all())
    patterns = [p for pattern in patterns or () for p in pattern.split(",") if p]
    if not patterns:
        return scenarios, []
    chosen, unknown = [], []
    for pattern in patterns:
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
    expectation rests on a SHOULD choice is SHOULD whatever the rules it names)."""
    levels = load_requirements()
    rows: dict[str, dict] = {}
    for outcome in suite.outcomes:
        s = outcome.result.scenario
        cited = set(s.requirements)
        for step in s.steps:
            cited |= set(step.get("reqs", ()))
        failed = set(outcome.result.failed_requirements)
        must = {r for f in outcome.result.failures if f.level == "MUST" for r in f.requirements}
        for req in cited | failed:
            row = rows.setdefault(
                req,
                {"id": req, "level": levels.get(req, {}).get("level", "?"), "scenarios": 0,
                 "passed": 0, "failed": 0, "skipped": 0, "expected_failures": 0,
                 "must_failed": False},
            )  # fmt: skip
            row["scenarios"] += 1
            if outcome.status == "skipped" or outcome.status == "xskip":
                row["skipped"] += 1
            elif outcome.status == "xfail":
                row["expected_failures"] += 1
            elif req in failed:
                row["failed"] += 1
                row["must_failed"] |= req in must
            else:
                row["passed"] += 1
    for row in rows.values():
        must_failed = row.pop("must_failed")
        if row["failed"]:
            row["status"] = "fail" if must_failed else "recommended"
        elif row["passed"]:
            row["status"] = "pass"
        elif row["expected_failures"]:
            row["status"] = "xfail"
        else:
            row["status"] = "skipped"
    return [rows[k] for k in sorted(rows, key=_req_key)]


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
