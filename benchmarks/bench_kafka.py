"""Figure 9: the speed anchor (issue 17): Apache Kafka's own unclean-load recovery of the
same crashed log, beside the reference's recovery and verify.

The log is figure 4's: one segment of 16 KiB batches with a torn tail and the indexes a
crash leaves, no checkpoints. Kafka's side is the Kafka testee
(``../shared/kafka-oracle/run.sh``, or ``$KLOGSPEC_KAFKA_ORACLE``: Kafka's ``LogLoader``,
``LogSegment.recover`` and index classes compiled from source) driven over the JSON-lines
protocol: its ``open`` of the crashed directory, the wall time of that one request, in a
fresh JVM each time (the JVM's start and the ``hello`` are not timed), then ``crash``.
Ours are wall times too, in this process: ``Log.open`` of the same directory (the loader
``klogspec recover`` runs) and ``verify_segment`` of the ``.log``.

* ``recover-kafka``: the reference's recovery against Kafka's (ratio > 1: faster);
* ``verify-kafka``: ``verify_segment`` against Kafka's recovery.

Both INFO. Without the testee or a Java runtime they are SKIP, with the reason.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from conformance.transport import resolve_impl

from .bench_recover import after_crash, crashed_log, recover
from .bench_verify import verify_log
from .harness import REPO, Context, Figure
from .workload import KiB, MiB, batch_template

NAMES = ["recover-kafka", "verify-kafka"]
ORACLE_VARIABLE = "KLOGSPEC_KAFKA_ORACLE"
TIMEOUT_S = 600


def oracle() -> tuple[Path | None, str]:
    """The testee's run.sh, or None and why not."""
    configured = os.environ.get(ORACLE_VARIABLE)
    root = Path(configured) if configured else REPO.parent / "shared" / "kafka-oracle"
    run = root / "run.sh" if root.is_dir() else root
    if not run.is_file():
        return None, f"no Kafka testee at {run} (set {ORACLE_VARIABLE})"
    if shutil.which("java") is None:
        return None, "no Java runtime (java not on PATH)"
    return run, ""


def kafka_open_seconds(run: Path, directory: Path) -> float:
    """Wall seconds of the Kafka testee's ``open`` of ``directory`` (a fresh JVM)."""
    driver = resolve_impl(f"cmd:{run}").driver(TIMEOUT_S)
    try:
        driver.hello()
        start = time.perf_counter()
        response = driver.request("open", {"dir": str(directory), "config": {}}, 0)
        seconds = time.perf_counter() - start
        if not response.ok:
            raise RuntimeError(f"Kafka's open failed: {response.code}: {response.message}")
        driver.crash(0)
    finally:
        driver.shutdown()
    return seconds


def best_wall(fn, setup, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        setup()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(ctx: Context) -> list[Figure]:
    figures = [
        Figure(name="recover-kafka", title="Recovery: the reference against Kafka's own",
               unit="MiB/s", ours=None, ours_label="Log.open after a crash (wall)",
               baseline=None, baseline_label="Kafka's LogLoader: the testee's open (wall)",
               target=None),
        Figure(name="verify-kafka", title="Verify against Kafka's own recovery",
               unit="MiB/s", ours=None, ours_label="verify_segment of the .log (wall)",
               baseline=None, baseline_label="Kafka's LogLoader: the testee's open (wall)",
               target=None),
    ]  # fmt: skip
    run, why = oracle()
    if run is None:
        for figure in figures:
            figure.status, figure.note = "SKIP", why
        return figures
    template = batch_template(16 * KiB, ctx.shape)
    directory = ctx.scratch("recover-kafka") / "bench-0"
    directory.mkdir()
    segment = crashed_log(directory, template, ctx.size)
    setup = lambda: after_crash(directory, segment, template)  # noqa: E731
    total = segment.size + segment.tail
    kafka = float("inf")
    for _ in range(ctx.repeats):
        setup()
        kafka = min(kafka, kafka_open_seconds(run, directory))
    ours = best_wall(lambda: recover(directory, segment), setup, ctx.repeats)
    verify = best_wall(lambda: verify_log(segment.path, ("FRAME-9",)), setup, ctx.repeats)
    shutil.rmtree(directory.parent, ignore_errors=True)
    for figure, seconds in zip(figures, (ours, verify), strict=True):
        figure.ours, figure.baseline = total / seconds / MiB, total / kafka / MiB
        figure.details = {"bytes": total, "batches": segment.batches,
                          "wall_seconds": round(seconds, 4),
                          "kafka_wall_seconds": round(kafka, 4),
                          "testee": str(run)}  # fmt: skip
    return figures


def figures(ctx: Context) -> list:
    return [(NAMES, lambda: measure(ctx))]
