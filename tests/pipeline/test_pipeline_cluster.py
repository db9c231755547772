"""``scan`` and ``extract`` on a real standalone Spark cluster (a master and two one-core
workers, each its own JVM, from pyspark's launcher classes: pipeline/standalone.py), the
package shipped to the executors as docs/pipeline.md tells a user to ship it; and
``extract`` reading a tiered-storage layout from a real S3 endpoint on loopback (moto's
server, the ``dev`` extra) through pyarrow's S3 client.

Each command is a fresh driver process, as a user runs it (scan with ``--spark-log-level``,
whose JVM output must then reach the terminal; extract without, whose must not): with the cluster's start, about
three minutes on a 2-core machine. Marker ``cluster`` (``-m 'not cluster'`` leaves them out).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner
from pipeline_trees import build_log_dir, millis, reference_rows

from klogspec.verify.cli import verify
from pipeline.standalone import StandaloneCluster, free_port, site_packages

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # 22 characters of base64, as a Kafka topic id
SEGMENT_ID = "BBBBBBBBBBBBBBBBBBBBBB"
AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
       "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}  # fmt: skip


@pytest.fixture(scope="module")
def s3_endpoint():
    """A real S3 endpoint on loopback: moto in server mode, on a port picked free."""
    server_module = pytest.importorskip("moto.server", reason="moto[server] (the dev extra)")
    port = free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, s3_endpoint):
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime for the Spark JVMs")
    # the executors' environment has the endpoint and keys as a node's would
    env = {**AWS, "AWS_ENDPOINT_URL": s3_endpoint}
    with StandaloneCluster(tmp_path_factory.mktemp("cluster"), env=env) as running:
        yield running


def klogspec(cluster, *args, env=None) -> subprocess.CompletedProcess:
    """A ``klogspec`` command in a fresh process, driving the cluster."""
    argv = [sys.executable, "-c", "from klogspec.cli import main; main()", *map(str, args),
            "--master", cluster.url, *cluster.conf_options()]  # fmt: skip
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    return subprocess.run(argv, capture_output=True, text=True, timeout=900,
                          env={**environment, **(env or {})})  # fmt: skip


def test_the_executors_cannot_import_the_checkout(cluster, tmp_path):
    """The executors' Python has the dependencies a node would have installed, not this
    checkout (nor an editable install of it): the package reaches them only in the archive."""
    env = {"PYTHONPATH": os.pathsep.join(site_packages()), "PATH": os.environ["PATH"]}
    code = "import pyarrow, pyspark, crc32c, cramjam\nimport pipeline"
    done = subprocess.run([str(cluster.python), "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert "No module named 'pipeline'" in done.stderr
    shipped = tmp_path / "klogspec"
    shutil.unpack_archive(cluster.archive, shipped)
    done = subprocess.run([str(cluster.python), "-c", "import pipeline.datasource"],
                          cwd=tmp_path, env={**env, "PYTHONPATH": f"{shipped}:{env['PYTHONPATH']}"},
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_scan_on_the_cluster_gives_verify_s_findings(cluster, tmp_path):
    log_dir = build_log_dir(tmp_path / "data")
    done = klogspec(cluster, "scan", "--json", "--spark-log-level", "WARN", "--out",
                    tmp_path / "report", log_dir)  # fmt: skip
    want = CliRunner().invoke(verify, ["--json", str(log_dir)])
    assert done.returncode == want.exit_code, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        json.loads(line) for line in want.stdout.splitlines()
    ]
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["master"] == cluster.url and summary["segments"] == 5
    assert "Spark ready in " in done.stderr and "2 cores" in done.stderr
    assert "Using incubator modules" in done.stderr  # the JVM's own output, as asked
    # the executors ran the package unpacked from the archive in their work directories
    assert list(cluster.root.glob("worker-*/app-*/*/klogspec/pipeline/scan.py"))


def upload_tiered(endpoint: str, log_dir, bucket: str = "tiered") -> list:
    """Each partition of ``log_dir`` as Aiven's tiered-storage objects in ``bucket``: the
    raw segment and its manifest; the local .log files it came from."""
    import boto3  # moto's own dependency; an upload as `aws s3 cp` makes it

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=AWS["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=AWS["AWS_SECRET_ACCESS_KEY"])  # fmt: skip
    s3.create_bucket(Bucket=bucket)
    manifest = json.dumps({"version": "1", "chunkIndex": {"type": "fixed"},
                           "segmentIndexes": {}, "compression": False}).encode()  # fmt: skip
    logs = []
    for log in sorted(log_dir.glob("*-[0-9]*/*.log")):
        topic, partition = log.parent.name.rsplit("-", 1)
        if not partition.isdigit():
            continue  # the -delete directory: not a partition's
        key = f"prefix/{topic}-{TOPIC_ID}/{partition}/{log.stem}-{SEGMENT_ID}"
        s3.put_object(Bucket=bucket, Key=f"{key}.log", Body=log.read_bytes())
        s3.put_object(Bucket=bucket, Key=f"{key}.rsm-manifest", Body=manifest)
        logs.append(log)
    return logs


def test_extract_on_the_cluster_from_a_real_s3_endpoint(cluster, s3_endpoint, tmp_path):
    logs = upload_tiered(s3_endpoint, build_log_dir(tmp_path / "data"))
    out = tmp_path / "records"
    env = {**AWS, "AWS_ENDPOINT_URL": s3_endpoint}  # the driver lists the bucket
    done = klogspec(cluster, "extract", "--json", "--out", out, "s3://tiered/prefix/", env=env)
    assert done.returncode == 0, done.stderr
    assert "Using incubator modules" not in done.stderr  # not asked: in a file, removed
    *counts, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert Counter({(c["topic"], c["partition"]): c["records"] for c in counts}) == Counter(
        {("legacy", 0): 12, ("orders", 0): 59, ("orders", 1): 12}
    )
    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    rows = sorted(
        ((r["file"].rsplit("/", 1)[-1][:20], r["offset"], millis(r["timestamp"]), r["key"],
          r["value"], tuple((h["key"], h["value"]) for h in r["headers"]), r["is_control"])
         for r in table.to_pylist()),
        key=repr,
    )  # fmt: skip
    want = sorted(((f[0].rsplit("/", 1)[-1][:20], *f[1:]) for f in reference_rows(logs)), key=repr)
    assert rows == want and summary["records"] == len(want) == 83
    assert {r["file"].split("/", 3)[2] for r in table.to_pylist()} == {"tiered"}  # s3://tiered/
