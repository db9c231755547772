"""Figure 5: the conformance suite's wall time on the reference, subprocess transport.

*Ours* runs ``klogspec conformance --impl cmd:"python -m conformance testee"``: every
request crosses a pipe as a JSON line to a child serving the reference, as a user's
implementation would be driven. The *baseline* runs the same suite with ``--impl
reference`` (in process), so the ratio is what the transport costs. The target is on our
own wall time: under 60 s on a 2-core machine. A quick run does not run the suite.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time

from .harness import REPO, Context, Figure, Target

TARGET = Target("ours", "<", 60, "s")
_CLI = "import sys; from reference_impl.cli import main; sys.exit(main())"
NAME = "conformance"


def available() -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", _CLI, "conformance", "--help"], cwd=REPO, capture_output=True
    )
    return probe.returncode == 0


def run_suite(impl: str, report: str) -> tuple[float, int]:
    """Wall seconds and exit status (0 all MUSTs pass, 1 some fail) of one suite run."""
    argv = [sys.executable, "-c", _CLI, "conformance", "--impl", impl, "--report", report]
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode not in (0, 1):
        raise RuntimeError(
            f"klogspec conformance exited {result.returncode}: {result.stderr[-2000:]}"
        )
    return seconds, result.returncode


def measure(ctx: Context) -> Figure:
    figure = Figure(
        name=NAME, title="Conformance suite on the reference, subprocess transport",
        unit="s", higher_is_better=False, ours=None,
        ours_label="klogspec conformance --impl cmd:\"python -m conformance testee\"",
        baseline=None, baseline_label="klogspec conformance --impl reference (in process)",
        target=TARGET,
    )  # fmt: skip
    if ctx.quick:
        figure.status, figure.note = "SKIP", "not run by --quick"
        return figure
    if not available():
        figure.status, figure.note = "SKIP", "klogspec conformance is not available yet"
        return figure
    folder = ctx.scratch(NAME)
    testee = f"cmd:{shlex.join([sys.executable, '-m', 'conformance', 'testee'])}"
    figure.ours, ours_status = run_suite(testee, str(folder / "subprocess.json"))
    figure.baseline, base_status = run_suite("reference", str(folder / "in-process.json"))
    figure.details = {"exit_status": ours_status, "baseline_exit_status": base_status}
    if ours_status:
        figure.note = "some MUST requirements failed on the reference"
    return figure


def figures(ctx: Context) -> list:
    return [([NAME], lambda: measure(ctx))]
