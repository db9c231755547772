"""benchmarks/run --quick: every figure is printed and its JSON is written in the documented
shape (benchmarks/README.md). Timings are never asserted: figures are judged by the
benchmarks themselves, against baselines measured in the same run."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reference_impl import kernels

REPO = Path(__file__).resolve().parent.parent
PATH = kernels.path()  # the quick run measures this install's path only
SUFFIX = "" if PATH == "compiled" else ".pure"
RUN = REPO / "benchmarks" / "run"
STATUSES = {"PASS", "MISS", "INFO", "SKIP", "ERROR"}
FIGURE_KEYS = {
    "schema", "name", "title", "unit", "ours", "ours_label", "baseline", "baseline_label",
    "ratio", "target", "higher_is_better", "status", "note", "details", "run", "path",
}  # fmt: skip
KAFKA_FIGURES = ("kafka-recover", "kafka-append", "kafka-read", "kafka-dump", "kafka-clean")
RUN_KEYS = {"timestamp", "commit", "mode", "size_bytes", "repeats", "record_shape", "cpus"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    scratch = tmp_path_factory.mktemp("scratch")
    names = subprocess.run(
        [sys.executable, str(RUN), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    result = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--path", PATH, "--out", str(out), "--tmp",
         str(scratch)],
        capture_output=True, text=True, timeout=900,  # a loaded 2-core machine: 5 min
    )  # fmt: skip
    return names, result, out, scratch


def test_lists_the_seven_deliverables_figures(quick_run):
    names = quick_run[0]
    for prefix in ("verify-16k", "verify-1k", "decode-none", "append", "recover",
                   "conformance", "memory-verify", "memory-dump", "memory-recover",
                   "scan-scaling", "scan-vs-verify", *KAFKA_FIGURES):  # fmt: skip
        assert prefix in names
    assert {"decode-gzip", "decode-snappy", "decode-lz4", "decode-zstd"} <= set(names)


def test_quick_run_prints_one_line_per_figure(quick_run):
    names, result, _, _ = quick_run
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:-1]}
    assert sorted(lines) == sorted(names)
    for line in lines.values():
        assert re.search(r" (PASS|MISS|INFO|SKIP)\b", line), line
        assert line.split()[1] == PATH, line
        assert (
            " ours " in line and " baseline " in line and " ratio " in line and " target " in line
        )
        assert "ERROR" not in line, line


def test_quick_run_writes_a_json_file_per_figure_and_a_summary(quick_run):
    names, _, out, _ = quick_run
    for name in names:
        data = json.loads((out / f"{name}{SUFFIX}.json").read_text())
        assert set(data) >= FIGURE_KEYS, name
        assert data["name"] == name and data["schema"] == 1 and data["path"] == PATH
        assert data["status"] in STATUSES
        assert set(data["run"]) >= RUN_KEYS and data["run"]["mode"] == "quick"
        if data["status"] in ("PASS", "MISS"):
            assert isinstance(data["ours"], float) and isinstance(data["baseline"], float)
            assert data["target"]["on"] in ("ratio", "ours") and data["target"]["text"]
    latest = json.loads((out / "latest.json").read_text())
    assert latest["schema"] == 1 and set(latest["run"]) >= RUN_KEYS
    assert [figure["name"] for figure in latest["figures"]] == names


def test_generated_data_is_removed(quick_run):
    scratch = quick_run[3]
    assert list(scratch.iterdir()) == []


def test_markdown_table_has_a_row_per_figure(quick_run):
    names, _, out, _ = quick_run
    table = subprocess.run(
        [sys.executable, str(RUN), "--markdown", "--out", str(out)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == names


def test_quick_scan_figures_time_every_side_or_say_why_not(quick_run):
    """The scan figures run Spark (local[1], local[2]) and verify on the same tree; a quick
    run's tree is too small for the scaling target, so nothing is judged."""
    out = quick_run[2]
    for name in ("scan-scaling", "scan-vs-verify", "scan-scaling-1k", "scan-vs-verify-1k"):
        data = json.loads((out / f"{name}{SUFFIX}.json").read_text())
        if data["status"] == "SKIP":  # no pyspark or no Java here
            assert data["note"], name
            continue
        assert data["status"] == "INFO", name
        details = data["details"]
        assert set(details["wall_seconds"]) == {"local[1]", "local[2]", "verify"}
        assert details["bytes"] >= 2 * data["run"]["size_bytes"]
        assert details["segments"] == 32 and details["partitions"] == 8


def test_kafka_baselines_time_kafka_warm_and_cold_on_the_same_files(quick_run):
    """Issue 25: each Kafka figure is a ratio against Kafka 4.4.0's own code, judged against
    its target; the in-JVM ones keep Kafka's JIT-cold time beside the warm one, and each side
    did the same work (the figure raises, an ERROR, when record or byte counts differ)."""
    out = quick_run[2]
    targets = {"kafka-recover": 1.0, "kafka-append": 0.5, "kafka-read": 0.5, "kafka-dump": 2.0,
               "kafka-clean": 0.5}  # fmt: skip
    for name in KAFKA_FIGURES:
        data = json.loads((out / f"{name}{SUFFIX}.json").read_text())
        assert data["target"]["value"] == targets[name] and data["target"]["on"] == "ratio"
        if data["status"] == "SKIP":  # no Java 17, Maven or the release jars here
            assert data["note"], name
            continue
        assert data["status"] in ("PASS", "MISS"), (name, data["note"])
        details = data["details"]
        assert details["kafka_version"] == "4.4.0" and details["bytes"] > 0
        assert details["kafka_cpu_seconds"] > 0 and details["kafka_wall_seconds"] > 0
        judged = details["judged_on"]  # CPU seconds in the JVM, wall for whole processes
        assert data["ratio"] == pytest.approx(
            details["kafka_" + judged] / details[judged], rel=0.05
        )
        if name != "kafka-dump":  # a whole process is cold by definition
            assert details["kafka_cold_cpu_seconds"] > 0 and details["cold_ratio"] > 0
    clean = json.loads((out / f"kafka-clean{SUFFIX}.json").read_text())
    if clean["status"] != "SKIP":  # every batch holds the same 15 keys: 15 records kept
        assert clean["details"]["records_kept"] == 15


@pytest.mark.skipif(PATH != "compiled", reason="no compiled kernels: one path only")
def test_both_paths_print_a_line_and_write_a_file_each(tmp_path):
    """The default ``--path both``: each figure on the compiled kernels in this process,
    then on the readable path in a child process with KLOGSPEC_PURE_PYTHON=1."""
    result = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--only", "verify-16k", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [line.split()[:2] for line in result.stdout.splitlines()[1:-1]]
    assert lines == [["verify-16k", "compiled"], ["verify-16k", "pure"]]
    for stem, path in (("verify-16k", "compiled"), ("verify-16k.pure", "pure")):
        assert json.loads((tmp_path / f"{stem}.json").read_text())["path"] == path


@pytest.mark.spark
@pytest.mark.cluster
def test_the_cluster_figures_run_when_asked(tmp_path):
    """A quick run skips the cluster figures (five JVMs); ``--only cluster`` runs them: a
    standalone master and two workers (pipeline/standalone.py, as the cluster tests), scan
    and extract timed on it and on local[1], each pass checked to go through the whole tree."""
    result = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--only", "cluster", "--path", PATH, "--out",
         str(tmp_path)],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for name in ("cluster-scan", "cluster-extract"):
        data = json.loads((tmp_path / f"{name}{SUFFIX}.json").read_text())
        if data["status"] == "SKIP":  # no pyspark or no Java here
            assert "quick run" not in data["note"], data["note"]
            continue
        assert data["status"] == "INFO" and data["note"].startswith("the tree is 16 MiB"), name
        assert set(data["details"]["wall_seconds"]) == {"local[1]", "cluster"}
        assert data["details"]["master"].startswith("spark://127.0.0.1:")


def test_a_partial_run_keeps_the_report_order(tmp_path):
    """latest.json lists every figure file in the report's order, whichever ran last (the
    docs page and the README table follow it)."""
    from benchmarks.harness import Figure, write_results

    def figure(name: str) -> Figure:
        return Figure(name, name, "MiB/s", 1.0, "", 1.0, "", None, status="INFO")

    write_results([figure("a"), figure("b"), figure("c")], {}, tmp_path, ["a", "b", "c"])
    write_results([figure("c")], {}, tmp_path, ["a", "b", "c"])  # --only c
    latest = json.loads((tmp_path / "latest.json").read_text())
    assert [f["name"] for f in latest["figures"]] == ["a", "b", "c"]
