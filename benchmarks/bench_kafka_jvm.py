"""Figure 11: the Kafka baselines (issue 25): Apache Kafka 4.4.0's own JVM code on the same
files, in the same run, warm.

Kafka's side is ``benchmarks/kafka_bench/`` (``KafkaBench.java``), a Maven module of ours built
by ``conformance/kafka_jars.build`` into the cache (Kafka's jars from Maven Central stay in
``~/.m2``): a JVM of its own for each figure, asked for the same job again and again over a
line protocol, the files reset by this side between requests. Its first request is the
**JIT-cold** figure (``details.kafka_cold_*``), then ``WARMUP`` untimed requests, then
``--repeats`` rounds with ours, best of each: the **warm** figure, which the ratio uses.
Both sides are CPU seconds of their process (the JVM's GC and JIT threads count: they are
Kafka's cost), wall seconds kept in the details; opening and closing a log are not timed on
either side except where opening is the job (recovery).

* ``kafka-recover``: ``Log.open`` of figure 4's crashed log (one segment of 16 KiB batches,
  a torn tail, the indexes a crash leaves) against ``UnifiedLog.create`` of it, LogLoader's
  unclean load from recovery point 0; target >= 1.0;
* ``kafka-append``: ``Log.append_as_leader`` of figure 3's client batches (16 KiB, base
  offset 0, an idempotent producer's sequences) against ``UnifiedLog.appendAsLeader``
  (origin CLIENT), both with the topic defaults (index every 4 KiB, no flush); >= 0.5;
* ``kafka-read``: a consumer's fetch loop over a cleanly closed log: ``Log.read`` against
  ``UnifiedLog.read`` from offset 0 to the end, 1 MiB a fetch, high-watermark isolation,
  each fetch's bytes copied out of the file (what the fetch's send reads) and walked for the
  next fetch offset; >= 0.5;
* ``kafka-dump``: whole processes on one segment: ``klogspec dump --deep --print-data --json``
  against ``kafka-dump-log --deep-iteration --print-data-log`` (DumpLogSegments with
  kafka-run-class.sh's JVM options), output to /dev/null, CPU seconds of each process
  (``process_seconds``), wall seconds in the details; >= 2.0;
* ``kafka-clean``: one cleaning pass of a compacted log (8 MiB segments, every batch the same
  15 keys, so the pass keeps the newest 15 records) from offset 0 to the active segment:
  the reference ``Cleaner.clean`` against Kafka's ``Cleaner.clean``, both with a 4 MiB offset
  map and a 256 KiB I/O buffer; >= 0.5.

Without Java 17+, Maven or the release jars every figure is SKIP with the reason.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

from conformance import kafka_jars
from reference_impl.log.config import LogConfig
from reference_impl.log.log_cleaner import Cleaner
from reference_impl.log.unified_log import Log

from .bench_recover import LOG_NAME, SEGMENT_SUFFIXES, after_crash, crashed_log, recover
from .harness import Context, Figure, Target, cpu_seconds
from .workload import LEADER_EPOCH, KiB, MiB, batch_template, batches, write_segment

MODULE_DIR = Path(__file__).resolve().parent / "kafka_bench"
MAIN_CLASS = "org.klogspec.bench.KafkaBench"
DUMP_CLASS = "org.apache.kafka.tools.DumpLogSegments"
VERSION = "4.4.0"
FETCH_BYTES = 1 * MiB
CLEAN_SEGMENT_BYTES = 8 * MiB
WARMUP = 2  # untimed requests between the cold one and the timed rounds
# bin/kafka-run-class.sh's defaults: KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS
KAFKA_RUN_CLASS_OPTS = (
    "-Xmx256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
)  # fmt: skip
FIGURES = {  # name: (title, our label, Kafka's label, target ratio)
    "kafka-recover": ("Recovery against Kafka's LogLoader", "Log.open after a crash",
                      "UnifiedLog.create, unclean load (Kafka 4.4.0, warm)", 1.0),
    "kafka-append": ("Append as leader against Kafka's", "Log.append_as_leader, 16 KiB",
                     "UnifiedLog.appendAsLeader (Kafka 4.4.0, warm)", 0.5),
    "kafka-read": ("Fetch loop against Kafka's", "Log.read, 1 MiB fetches",
                   "UnifiedLog.read, 1 MiB fetches (Kafka 4.4.0, warm)", 0.5),
    "kafka-dump": ("Dump a segment against kafka-dump-log", "klogspec dump --print-data --json",
                   "kafka-dump-log --deep-iteration --print-data-log (4.4.0)", 2.0),
    "kafka-clean": ("Cleaning pass against Kafka's Cleaner", "reference Cleaner.clean",
                    "Cleaner.clean (Kafka 4.4.0, warm)", 0.5),
}  # fmt: skip


class KafkaJvm:
    """One KafkaBench JVM: ``request(words)`` sends a line, returns (CPU s, wall s, detail).
    Its stderr (Kafka's and SLF4J's log lines) goes to ``stderr_path``, not into the report."""

    def __init__(self, built: kafka_jars.Built, stderr_path: Path) -> None:
        command = kafka_jars.java_command(built, MAIN_CLASS)
        self.stderr_path = stderr_path
        with open(stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                text=True, bufsize=1,
            )  # fmt: skip

    def request(self, *words: object) -> tuple[float, float, int]:
        self.process.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline().split()
        if not reply or reply[0] != "ok":
            why = " ".join(reply) or "the JVM ended: " + self.stderr_path.read_text()[-500:]
            raise RuntimeError(f"Kafka's {words[0]} failed: {why}")
        return int(reply[1]) / 1e9, int(reply[2]) / 1e9, int(reply[3])

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


def compare(ctx: Context, jvm: KafkaJvm, words: tuple, ours, setup, kafka_setup=None) -> dict:
    """Kafka's request cold once, ``WARMUP`` times untimed, then ``repeats`` rounds of Kafka's
    and ours interleaved: the best CPU seconds of each, and the wall seconds. ``setup`` runs
    before each of ours, ``kafka_setup`` (default ``setup``) before each of Kafka's."""
    kafka_setup = kafka_setup or setup
    kafka_setup()
    cold_cpu, cold_wall, detail = jvm.request(*words)
    for _ in range(WARMUP):
        kafka_setup()
        jvm.request(*words)
    kafka, kafka_wall, mine, wall = float("inf"), float("inf"), float("inf"), {}
    for _ in range(ctx.repeats):
        kafka_setup()
        cpu, seconds, detail = jvm.request(*words)
        kafka, kafka_wall = min(kafka, cpu), min(kafka_wall, seconds)
        mine = min(mine, cpu_seconds(ours, setup, wall, "ours"))
    return {
        "cpu_seconds": round(mine, 4), "wall_seconds": round(wall["ours"], 4),
        "kafka_cpu_seconds": round(kafka, 4), "kafka_wall_seconds": round(kafka_wall, 4),
        "kafka_cold_cpu_seconds": round(cold_cpu, 4),
        "kafka_cold_wall_seconds": round(cold_wall, 4), "kafka_detail": detail,
    }  # fmt: skip


def figure(name: str, nbytes: int, times: dict, **details) -> Figure:
    """A throughput figure (MiB/s) from the CPU seconds of both sides (``details.judged_on``)."""
    on = "cpu_seconds"
    title, ours_label, kafka_label, target = FIGURES[name]
    kafka = times["kafka_" + on]
    cold = times.get("kafka_cold_" + on)
    return Figure(
        name=name, title=title, unit="MiB/s", ours=nbytes / times[on] / MiB,
        ours_label=ours_label, baseline=nbytes / kafka / MiB, baseline_label=kafka_label,
        target=Target("ratio", ">=", target),
        details={"bytes": nbytes, "kafka_version": VERSION, "judged_on": on, **times,
                 "kafka_cold_mib_s": None if cold is None else round(nbytes / cold / MiB, 1),
                 "cold_ratio": None if cold is None else round(cold / times[on], 4),
                 **details},
    )  # fmt: skip


def recovery(ctx: Context, jvm: KafkaJvm) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    directory = ctx.scratch("kafka-recover") / "bench-0"
    directory.mkdir()
    segment = crashed_log(directory, template, ctx.size)
    setup = lambda: after_crash(directory, segment, template)  # noqa: E731
    times = compare(ctx, jvm, ("recover", directory), lambda: recover(directory, segment), setup)
    if times["kafka_detail"] != segment.records:
        raise RuntimeError(
            f"Kafka recovered {times['kafka_detail']} records, not {segment.records}"
        )
    shutil.rmtree(directory.parent, ignore_errors=True)
    return figure("kafka-recover", segment.size + segment.tail, times, batches=segment.batches)


def append(ctx: Context, jvm: KafkaJvm) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    count = max(1, ctx.size // 8 // template.size)
    client_batches = list(batches(template, count, client=True))
    folder = ctx.scratch("kafka-append")
    batches_file = folder / "client-batches"
    batches_file.write_bytes(b"".join(client_batches))
    state = {}

    def open_log() -> None:
        shutil.rmtree(folder / "ours", ignore_errors=True)
        state["log"] = Log.open(folder / "ours" / "bench-0")

    def ours() -> None:
        log = state.pop("log")
        for batch in client_batches:
            log.append_as_leader(batch, LEADER_EPOCH)
        log.close_handlers()

    kafka_dir = folder / "kafka" / "bench-0"
    words = ("append", kafka_dir, batches_file, LEADER_EPOCH)
    times = compare(ctx, jvm, words, ours, open_log, kafka_setup=lambda: None)
    if times["kafka_detail"] != count * template.count:
        raise RuntimeError(f"Kafka's log end offset is {times['kafka_detail']}")
    ctx.profiled("kafka-append", ours, setup=open_log)
    shutil.rmtree(folder, ignore_errors=True)
    return figure("kafka-append", count * template.size, times, batches=count)


def fetch_loop(log: Log, max_bytes: int = FETCH_BYTES) -> int:
    """A consumer's fetches from offset 0 to the log end: the bytes read (a fetch may end in
    part of a batch, which the next fetch reads again, on both sides)."""
    offset, total, end = 0, 0, log.log_end_offset
    while offset < end:
        data = log.read(offset, max_bytes, min_one_message=True).data()
        total += len(data)
        offset = next_offset(data)
    return total


_OFFSET_AND_LENGTH = struct.Struct(">qi")  # a v2 batch's baseOffset and batchLength
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23


def next_offset(data: bytes) -> int:
    """The offset after the last whole v2 batch of a fetch (base offset + last offset delta + 1),
    as a consumer finds its next fetch offset; Kafka's side walks its buffer the same way."""
    position, found, size = 0, -1, len(data)
    while position + 27 <= size:
        base, length = _OFFSET_AND_LENGTH.unpack_from(data, position)
        if position + length + 12 > size:
            break
        found = base + _LAST_OFFSET_DELTA.unpack_from(data, position + 23)[0] + 1
        position += length + 12
    if found < 0:
        raise RuntimeError("a fetch returned no whole batch")
    return found


def read(ctx: Context, jvm: KafkaJvm) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    root = ctx.scratch("kafka-read")
    directory, kafka_dir = root / "ours" / "bench-0", root / "kafka" / "bench-0"
    directory.mkdir(parents=True)
    segment = write_segment(str(directory / LOG_NAME), template, ctx.size)
    Log.open(directory).close()  # indexes built, and trimmed by the clean shutdown
    # Kafka's copy: the same .log (a hard link) and the closed indexes, before ours opens
    # them again (an open log's active indexes are preallocated, which Kafka would misread)
    kafka_dir.mkdir(parents=True)
    for path in directory.iterdir():
        if path.name.endswith(SEGMENT_SUFFIXES):
            link = os.link if path.suffix == ".log" else shutil.copyfile
            link(path, kafka_dir / path.name)
    log = Log.open(directory)
    state = {}
    times = compare(ctx, jvm, ("read", kafka_dir, FETCH_BYTES),
                    lambda: state.update(bytes=fetch_loop(log)), lambda: None)  # fmt: skip
    log.close_handlers()
    if not times["kafka_detail"] == state["bytes"] == segment.size:
        raise RuntimeError(f"fetched {state['bytes']} bytes, Kafka {times['kafka_detail']}")
    shutil.rmtree(root, ignore_errors=True)
    return figure("kafka-read", segment.size, times, fetches=-(-segment.size // FETCH_BYTES))


def clean(ctx: Context, jvm: KafkaJvm) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    root = ctx.scratch("kafka-clean")
    pristine, work = root / "dirty", root / "work"
    count = max(2, ctx.size // 8 // template.size)
    writer = Log.open(pristine / "bench-0", LogConfig(segment_bytes=CLEAN_SEGMENT_BYTES))
    for batch in batches(template, count, client=True):
        writer.append_as_leader(batch, LEADER_EPOCH)
    writer.roll()  # the active segment is never cleaned: every batch lies below it
    end, total = writer.log_end_offset, writer.size
    writer.close()
    state = {}

    def dirty_copy() -> None:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(pristine, work)

    def setup() -> None:
        dirty_copy()
        state["log"] = Log.open(work / "bench-0", LogConfig(cleanup_policy="compact"))

    def ours() -> None:
        log = state.pop("log")
        _, stats = Cleaner().clean(log, 0, end, log.clock.milliseconds())
        state["written"] = stats.messages_written
        log.close_handlers()

    times = compare(ctx, jvm, ("clean", work / "bench-0", end), ours, setup, dirty_copy)
    if times["kafka_detail"] != state["written"]:
        raise RuntimeError(f"Kafka kept {times['kafka_detail']} records, ours {state['written']}")
    shutil.rmtree(root, ignore_errors=True)
    return figure("kafka-clean", total, times, records_kept=state["written"], records=end)


def dump(ctx: Context, built: kafka_jars.Built) -> Figure:
    template = batch_template(16 * KiB, ctx.shape)
    directory = ctx.scratch("kafka-dump")
    path = str(directory / LOG_NAME)
    segment = write_segment(path, template, ctx.size // 8)
    kafka = kafka_jars.java_command(built, DUMP_CLASS, ["--deep-iteration", "--print-data-log",
                                                        "--files", path])  # fmt: skip
    kafka[1:1] = KAFKA_RUN_CLASS_OPTS
    # --print-data: the keys and values too, as --print-data-log prints them
    ours = [sys.executable, "-c", "from klogspec.cli import main; main()", "dump", "--deep",
            "--print-data", "--json", path]  # fmt: skip
    cpu = {"kafka": float("inf"), "ours": float("inf")}
    wall = dict(cpu)
    for _ in range(ctx.repeats):
        for side, command in (("kafka", kafka), ("ours", ours)):
            seconds, used = process_seconds(command)
            wall[side], cpu[side] = min(wall[side], seconds), min(cpu[side], used)
    shutil.rmtree(directory, ignore_errors=True)
    times = {"cpu_seconds": round(cpu["ours"], 4), "wall_seconds": round(wall["ours"], 4),
             "kafka_cpu_seconds": round(cpu["kafka"], 4),
             "kafka_wall_seconds": round(wall["kafka"], 4)}  # fmt: skip
    return figure("kafka-dump", segment.size, times, records=segment.records)


def process_seconds(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, every thread) of a whole process, output dropped.
    The figure is judged on the CPU seconds, as the in-process ones: on a loaded machine the
    wall time is mostly the wait for a core, which a JVM's dozen threads win more of than
    one Python thread; on an idle one the JVM's parallel JIT and GC threads make its wall
    time the shorter (both are in the details)."""
    start = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        error = child.stderr.read().decode(errors="replace")
    if child.returncode != 0:
        raise RuntimeError(f"{command[-1]}: exit {child.returncode}: {error[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(ctx: Context, name: str) -> Figure:
    """One figure, in a JVM of its own (so its cold request is the JVM's first)."""
    try:
        built = kafka_jars.build(MODULE_DIR, VERSION)
    except kafka_jars.KafkaJarsError as exc:
        return skipped(name, str(exc))
    if name == "kafka-dump":
        return dump(ctx, built)
    jvm = KafkaJvm(built, ctx.scratch("kafka-jvm") / "stderr.txt")
    try:
        return MEASURES[name](ctx, jvm)
    finally:
        jvm.close()


MEASURES = {"kafka-recover": recovery, "kafka-append": append, "kafka-read": read,
            "kafka-clean": clean}  # fmt: skip


def skipped(name: str, why: str) -> Figure:
    title, ours_label, kafka_label, target = FIGURES[name]
    return Figure(name, title, "MiB/s", None, ours_label, None, kafka_label,
                  Target("ratio", ">=", target), status="SKIP", note=why)  # fmt: skip


def figures(ctx: Context) -> list:
    return [([name], lambda name=name: measure(ctx, name)) for name in FIGURES]
