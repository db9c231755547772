"""A real single-node KRaft broker of a Kafka release, and the corpus it writes (DESIGN.md §7).

The broker is Kafka's own ``kafka.Kafka`` from the release jars (conformance/kafka_broker/'s
pom.xml, built by kafka_jars.py), combined broker and controller, listening on 127.0.0.1 at
ports picked free at run time, its log directory formatted by Kafka's own StorageTool. The
workloads are written by our Java program on the real kafka-clients (Workload.java): plain,
gzip, snappy, lz4, zstd, idempotent, transactional (committed and aborted), a compacted topic
with tombstones, CreateTime and LogAppendTime topics, a topic that rolls (segment.bytes 1 MiB,
Kafka's least), and a consumer group that commits offsets.

``broker_corpus(version)`` makes, once per release and then from the cache
(``<cache>/broker-corpus/<version>/``), two log directories:

* ``clean``: the workloads, then the broker stopped by SIGTERM (a clean shutdown);
* ``killed``: the workloads, then SIGKILL while a producer floods the topic ``flood``.

``restart(version, log_dir)`` starts a broker on a log directory (a copy: Kafka changes it)
until it has loaded its logs, stops it cleanly and returns its server.log: what Kafka's own
restart did, for the comparison with ``klogspec recover --dry-run``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import kafka_jars

MODULE_DIR = Path(__file__).resolve().parent / "kafka_broker"
NEWEST = "4.4.0"
CLUSTER_ID = base64.urlsafe_b64encode(b"klogspec-corpus!").decode().rstrip("=")
NODE_ID = 1
STARTED = "Kafka Server started"  # KafkaRaftServer's INFO line once the logs are loaded
START_TIMEOUT_S = 180
WORKLOAD_TIMEOUT_S = 300
FLOOD_S = 1.0  # how long the flood producer writes before the SIGKILL
# Bump when the workloads or the broker's settings change: cached corpora are then remade.
CORPUS_LAYOUT = "1"

SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id={node_id}
controller.quorum.voters={node_id}@127.0.0.1:{controller_port}
listeners=PLAINTEXT://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{controller_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{broker_port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={log_dir}
num.partitions=1
auto.create.topics.enable=false
offsets.topic.num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.cleaner.backoff.ms=1000
"""

LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log_file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
"""


class BrokerError(RuntimeError):
    """The broker or the workload failed; the message ends with the tail of its log."""


def free_port() -> int:
    """A loopback port free now (the broker binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Broker:
    """One broker process on ``home``: ``home/logs`` (its log.dirs), ``home/server.log``."""

    version: str
    home: Path
    process: subprocess.Popen | None = None
    port: int = 0

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def server_log(self) -> Path:
        return self.home / "server.log"

    def configure(self) -> Path:
        """Write server.properties (fresh ports each time) and the log4j2 configuration."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        properties = self.home / "server.properties"
        properties.write_text(
            SERVER_PROPERTIES.format(
                node_id=NODE_ID, broker_port=self.port, controller_port=free_port(),
                log_dir=self.log_dir,
            )
        )  # fmt: skip
        (self.home / "log4j2.properties").write_text(LOG4J2.format(log_file=self.server_log))
        return properties

    def format(self) -> None:
        """Kafka's ``kafka-storage format``: meta.properties and the bootstrap checkpoint."""
        properties = self.configure()
        args = ["format", "-t", CLUSTER_ID, "-c", str(properties)]
        done = self._java("kafka.tools.StorageTool", args, capture=True, timeout=120)
        if done.returncode != 0:
            raise BrokerError(f"kafka-storage format failed:\n{done.stdout}{done.stderr}")

    def start(self) -> None:
        properties = self.configure()
        self.process = self._java("kafka.Kafka", [str(properties)])
        self._wait_for(STARTED)

    def stop(self) -> None:
        """SIGTERM: Kafka's controlled shutdown, indexes trimmed, .kafka_cleanshutdown."""
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise BrokerError(f"the broker did not stop within {START_TIMEOUT_S} s")

    def kill(self) -> None:
        """SIGKILL: nothing flushed, trimmed or marked."""
        self.process.kill()
        self.process.wait()

    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _java(self, main: str, args: list[str], capture=False, timeout=None):
        java = kafka_jars.find_java()
        command = [
            java, "-Xmx512m", "-XX:+UseSerialGC",
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            "-cp", kafka_jars.build(MODULE_DIR, self.version).classpath, main, *args,
        ]  # fmt: skip
        if capture:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        with open(self.home / "stdout.log", "ab") as stdout:  # the child keeps its own copy
            return subprocess.Popen(command, stdout=stdout, stderr=subprocess.STDOUT)

    def _wait_for(self, line: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerError(f"the broker exited ({self.process.returncode}):\n{self.tail()}")
            if self.server_log.is_file() and line in self.server_log.read_text(errors="replace"):
                return
            time.sleep(0.2)
        self.kill()
        raise BrokerError(f"no {line!r} within {START_TIMEOUT_S} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        parts = []
        for name in ("stdout.log", "server.log"):
            if (self.home / name).is_file():
                text = (self.home / name).read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {name}\n" + "\n".join(text))
        return "\n".join(parts)


def run_workload(broker: Broker, *, flood: bool = False) -> subprocess.Popen | None:
    """Workload.java against ``broker``; with ``flood``, returned still writing after the
    workloads are acknowledged (its stdout said WORKLOAD DONE)."""
    java = kafka_jars.find_java()
    command = [
        java, "-Xmx256m", "-XX:+UseSerialGC",
        f"-Dlog4j2.configurationFile={broker.home / 'log4j2-client.properties'}",
        "-cp", kafka_jars.build(MODULE_DIR, broker.version).classpath,
        "org.klogspec.broker.Workload", broker.bootstrap(), *(["--flood"] if flood else []),
    ]  # fmt: skip
    client_log = broker.home / "client.log"
    (broker.home / "log4j2-client.properties").write_text(LOG4J2.format(log_file=client_log))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + WORKLOAD_TIMEOUT_S
    output = []
    for line in process.stdout:
        output.append(line)
        if line.strip() == "WORKLOAD DONE":
            break
        if time.monotonic() > deadline:
            break
    if not output or output[-1].strip() != "WORKLOAD DONE":
        process.kill()
        process.wait()
        raise BrokerError("the workload failed:\n" + "".join(output[-30:]))
    if flood:
        return process
    process.wait(timeout=WORKLOAD_TIMEOUT_S)
    return None


@dataclass(frozen=True)
class BrokerCorpus:
    version: str
    root: Path

    @property
    def clean(self) -> Path:
        """The log directory of the cleanly stopped broker."""
        return self.root / "clean" / "logs"

    @property
    def killed(self) -> Path:
        """The log directory of the broker killed while writing."""
        return self.root / "killed" / "logs"


def broker_corpus(version: str = NEWEST) -> BrokerCorpus:
    """The two log directories of ``version``'s broker, made once and then cached (their
    stamp is a digest of what makes them: the pom, Workload.java, the broker's settings and
    CORPUS_LAYOUT)."""
    root = kafka_jars.cache_dir() / "broker-corpus" / version
    kafka_jars.build(MODULE_DIR, version)
    expected = _corpus_digest()
    done = root / "corpus.stamp"
    if done.is_file() and done.read_text() == expected:
        return BrokerCorpus(version, root)
    scratch = root.with_name(f"{version}.making-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    _make_clean(Broker(version, scratch / "clean"))
    _make_killed(Broker(version, scratch / "killed"))
    (scratch / "corpus.stamp").write_text(expected)
    shutil.rmtree(root, ignore_errors=True)
    scratch.rename(root)
    return BrokerCorpus(version, root)


def _corpus_digest() -> str:
    digest = hashlib.sha256((CORPUS_LAYOUT + SERVER_PROPERTIES).encode())
    for path in (MODULE_DIR / "pom.xml", *MODULE_DIR.glob("src/**/Workload.java")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _make_clean(broker: Broker) -> None:
    broker.format()
    broker.start()
    try:
        run_workload(broker)
    except BaseException:
        broker.kill()
        raise
    broker.stop()


def _make_killed(broker: Broker) -> None:
    broker.format()
    broker.start()
    try:
        producer = run_workload(broker, flood=True)
        time.sleep(FLOOD_S)
    finally:
        broker.kill()
    producer.kill()
    producer.wait()


def restart(version: str, home: Path) -> str:
    """Start a broker of ``version`` on ``home/logs`` (a copy of a corpus directory's home),
    wait until it has loaded every log, stop it cleanly; its server.log of this run."""
    broker = Broker(version, home)
    if broker.server_log.exists():
        broker.server_log.unlink()
    broker.start()
    broker.stop()
    return broker.server_log.read_text(errors="replace")
