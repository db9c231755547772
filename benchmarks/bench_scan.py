"""Figure 7: ``klogspec scan`` throughput, local[1] against local[2] and against verify.

The tree is a log directory of 2 topics x 4 partitions x 4 segments, twice ``--size`` in
all (1 GiB in a full run), each segment with the offset and time index a broker writes
beside it by Kafka's append rule (``index.interval.bytes`` 4096: an entry for every 16 KiB
batch, for every fifth 1 KiB one), closed as after a clean shutdown (each time index ends at
its segment's largest timestamp). Nothing in it is a finding.
It is measured twice: with 16 KiB batches (judged) and with 1 KiB ones (reported only, as
``verify-1k``), where the per-batch work of ``verify_segment`` is 8 times as much per byte.

Each side runs in its own child process, started once and kept for both trees: the scans
each in a fresh JVM (``pipeline.session.spark_session(master)``, the session
``klogspec scan --master`` starts), the verify in a plain Python process. A child times
``pipeline.scan.scan`` (discovery, the Spark job of ``verify_segment`` tasks, the
partition checks on the driver: everything ``klogspec scan`` does but start Spark and
print) or ``verify_paths`` (what ``klogspec verify`` does but print), as wall time: the
work of a scan is in the JVM and its Python workers, not in any one process's CPU time.
**Spark's start-up is not timed** (10 to 30 s, whatever the tree; ``session_seconds`` in
the details), nor one warm-up pass per side and tree, which starts Spark's Python workers
(``warmup_seconds``). Then the three sides take turns, ``--repeats`` rounds, best of each
kept.

* ``scan-scaling``: scan on local[2] against the same scan on local[1] (target: ratio
  >= 1.6, judged on a tree of at least 1 GiB); ``scan-scaling-1k``: the same, 1 KiB
  batches (reported only);
* ``scan-vs-verify``, ``scan-vs-verify-1k``: scan on local[2] against ``klogspec
  verify``'s work in one process (reported only).

Without pyspark or a Java runtime, all four are SKIP.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from reference_impl.formats.index_entries import (
    OffsetPosition,
    TimestampOffset,
    encode_offset_index_entry,
    encode_time_index_entry,
)
from reference_impl.records import read_batch

from .harness import REPO, Context, Figure, Target
from .workload import GiB, KiB, MiB, Template, batch_template, format_size, restamp

TARGET = Target("ratio", ">=", 1.6)
JUDGED_FROM = 1 * GiB  # the target is for a tree of at least 1 GiB
TOPICS = ("clicks", "orders")
PARTITIONS = 4
SEGMENTS = 4
INDEX_INTERVAL_BYTES = 4096  # Kafka's default index.interval.bytes
MASTERS = ("local[1]", "local[2]")
BUSY_CPUS = 0.5  # other processes' load (in CPUs) during the rounds that the note reports
BATCHES = (("", 16 * KiB), ("-1k", 1 * KiB))  # name suffix, batch size (as verify-16k, -1k)
NAMES = [
    f"{figure}{suffix}" for suffix, _ in BATCHES for figure in ("scan-scaling", "scan-vs-verify")
]
_REPLY = "KLOGSPEC-BENCH "  # the children's answers; anything else on stdout is ignored


# --- the tree --------------------------------------------------------------------------


def write_tree(root: Path, template: Template, total_bytes: int) -> dict:
    """The log directory described in the module docstring, at least ``total_bytes`` of
    ``.log``; its size, batch and segment counts."""
    files = len(TOPICS) * PARTITIONS * SEGMENTS
    per_segment = max(1, math.ceil(total_bytes / files / template.size))
    for topic in TOPICS:
        for partition in range(PARTITIONS):
            directory = root / f"{topic}-{partition}"
            directory.mkdir(parents=True)
            for segment in range(SEGMENTS):
                write_indexed_segment(directory, segment * per_segment, per_segment, template)
    return {
        "bytes": files * per_segment * template.size, "batches": files * per_segment,
        "segments": files, "partitions": len(TOPICS) * PARTITIONS,
        "segment_bytes": per_segment * template.size,
    }  # fmt: skip


def write_indexed_segment(directory: Path, first_batch: int, count: int, template: Template):
    """Batches ``first_batch`` .. ``first_batch + count - 1`` of a partition as one segment:
    its ``.log``, and the ``.index`` and ``.timeindex`` by Kafka's append rule (an entry for
    a batch when more than ``index.interval.bytes`` were appended since the last one), the
    time index closed with an entry for the largest timestamp when the last batch has none,
    as a broker closes a segment."""
    base = first_batch * template.count
    max_timestamp = read_batch(template.raw).max_timestamp
    index, time_index = bytearray(), bytearray()
    buf = bytearray(template.raw)
    since = position = 0
    prefix = directory / f"{base:020d}"
    with open(prefix.with_suffix(".log"), "wb", buffering=4 * MiB) as log:
        for i in range(first_batch, first_batch + count):
            offset = i * template.count
            buf[:] = template.raw
            restamp(buf, offset, offset, offset)
            if since > INDEX_INTERVAL_BYTES:
                last = offset + template.count - 1
                index += encode_offset_index_entry(OffsetPosition(last, position), base)
                entry = TimestampOffset(max_timestamp + offset, last)
                time_index += encode_time_index_entry(entry, base)
                since = 0
            log.write(buf)
            since += template.size
            position += template.size
    if since > template.size or count == 1:  # the last batch has no entry
        last = offset + template.count - 1
        time_index += encode_time_index_entry(TimestampOffset(max_timestamp + offset, last), base)
    prefix.with_suffix(".index").write_bytes(bytes(index))
    prefix.with_suffix(".timeindex").write_bytes(bytes(time_index))


# --- the children ----------------------------------------------------------------------


def unavailable() -> str | None:
    """Why Spark cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (the spark extra)"
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        return "no Java runtime (java on PATH or JAVA_HOME)"
    return None


class Child:
    """A side of the figure in its own process (``python -m benchmarks.bench_scan``): it
    starts (a Spark session, for a scan), then runs one pass over a tree per ``run()``."""

    def __init__(self, side: str, log: Path, conf: dict | None = None):
        self.side = side
        # a file, not a pipe, so a chatty JVM cannot fill it; closed by close()
        self.log = open(log, "w+b")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_scan", side, json.dumps(conf or {})],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=REPO,
            text=True, bufsize=1,
        )  # fmt: skip

    def reply(self) -> dict:
        for line in self.process.stdout:
            if line.startswith(_REPLY):
                return json.loads(line[len(_REPLY) :])
        self.process.wait()
        self.log.seek(0)
        tail = self.log.read().decode(errors="replace")[-2000:]
        raise RuntimeError(f"{self.side} exited {self.process.returncode}: {tail}")

    def run(self, tree: Path, verb: str = "run") -> dict:
        """One pass: ``run`` a scan of ``tree``, or ``extract`` it (a Spark side only)."""
        self.process.stdin.write(f"{verb} {tree}\n")
        self.process.stdin.flush()
        return self.reply()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.log.close()


def _serve(side: str, conf: str = "{}") -> None:
    """The child: ``side`` is a Spark master (``local[2]``, ``spark://...`` with the
    settings ``conf``, JSON) or ``verify``. Replies one line when started
    (``session_seconds``), then one per ``run TREE`` line read (``seconds``, what the pass
    went through and its findings) or ``extract TREE`` (bench_cluster.extract_pass)."""
    started = time.perf_counter()
    if side == "verify":
        from klogspec.verify.run import VerifyStats, verify_paths

        def one_pass(tree: str):
            stats = VerifyStats()
            findings = list(verify_paths([tree], stats=stats))
            return stats, findings
    else:
        from pipeline.scan import scan
        from pipeline.session import spark_session

        spark = spark_session(side, json.loads(conf), quiet=True)

        def one_pass(tree: str):
            run = scan(spark, [tree])
            return run.stats, run.findings

    _answer({"session_seconds": time.perf_counter() - started})
    for command in sys.stdin:
        verb, _, tree = command.strip().partition(" ")
        if verb == "extract" and side != "verify":
            from .bench_cluster import extract_pass

            _answer(extract_pass(spark, tree))
        if verb != "run":
            continue
        start = time.perf_counter()
        stats, findings = one_pass(tree)
        seconds = time.perf_counter() - start
        _answer({
            "seconds": seconds, "segments": stats.segments, "bytes": stats.bytes,
            "findings": [f"{f.rule} {f.file}: {f.message}" for f in findings[:3]],
            "finding_count": len(findings), "io_errors": list(stats.io_errors),
        })  # fmt: skip
    if side != "verify":
        spark.stop()


def _answer(data: dict) -> None:
    print(_REPLY + json.dumps(data), flush=True)


# --- the figures -----------------------------------------------------------------------


def _check(side: str, result: dict, tree: dict) -> dict:
    """A pass must have gone through the whole tree and found nothing."""
    if result["finding_count"] or result["io_errors"]:
        problems = result["findings"] or result["io_errors"]
        raise AssertionError(f"{side} of the generated tree has findings: {problems}")
    if (result["segments"], result["bytes"]) != (tree["segments"], tree["bytes"]):
        raise AssertionError(
            f"{side} went through {result['segments']} segments ({result['bytes']} bytes), "
            f"not the tree's {tree['segments']} ({tree['bytes']} bytes)"
        )
    return result


def measure_all(ctx: Context) -> list[Figure]:
    one, two = MASTERS
    figures = {}
    for suffix, batch_bytes in BATCHES:
        scaling = Figure(
            name=f"scan-scaling{suffix}",
            title=f"klogspec scan on local[2] against local[1], {format_size(batch_bytes)} batches",
            unit="MiB/s", ours=None, ours_label=f"klogspec scan, {two} (Spark start-up not timed)",
            baseline=None, baseline_label=f"the same scan, {one} (its own JVM)",
            target=TARGET if batch_bytes == 16 * KiB else None,
        )  # fmt: skip
        versus = Figure(
            name=f"scan-vs-verify{suffix}",
            title=f"klogspec scan on local[2] against klogspec verify, "
            f"{format_size(batch_bytes)} batches",
            unit="MiB/s", ours=None, ours_label=scaling.ours_label,
            baseline=None, baseline_label="klogspec verify of the same tree, in one process",
            target=None,
        )  # fmt: skip
        figures[batch_bytes] = (scaling, versus)
    reason = unavailable()
    if reason:
        for figure in (f for pair in figures.values() for f in pair):
            figure.status, figure.note = "SKIP", reason
        return [f for pair in figures.values() for f in pair]
    root = ctx.scratch("scan")
    sides = (one, two, "verify")
    logs = root / "stderr"
    logs.mkdir()
    children: dict[str, Child] = {}
    try:
        for side in sides:  # the JVMs start side by side
            children[side] = Child(side, logs / f"{side}.txt")
        session = {side: children[side].reply()["session_seconds"] for side in sides}
        for batch_bytes, (scaling, versus) in figures.items():
            template = batch_template(batch_bytes, ctx.shape)
            folder = root / f"tree-{batch_bytes}"
            tree = write_tree(folder, template, 2 * ctx.size)
            details = {
                **tree, "tree": f"{len(TOPICS)} topics x {PARTITIONS} partitions x "
                f"{SEGMENTS} segments of {format_size(tree['segment_bytes'])}, "
                f"{format_size(batch_bytes)} batches, indexed",
                **time_sides(ctx, children, folder, tree),
                "session_seconds": {side: round(s, 3) for side, s in session.items()},
            }  # fmt: skip
            shutil.rmtree(folder, ignore_errors=True)
            throughput = {
                side: tree["bytes"] / seconds / MiB
                for side, seconds in details["wall_seconds"].items()
            }
            scaling.ours, scaling.baseline = throughput[two], throughput[one]
            versus.ours, versus.baseline = throughput[two], throughput["verify"]
            scaling.details, versus.details = details, dict(details)
            if scaling.target is not None and tree["bytes"] < JUDGED_FROM:
                scaling.status = "INFO"
                scaling.note = (
                    f"the tree is {format_size(tree['bytes'])}: the target is for 1 GiB or more"
                )
            elif (details["other_cpus"] or 0) >= BUSY_CPUS:
                scaling.note = (
                    f"other processes kept {details['other_cpus']:.1f} of {os.cpu_count()} "
                    "CPUs busy during the rounds, so local[2] did not have both cores to itself"
                )
    finally:
        for child in children.values():
            child.close()
        shutil.rmtree(root, ignore_errors=True)
    return [f for pair in figures.values() for f in pair]


def time_sides(ctx: Context, children: dict[str, Child], folder: Path, tree: dict) -> dict:
    """One untimed warm-up pass per side, then ``repeats`` rounds in turn: best wall
    seconds of each side, every round's, the warm-up's and the load around the rounds."""
    warmup = {side: _check(side, child.run(folder), tree)["seconds"]
              for side, child in children.items()}  # fmt: skip
    load_before = os.getloadavg()[0]
    rounds: dict[str, list[float]] = {side: [] for side in children}
    others = OtherLoad()
    for _ in range(ctx.repeats):  # the sides take turns, so load hits them alike
        for side, child in children.items():
            rounds[side].append(_check(side, child.run(folder), tree)["seconds"])
    return {
        "other_cpus": others.cpus(),
        "wall_seconds": {side: round(min(times), 4) for side, times in rounds.items()},
        "rounds_seconds": {side: [round(s, 4) for s in times] for side, times in rounds.items()},
        "warmup_seconds": {side: round(s, 4) for side, s in warmup.items()},
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


class OtherLoad:
    """How many CPUs other processes kept busy since it was made, on average (Linux; None
    elsewhere): the machine's busy time (/proc/stat) less this process tree's (the children,
    their JVMs and Python workers). A scaling figure needs the cores free."""

    def __init__(self):
        self.start = time.perf_counter(), _busy_seconds(), _tree_seconds(os.getpid())

    def cpus(self) -> float | None:
        wall, busy, ours = self.start
        now = time.perf_counter(), _busy_seconds(), _tree_seconds(os.getpid())
        if busy is None or ours is None or now[0] <= wall:
            return None
        return round(max(0.0, (now[1] - busy) - (now[2] - ours)) / (now[0] - wall), 2)


_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _busy_seconds() -> float | None:
    """CPU seconds the machine spent busy (all but idle and iowait) since boot."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(n) for n in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (sum(fields) - fields[3] - fields[4]) / _HZ


def _tree_seconds(root: int) -> float | None:
    """CPU seconds of ``root`` and its live descendants, with their reaped children's."""
    parents, times = {}, {}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        parents[pid] = int(fields[1])  # ppid; utime, stime, cutime, cstime follow at 11-14
        times[pid] = sum(int(n) for n in fields[11:15])
    tree, frontier = {root}, [root]
    while frontier:
        frontier = [pid for pid, ppid in parents.items() if ppid in frontier and pid not in tree]
        tree.update(frontier)
    return sum(times.get(pid, 0) for pid in tree) / _HZ


def figures(ctx: Context) -> list:
    return [(NAMES, lambda: measure_all(ctx))]


if __name__ == "__main__":
    _serve(*sys.argv[1:])
