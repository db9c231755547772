"""The real-broker corpus (issue 21 item 5): a single-node KRaft broker of a Kafka release, from
its jars on Maven Central, writes every workload (conformance/kafka_broker.py); our tools must
read all of it, find nothing wrong in the clean copy, and plan for the killed one exactly what
Kafka's own restart does (conformance/broker_recovery.py).

Marker ``broker``: needs Java 17+, Maven and Maven Central (skips with the reason without them).
The corpus is made once per release into ``$KLOGSPEC_CACHE`` (~30 s cold) and reused; each
restart comparison starts a broker (~15 s). ``KLOGSPEC_KAFKA_VERSIONS`` (comma-separated)
chooses the releases; the newest, 4.4.0, by default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import broker_recovery, kafka_broker, kafka_jars

pytestmark = pytest.mark.broker
VERSIONS = os.environ.get("KLOGSPEC_KAFKA_VERSIONS", kafka_broker.NEWEST).split(",")
CLI = "import sys; from klogspec.cli import main; sys.argv[0] = 'klogspec'; main()"
TOPICS = {
    "plain", "gzip", "snappy", "lz4", "zstd", "idempotent", "transactional", "compacted",
    "create-time", "log-append-time", "rolling", "flood",
}  # fmt: skip


@pytest.fixture(scope="module", params=VERSIONS)
def corpus(request) -> kafka_broker.BrokerCorpus:
    try:
        return kafka_broker.broker_corpus(request.param)
    except kafka_jars.KafkaJarsError as exc:
        pytest.skip(f"no Kafka {request.param} broker: {exc}")


def klogspec(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *argv], capture_output=True, text=True)


def json_lines(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_workloads_are_all_there(corpus):
    """Every topic, the internal ones and KRaft's log; the rolling topic rolled; the codecs,
    transactions and timestamp types are what the workload asked for."""
    names = {p.name for p in corpus.clean.iterdir() if p.is_dir()}
    assert {f"{topic}-0" for topic in TOPICS} | {
        "__consumer_offsets-0",
        "__transaction_state-0",
        "__cluster_metadata-0",
    } <= names
    assert len(list((corpus.clean / "rolling-0").glob("*.log"))) >= 3
    batches = [e for e in json_lines(klogspec("dump", "--json", str(corpus.clean)))
               if e["type"] == "batch"]  # fmt: skip
    by_topic = {}
    for batch in batches:
        by_topic.setdefault(Path(batch["file"]).parent.name, []).append(batch)
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        assert {b["compression"] for b in by_topic[f"{codec}-0"]} == {codec}
    assert {b["producerId"] for b in by_topic["plain-0"]} == {-1}
    assert all(b["producerId"] >= 0 for b in by_topic["idempotent-0"])
    markers = [b for b in by_topic["transactional-0"] if b["isControl"]]
    assert len(markers) == 3 and all(b["isTransactional"] for b in by_topic["transactional-0"])
    assert {b["timestampType"] for b in by_topic["log-append-time-0"]} == {"LogAppendTime"}
    assert {b["timestampType"] for b in by_topic["create-time-0"]} == {"CreateTime"}
    assert by_topic["__consumer_offsets-0"], "the group's offset commits"


def test_verify_finds_nothing_on_the_clean_copy(corpus):
    done = klogspec("verify", "--json", "--deep", "--no-progress", str(corpus.clean))
    findings = [e for e in json_lines(done) if e.get("severity") in ("error", "warning")]
    assert findings == [] and done.returncode == 0, done.stdout[-3000:]


def test_verify_finds_no_error_on_the_killed_copy(corpus):
    """A SIGKILL leaves unflushed, untrimmed files, which the spec allows (a crash is no
    corruption): no error, and nothing that a restart would have to cut."""
    done = klogspec("verify", "--json", "--deep", "--no-progress", str(corpus.killed))
    errors = [e for e in json_lines(done) if e.get("severity") == "error"]
    assert errors == [], errors[:5]


def test_dump_reads_every_file_of_both_copies(corpus):
    """``klogspec dump --deep`` decodes everything, __consumer_offsets and __cluster_metadata
    (its log and KRaft snapshot) included, without one error."""
    done = klogspec(
        "dump", "--json", "--deep", "--no-progress", str(corpus.clean), str(corpus.killed)
    )
    events = json_lines(done)
    summaries = [e for e in events if e["type"] == "summary"]
    assert done.returncode == 0, [s for s in summaries if not s["ok"]][:3]
    files = {Path(s["file"]).relative_to(corpus.root).as_posix() for s in summaries}
    for copy in ("clean", "killed"):
        assert f"{copy}/logs/__consumer_offsets-0/00000000000000000000.log" in files
        assert f"{copy}/logs/__cluster_metadata-0/00000000000000000000.log" in files
        assert any(f.startswith(f"{copy}/logs/__cluster_metadata-0/") and f.endswith(".checkpoint")
                   for f in files)  # fmt: skip
    records = sum(len(e["records"]) for e in events if e["type"] == "batch")
    assert records > 2 * 3000  # both copies' workloads, record by record


@pytest.mark.parametrize("state", ["clean", "killed", "torn"])
def test_recover_plan_equals_kafkas_restart(corpus, state, tmp_path):
    """``klogspec recover --dry-run``'s plan against Kafka's own restart on a copy: the same
    segments recovered, the same bytes of every .log left, the same recovery point. The torn
    copy's damage is real: the plan cuts both .log files, so that truncations are compared
    too, not only index rebuilds."""
    home = corpus.root / ("clean" if state == "clean" else "killed")
    if state == "torn":
        home = broker_recovery.tear(home, tmp_path / "torn")
    differences, plans = broker_recovery.compare_with_restart(corpus.version, home, tmp_path)
    assert differences == []
    cut = {name for name, p in plans.items()
           if any(a["action"] == "truncate" for a in p["actions"])}  # fmt: skip
    assert cut == ({"flood-0", "rolling-0"} if state == "torn" else set())


def test_scan_reads_the_clean_copy(corpus, tmp_path):
    """``klogspec scan`` on Spark: the same verdict as verify (one small call)."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    done = klogspec("scan", "--json", "--out", str(tmp_path / "report"), str(corpus.clean))
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    kraft_snapshots = list(corpus.clean.rglob("*-*.checkpoint"))
    assert summary["segments"] == len(list(corpus.clean.rglob("*.log")) + kraft_snapshots)
