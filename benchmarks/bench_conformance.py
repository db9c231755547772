"""Figure 5: the conformance suite's wall time on the reference, subprocess transport.

*Ours* runs ``klogspec conformance --impl cmd:"python -m conformance testee"``: every
request crosses a pipe as a JSON line to a child serving the reference, as a user's
implementation would be driven (goldens compared, the per-requirement table not printed). The *baseline* runs the same suite with ``--impl
reference`` (in process), so the ratio is what the transport costs. The target is on our
own wall time: under 60 s on a 2-core machine. A quick run times the first three tests
only, and judges nothing.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

from .harness import REPO, Context, Figure, Target

TARGET = Target("ours", "<", 60, "s")
_CLI = "import sys; from klogspec.cli import main; sys.exit(main())"
NAME = "conformance"
QUICK_TESTS = 3


def available() -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", _CLI, "conformance", "--help"], cwd=REPO, capture_output=True
    )
    return probe.returncode == 0


def first_tests(count: int) -> list[str]:
    """The IDs of the suite's first ``count`` tests, for a quick run."""
    listing = subprocess.run(
        [sys.executable, "-c", _CLI, "conformance", "list"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [line.split()[0] for line in listing.stdout.splitlines()[:count]]


def run_suite(impl: str, report: Path, only: list[str]) -> tuple[float, dict]:
    """Wall seconds and the report's summary (passed, failed, ...) of one suite run."""
    argv = [sys.executable, "-c", _CLI, "conformance", "--impl", impl,
            "--report", str(report), "--table", "none"]  # fmt: skip
    if only:
        argv += ["--only", ",".join(only)]
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode not in (0, 1):
        raise RuntimeError(
            f"klogspec conformance exited {result.returncode}: {result.stderr[-2000:]}"
        )
    return seconds, json.loads(report.read_text())["summary"]


def measure(ctx: Context) -> Figure:
    figure = Figure(
        name=NAME, title="Conformance suite on the reference, subprocess transport",
        unit="s", higher_is_better=False, ours=None,
        ours_label="klogspec conformance --impl cmd:\"python -m conformance testee\"",
        baseline=None, baseline_label="klogspec conformance --impl reference (in process)",
        target=TARGET,
    )  # fmt: skip
    if not available():
        figure.status, figure.note = "SKIP", "klogspec conformance is not available yet"
        return figure
    folder = ctx.scratch(NAME)
    testee = f"cmd:{shlex.join([sys.executable, '-m', 'conformance', 'testee'])}"
    only = first_tests(QUICK_TESTS) if ctx.quick else []
    figure.ours, summary = run_suite(testee, folder / "subprocess.json", only)
    figure.baseline, in_process = run_suite("reference", folder / "in-process.json", only)
    figure.details = {"summary": summary["line"], "baseline_summary": in_process["line"]}
    if summary["must_failures"]:
        figure.note = f"the reference fails MUST requirements: {summary['line']}"
    if only:  # a smoke run: the target is for the whole suite
        figure.status, figure.note = "INFO", f"--quick: the first {len(only)} tests only"
    return figure


def figures(ctx: Context) -> list:
    return [([NAME], lambda: measure(ctx))]
