"""What every benchmark shares: the run's options, timing, one printed line and one JSON file
per figure (the shape is documented in benchmarks/README.md).

A figure compares *ours* with a *baseline* measured in the same run on the same bytes, and
judges a target either on their ratio (throughputs: ours / baseline) or on our own value
(a wall time, a peak RSS). In-process timings are CPU seconds, the best of ``repeats``
runs with ours and the baseline's interleaved, so other work on the machine hurts
neither side (see ``cpu_seconds``).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from reference_impl import kernels

from .workload import MiB, RecordShape, format_size

SCHEMA_VERSION = 1
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Target:
    """``on`` is ``ratio`` or ``ours``; ``op`` is ``>=`` or ``<``."""

    on: str
    op: str
    value: float
    unit: str = ""

    @property
    def text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.on} {self.op} {self.value:g}{unit}"

    def met(self, ours: float, ratio: float | None) -> bool:
        judged = ratio if self.on == "ratio" else ours
        if judged is None:
            return False
        return judged >= self.value if self.op == ">=" else judged < self.value


@dataclass
class Figure:
    """One line of the report and one ``results/<name>.json``."""

    name: str
    title: str
    unit: str
    ours: float | None
    ours_label: str
    baseline: float | None
    baseline_label: str
    target: Target | None
    # a second way to meet the target: a Target on a ratio kept in ``details`` (its ``on``)
    alternative: Target | None = None
    higher_is_better: bool = True
    status: str = ""  # PASS, MISS, INFO (no target), SKIP (could not run), ERROR
    note: str = ""
    details: dict = field(default_factory=dict)
    # which code measured "ours": the compiled kernels or the readable pure-Python path
    path: str = field(default_factory=kernels.path)

    @property
    def key(self) -> str:
        """The file name stem: the figure's name, ``.pure`` added for the readable path."""
        return self.name if self.path == "compiled" else f"{self.name}.pure"

    @property
    def ratio(self) -> float | None:
        if self.ours is None or not self.baseline:
            return None
        return self.ours / self.baseline

    def judge(self) -> Figure:
        if not self.status:
            if self.target is None:
                self.status = "INFO"
            else:
                met = self.ours is not None and self.target.met(self.ours, self.ratio)
                if not met and self.alternative is not None:
                    other = self.details.get(self.alternative.on)
                    met = other is not None and self.alternative.met(other, other)
                self.status = "PASS" if met else "MISS"
        return self

    def to_json(self) -> dict:
        data = asdict(self)
        data["ratio"] = None if self.ratio is None else round(self.ratio, 4)
        data["target"] = (
            None if self.target is None else {**asdict(self.target), "text": self.target.text}
        )
        data["alternative"] = (
            None
            if self.alternative is None
            else {**asdict(self.alternative), "text": self.alternative.text}
        )
        for key in ("ours", "baseline"):
            if data[key] is not None:
                data[key] = round(data[key], 3)
        return data

    def line(self) -> str:
        ours = _number(self.ours, self.unit)
        base = _number(self.baseline, self.unit)
        ratio = "-" if self.ratio is None else f"{self.ratio:.2f}"
        target = "-" if self.target is None else self.target.text
        if self.alternative is not None:
            other = self.details.get(self.alternative.on)
            target += f" or {self.alternative.text}"
            if other is not None:
                target += f" ({other:.2f})"
        text = (
            f"{self.name:<17} {self.path:<8} ours {ours:>16}  baseline {base:>16}  ratio {ratio:>6}  "
            f"target {target:<18} {self.status}"
        )
        return f"{text}  ({self.note})" if self.note else text


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f} {unit}" if value < 1e5 else f"{value:,.0f} {unit}"


@dataclass
class Context:
    """The options of this run, and where its data goes."""

    size: int
    memory_size: int
    quick: bool
    repeats: int
    shape: RecordShape
    tmp: Path
    out: Path
    profile: bool = False
    only: tuple[str, ...] = ()  # --only's name prefixes: a figure asked for by name
    wall: dict = field(default_factory=dict)  # best wall seconds of the last timed_pair

    def timed_pair(
        self, ours: Callable[[], object], baseline: Callable[[], object], *, setup=None
    ) -> tuple[float, float]:
        """Best-of-``repeats`` CPU seconds of each (see ``cpu_seconds``); ``setup()`` runs
        untimed before every call. Wall seconds go to ``self.wall`` for the details."""
        best_ours = best_base = float("inf")
        self.wall.clear()
        for _ in range(self.repeats):
            best_base = min(best_base, cpu_seconds(baseline, setup, self.wall, "baseline"))
            best_ours = min(best_ours, cpu_seconds(ours, setup, self.wall, "ours"))
        return best_ours, best_base

    def timings(self, ours: float, baseline: float) -> dict:
        """The details every timed figure keeps: CPU and wall seconds of both sides."""
        return {
            "cpu_seconds": round(ours, 4), "baseline_cpu_seconds": round(baseline, 4),
            "wall_seconds": round(self.wall["ours"], 4),
            "baseline_wall_seconds": round(self.wall["baseline"], 4),
        }  # fmt: skip

    def profiled(self, name: str, fn: Callable[[], object], setup=None) -> None:
        """With ``--profile``: run ``fn`` once under pyinstrument, text to profiles/<name>.txt."""
        if not self.profile:
            return
        from pyinstrument import Profiler

        if setup is not None:
            setup()
        profiler = Profiler(interval=0.0005)
        profiler.start()
        fn()
        profiler.stop()
        folder = self.out / "profiles"
        folder.mkdir(parents=True, exist_ok=True)
        text = profiler.output_text(unicode=False, color=False, show_all=False)
        (folder / f"{name}.txt").write_text(text)

    def scratch(self, name: str) -> Path:
        """A fresh directory under the run's temp dir."""
        path = self.tmp / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path


def cpu_seconds(fn, setup, wall: dict, side: str) -> float:
    """The CPU time (user + system) ``fn()`` takes in this process: unlike the wall time,
    it does not count the time the process waits for a core on a shared machine. Every job
    timed this way reads and writes the page cache only, so on an idle machine the two
    agree; the best wall time is kept in ``wall[side]``."""
    if setup is not None:
        setup()
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    fn()
    cpu, elapsed = time.process_time() - cpu_start, time.perf_counter() - wall_start
    wall[side] = min(wall.get(side, elapsed), elapsed)
    return cpu


def run_info(ctx: Context) -> dict:
    """Where and how the figures were measured: enough to compare two runs fairly."""
    return {
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "mode": "quick" if ctx.quick else "full",
        "size_bytes": ctx.size,
        "memory_size_bytes": ctx.memory_size,
        "repeats": ctx.repeats,
        "record_shape": asdict(ctx.shape),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "memory_bytes": _total_memory(),
    }


def _git(*args: str) -> str | None:
    try:
        result = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    except OSError:
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def _total_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def write_results(figures: list[Figure], run: dict, out: Path, order: list[str] = ()) -> None:
    """``<name>.json`` per figure, then ``latest.json``: every figure file in ``out`` (this
    run's and earlier runs' of figures not measured now), each with its own ``run``, in the
    report's ``order`` (every figure name), so that a partial run keeps it."""
    out.mkdir(parents=True, exist_ok=True)
    for figure in figures:
        data = {"schema": SCHEMA_VERSION, **figure.to_json(), "run": run}
        _write_json(out / f"{figure.key}.json", data)
    collected = []
    for path in sorted(out.glob("*.json")):
        if path.name == "latest.json":
            continue
        data = json.loads(path.read_text())
        if data.get("schema") == SCHEMA_VERSION:
            collected.append(data)
    positions: dict[str, int] = {}
    for name in [*order, *(f.name for f in figures)]:
        positions.setdefault(name, len(positions))
    collected.sort(key=lambda data: (positions.get(data["name"], len(positions)), data["name"],
                                     data.get("path", "compiled") != "compiled"))  # fmt: skip
    _write_json(out / "latest.json", {"schema": SCHEMA_VERSION, "run": run, "figures": collected})


def markdown_table(latest: dict) -> str:
    """``latest.json`` as a Markdown table (the README's latest figures)."""
    rows = [
        "| figure | path | ours | baseline | ratio | target | status |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for fig in latest["figures"]:
        ratio = "-" if fig["ratio"] is None else f"{fig['ratio']:.2f}"
        target = "-" if fig["target"] is None else fig["target"]["text"]
        alternative = fig.get("alternative")
        if alternative:
            other = fig["details"].get(alternative["on"])
            target += f" or {alternative['text']}" + ("" if other is None else f" ({other:.2f})")
        ours, base = _number(fig["ours"], fig["unit"]), _number(fig["baseline"], fig["unit"])
        path = fig.get("path", "compiled")
        rows.append(f"| `{fig['name']}` | {path} | {ours} | {base} | {ratio} | {target} | "
                    f"{fig['status']} |")  # fmt: skip
    return "\n".join(rows)


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def make_tmp(parent: str | None) -> Path:
    return Path(tempfile.mkdtemp(prefix="klogspec-bench-", dir=parent))


def describe(ctx: Context) -> str:
    mode = "quick" if ctx.quick else "full"
    return (
        f"klogspec benchmarks ({mode}): {format_size(ctx.size)} logs, "
        f"{format_size(ctx.memory_size)} for memory, best of {ctx.repeats}; "
        f"records: {ctx.shape.describe()}; {os.cpu_count()} CPUs, "
        f"{(_total_memory() or 0) // (1024 * MiB)} GiB, Python {platform.python_version()}"
    )


def flush_print(text: str) -> None:
    print(text, flush=True)
    sys.stdout.flush()
