"""Figure 7b: ``klogspec scan`` and ``extract`` on a standalone Spark cluster against
``local[1]`` (issue 25 point 3).

The cluster is the tests' (pipeline/standalone.py): a master and two workers of one core
each, every one its own JVM on loopback, started from pyspark's launcher classes, the
package shipped to the executors as an archive. The tree is bench_scan's (2 topics x 4
partitions x 4 segments, indexed, 16 KiB batches), four times ``--size`` (2 GiB in a full
run). Each side is a child process of bench_scan's (``Child``) holding one Spark session:
``local[1]``, and the cluster's driver (``--master spark://127.0.0.1:PORT`` with the
cluster's settings, in client mode, as ``klogspec scan --master`` runs). A child times
``pipeline.scan.scan`` (a ``scan`` pass) or ``pipeline.extract.extract`` into a scratch
directory, removed after each pass (an ``extract`` pass), as wall time. Spark's start-up is
not timed, nor one warm-up pass per side and figure; then the sides take turns,
``--repeats`` rounds, best of each kept.

* ``cluster-scan``: scan on the cluster against local[1] (target: ratio >= 1.6, judged on
  a tree of at least 2 GiB);
* ``cluster-extract``: extract, the same.

The machine has 2 cores for the driver, the executors and their Python workers, so the
note says how busy other processes kept the CPUs during the rounds (``other_cpus``).
A quick run skips both unless ``--only cluster`` asks (five JVMs); without pyspark or
Java, both are SKIP.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from reference_impl import kernels

from .bench_scan import Child, OtherLoad, unavailable, write_tree
from .harness import Context, Figure, Target
from .workload import GiB, KiB, MiB, batch_template, format_size

TARGET = Target("ratio", ">=", 1.6)
JUDGED_FROM = 2 * GiB
BASELINE = "local[1]"
VERBS = {"cluster-scan": "run", "cluster-extract": "extract"}
NAMES = list(VERBS)


def extract_pass(spark, tree: str) -> dict:
    """An ``extract`` pass in a child (bench_scan._serve): the tree's records to Parquet in a
    scratch directory beside it, which is removed; its seconds and counts."""
    from pipeline.extract import extract

    out = f"{tree}.out-{os.getpid()}"
    start = time.perf_counter()
    written = extract(spark, [tree], out, overwrite=True)
    seconds = time.perf_counter() - start
    shutil.rmtree(out, ignore_errors=True)
    return {"seconds": seconds, "records": sum(w.records for w in written),
            "partitions": len(written)}  # fmt: skip


def _figures() -> dict[str, Figure]:
    return {
        name: Figure(
            name=name,
            title=f"klogspec {verb if verb == 'extract' else 'scan'} on a standalone "
            "cluster (2 workers x 1 core) against local[1], 16 KiB batches",
            unit="MiB/s",
            ours=None,
            ours_label="2 one-core workers on loopback (Spark start-up not timed)",
            baseline=None,
            baseline_label="the same command on local[1] (its own JVM)",
            target=TARGET,
        )  # fmt: skip
        for name, verb in VERBS.items()
    }


def measure_all(ctx: Context) -> list[Figure]:
    figures = _figures()
    asked = any(name.startswith(prefix) for prefix in ctx.only for name in NAMES)
    reason = unavailable()
    if reason is None and ctx.quick and not asked:
        reason = "a quick run leaves out the cluster (five JVMs): --only cluster runs it"
    if reason:
        for figure in figures.values():
            figure.status, figure.note = "SKIP", reason
        return list(figures.values())
    root = ctx.scratch("cluster")
    try:
        _measure(ctx, root, figures)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return list(figures.values())


def _measure(ctx: Context, root: Path, figures: dict[str, Figure]) -> None:
    from pipeline.standalone import StandaloneCluster

    pure = os.environ.get(kernels.PURE_PYTHON_VARIABLE)  # the executors take our path
    env = {kernels.PURE_PYTHON_VARIABLE: pure} if pure else {}
    logs = root / "stderr"
    logs.mkdir()
    with StandaloneCluster(root / "cluster", env=env) as cluster:
        children = {
            BASELINE: Child(BASELINE, logs / "local.txt"),
            "cluster": Child(cluster.url, logs / "cluster.txt", cluster.driver_conf()),
        }
        try:
            session = {side: child.reply()["session_seconds"] for side, child in children.items()}
            template = batch_template(16 * KiB, ctx.shape)
            tree = write_tree(root / "tree", template, 4 * ctx.size)
            tree["records"] = tree["batches"] * template.count
            for name, verb in VERBS.items():
                details = _time_sides(ctx, children, root / "tree", verb)
                _judge(figures[name], tree, details, session)
                figures[name].details["master"] = cluster.url
        finally:
            for child in children.values():
                child.close()


def _time_sides(ctx: Context, children: dict[str, Child], tree: Path, verb: str) -> dict:
    warmup = {side: child.run(tree, verb)["seconds"] for side, child in children.items()}
    others = OtherLoad()
    rounds: dict[str, list[float]] = {side: [] for side in children}
    passes = {}
    for _ in range(ctx.repeats):  # the sides take turns, so load hits them alike
        for side, child in children.items():
            passes[side] = child.run(tree, verb)
            rounds[side].append(passes[side]["seconds"])
    return {
        "other_cpus": others.cpus(), "passes": passes,
        "wall_seconds": {side: round(min(times), 4) for side, times in rounds.items()},
        "rounds_seconds": {side: [round(s, 4) for s in times] for side, times in rounds.items()},
        "warmup_seconds": {side: round(s, 4) for side, s in warmup.items()},
    }  # fmt: skip


def _judge(figure: Figure, tree: dict, details: dict, session: dict) -> None:
    for side, result in details.pop("passes").items():  # each went through the whole tree
        went = (result["records"], result["partitions"]) if "records" in result else (
            result["bytes"], result["finding_count"])  # fmt: skip
        want = (tree["records"], tree["partitions"]) if "records" in result else (tree["bytes"], 0)
        if went != want:
            raise AssertionError(f"{figure.name}: {side}'s pass went through {went}, not {want}")
    seconds = details["wall_seconds"]
    figure.ours = tree["bytes"] / seconds["cluster"] / MiB
    figure.baseline = tree["bytes"] / seconds[BASELINE] / MiB
    figure.details = {**tree, **details, "tree": f"{format_size(tree['bytes'])} of 16 KiB "
                      "batches, 2 topics x 4 partitions x 4 segments, indexed",
                      "session_seconds": session, "workers": "2 x 1 core, 1g"}  # fmt: skip
    if tree["bytes"] < JUDGED_FROM:
        figure.status = "INFO"
        figure.note = f"the tree is {format_size(tree['bytes'])}: the target is for 2 GiB"
    elif (details["other_cpus"] or 0) >= 0.5:
        figure.note = (f"other processes kept {details['other_cpus']:.1f} of {os.cpu_count()} "
                       "CPUs busy during the rounds")  # fmt: skip


def figures(ctx: Context) -> list:
    return [(NAMES, lambda: measure_all(ctx))]
