"""Figure 6: peak resident memory of ``verify``, ``dump`` and ``recover`` on a big segment.

Each command runs in a child process on the crashed log of figure 4, one segment of 16 KiB
batches (2 GiB less one batch, the most a segment can hold, in a full run) with a torn
tail and the indexes the crash left; its peak RSS is its
VmHWM (Linux), which the child reports as it exits. The *baseline* is the same command on
a one-batch copy of the log, in the same run: the interpreter, imports and fixed buffers.
A ratio near 1 means the command streams; the target is on our own peak: under 200 MiB.

* verify: ``klogspec verify DIR`` (batch level);
* dump: ``klogspec dump FILE`` (batch level, text to /dev/null);
* recover: ``klogspec recover DIR`` (the reference loader after an unclean shutdown, the
  removed bytes kept in its quarantine folder).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from .bench_recover import LOG_NAME, crashed_log
from .harness import REPO, Context, Figure, Target
from .workload import KiB, MiB, batch_template, format_size

TARGET = Target("ours", "<", 200, "MiB")
COMMANDS = ("verify", "dump", "recover")  # recover last: it cuts the torn tail
PEAK_FILE_VARIABLE = "KLOGSPEC_BENCH_PEAK_FILE"
_REPORT_PEAK = f"""
import atexit, os, sys
def _report_peak():
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["{PEAK_FILE_VARIABLE}"], "w") as out:
        out.write(peak)
atexit.register(_report_peak)
"""
_CLI = "from klogspec.cli import main; sys.exit(main())"


def peak_rss(argv: list[str]) -> tuple[int, float]:
    """Run ``argv`` (a Python child) to completion; its peak RSS in bytes and its wall seconds.
    Exit status 0 or 1 (findings) is fine; 2 or more means the command could not run."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "peak")
        env = {**os.environ, PEAK_FILE_VARIABLE: report}
        start = time.perf_counter()
        result = subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, env=env
        )
        seconds = time.perf_counter() - start
        if result.returncode not in (0, 1):
            raise RuntimeError(
                f"{argv[3:]} exited {result.returncode}: {result.stderr[-2000:].decode()}"
            )
        with open(report) as handle:
            return int(handle.read()) * 1024, seconds


def _child(code: str) -> list[str]:
    """A Python child that runs ``code`` and, on exit, writes its peak RSS (VmHWM, KiB) where
    $KLOGSPEC_BENCH_PEAK_FILE says. VmHWM belongs to the process's own address space;
    rusage's ru_maxrss would also count the parent's pages inherited across fork and exec."""
    return [sys.executable, "-c", _REPORT_PEAK + code]


def commands(directory: str) -> dict[str, list[str]]:
    log = os.path.join(directory, LOG_NAME)
    return {
        "verify": [*_child(_CLI), "verify", directory],
        "dump": [*_child(_CLI), "dump", log],
        "recover": [*_child(_CLI), "recover", directory],
    }


def measure_all(ctx: Context) -> list[Figure]:
    template = batch_template(16 * KiB, ctx.shape)
    root = ctx.scratch("memory")
    big, small = root / "big" / "bench-0", root / "small" / "bench-0"
    big.mkdir(parents=True)
    small.mkdir(parents=True)
    segment = crashed_log(big, template, ctx.memory_size)
    crashed_log(small, template, template.size)
    figures = []
    big_commands, small_commands = commands(str(big)), commands(str(small))
    for name in COMMANDS:
        base, _ = peak_rss(small_commands[name])
        ours, seconds = peak_rss(big_commands[name])
        figures.append(Figure(
            name=f"memory-{name}",
            title=f"Peak RSS of {name} on a {format_size(segment.size + segment.tail)} segment",
            unit="MiB", higher_is_better=False,
            ours=ours / MiB, ours_label=f"{name}, {segment.batches} batches",
            baseline=base / MiB, baseline_label=f"{name} of a one-batch log",
            target=TARGET,
            details={"bytes": segment.size + segment.tail, "batches": segment.batches,
                     "seconds": round(seconds, 3), "argv": big_commands[name][3:]},
        ))  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)
    return figures


def figures(ctx: Context) -> list:
    names = [f"memory-{name}" for name in COMMANDS]
    return [(names, lambda: measure_all(ctx))]
