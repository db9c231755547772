"""The pytest plugin: one test per scenario, with stable test IDs.

    pytest -p conformance.plugin --pyargs conformance.pytest_suite --klogspec-impl 'cmd:./my-testee'

``--klogspec-impl`` (repeatable) names the implementation as for ``klogspec
conformance --impl``; with none, the suite runs the reference through both transports.
``--klogspec-cross-load IMPL`` has a second implementation load every directory the
first leaves (crossload.py). ``--klogspec-expected-failures`` applies an expected-failure
file (expected.py):
listed tests xfail, and a listed test that passes or fails differently fails.
A failure of SHOULD rules only is reported as an xfail marked "recommended".
"""

from __future__ import annotations

import pytest

DEFAULT_IMPLS = (("reference", "inproc"), ("reference", "subprocess"))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("klogspec", "klogspec conformance suite")
    group.addoption(
        "--klogspec-impl",
        action="append",
        default=[],
        metavar="IMPL",
        help="implementation under test: reference, module:attr, an entry point, or cmd:'...' "
        "(repeatable; default: the reference through both transports)",
    )
    group.addoption(
        "--klogspec-transport",
        choices=("inproc", "subprocess"),
        default=None,
        help="transport for in-process implementations",
    )
    group.addoption(
        "--klogspec-expected-failures",
        default=None,
        metavar="FILE",
        help="an expected-failure file, as for klogspec conformance --expected-failures",
    )
    group.addoption(
        "--klogspec-only",
        action="append",
        default=[],
        metavar="ID",
        help="run only these tests (IDs or globs), as klogspec conformance --only",
    )
    group.addoption(
        "--klogspec-timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long a testee may take to answer one request",
    )
    group.addoption(
        "--klogspec-cross-load",
        default=None,
        metavar="IMPL",
        help="a second implementation that loads every directory the first leaves (as "
        "klogspec conformance --cross-load)",
    )


def _seconds(value: str) -> float:
    """--klogspec-timeout, bounded as klogspec conformance --timeout (options.Seconds)."""
    import argparse

    from .options import Seconds

    try:
        return Seconds().convert(value, None, None)
    except Exception as exc:  # click's BadParameter: argparse reports it as a usage error
        raise argparse.ArgumentTypeError(getattr(exc, "message", str(exc))) from None


def _impls(config: pytest.Config) -> list[tuple[str, str | None]]:
    given = config.getoption("klogspec_impl")
    if not given:
        return list(DEFAULT_IMPLS)
    return [(impl, config.getoption("klogspec_transport")) for impl in given]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "klogspec_case" not in metafunc.fixturenames:
        return
    from .suite import select

    try:
        scenarios, unknown = select(metafunc.config.getoption("klogspec_only"))
    except ValueError as exc:  # a milestone:N that is not one
        raise pytest.UsageError(f"--klogspec-only {exc}") from None
    if unknown:
        raise pytest.UsageError(f"--klogspec-only: no test matches {', '.join(unknown)}")
    impls = _impls(metafunc.config)
    params, ids = [], []
    for impl in impls:
        for scenario in scenarios:
            params.append((impl, scenario.id))
            label = impl[1] or impl[0] if impls == list(DEFAULT_IMPLS) else impl[0]
            ids.append(scenario.id if len(impls) == 1 else f"{label}:{scenario.id}")
    metafunc.parametrize("klogspec_case", params, ids=ids, indirect=True)


class _Runners:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.runners: dict = {}

    def get(self, impl: tuple[str, str | None]):
        if impl not in self.runners:
            from .crossload import CrossLoader
            from .goldens import load_manifest_entries
            from .runner import Runner
            from .transport import resolve_impl

            spec = resolve_impl(impl[0], impl[1])
            timeout = self.config.getoption("klogspec_timeout")
            cross = self.config.getoption("klogspec_cross_load")
            self.runners[impl] = Runner(
                spec.driver(timeout),
                load_manifest_entries(),
                cross_loader=None if cross is None else CrossLoader(resolve_impl(cross), timeout),
            )
        return self.runners[impl]

    def close(self) -> None:
        for runner in self.runners.values():
            runner.close()


@pytest.fixture(scope="session")
def klogspec_runners(request: pytest.FixtureRequest):
    runners = _Runners(request.config)
    yield runners
    runners.close()


# the parsed --klogspec-expected-failures, kept on the config as pytest's stash keeps state
EXPECTED = pytest.StashKey[dict]()


def pytest_configure(config: pytest.Config) -> None:
    """Read --klogspec-expected-failures once, before any test: a bad file is one usage
    error, as for klogspec conformance (a regular UTF-8 file of at most 1 MiB)."""
    from . import expected
    from .options import OptionError, read_input

    config.stash[EXPECTED] = {}
    path = config.getoption("klogspec_expected_failures", None)
    if path is None:
        return
    try:
        found, problems = expected.parse(read_input(path, "--klogspec-expected-failures"))
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from None
    if problems:
        raise pytest.UsageError(f"{path}: " + "; ".join(problems))
    config.stash[EXPECTED] = found


@pytest.fixture(scope="session")
def klogspec_expected(request: pytest.FixtureRequest) -> dict:
    return request.config.stash[EXPECTED]


class Case:
    """One scenario on one implementation, run by ``check``."""

    def __init__(self, runner, scenario, expectation) -> None:
        self.runner = runner
        self.scenario = scenario
        self.expectation = expectation

    def check(self) -> None:
        from .expected import judge

        result = self.runner.run(self.scenario)
        status, note = judge(result.status, result.category, self.expectation)
        details = "\n".join(f.render() for f in result.failures)
        if status == "skipped":
            pytest.skip(result.skip_reason)
        if status == "xfail":
            pytest.xfail(f"expected failure ({result.category})")
        if status in ("xpass", "xfail-mismatch", "xskip"):
            pytest.fail(f"{note}\n{details}", pytrace=False)
        if status == "failed":
            if result.level == "SHOULD":
                pytest.xfail(f"recommended (SHOULD) rules fail:\n{details}")
            pytest.fail(f"{self.scenario.title}\n{details}", pytrace=False)


@pytest.fixture
def klogspec_case(request: pytest.FixtureRequest, klogspec_runners, klogspec_expected) -> Case:
    from .scenarios import by_id

    impl, scenario_id = request.param
    return Case(
        klogspec_runners.get(impl), by_id()[scenario_id], klogspec_expected.get(scenario_id)
    )
