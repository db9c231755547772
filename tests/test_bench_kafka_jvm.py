"""benchmarks/bench_kafka_jvm.py's parts that need no full run (the figures themselves are
checked on tests/test_benchmarks.py's quick run): the consumer's next fetch offset, the
KafkaBench JVM's replies, and a SKIP naming the reason without Java or Maven."""

import pytest

from benchmarks import bench_kafka_jvm
from benchmarks.harness import Context
from benchmarks.workload import KiB, RecordShape, batch_template, batches
from conformance import kafka_jars
from reference_impl.log.unified_log import Log


def fetch(count: int) -> bytes:
    template = batch_template(1 * KiB, RecordShape())
    return b"".join(batches(template, count, base_offset=100))


def test_next_offset_is_after_the_last_whole_batch():
    data = fetch(3)  # one record a batch: offsets 100, 101, 102
    assert bench_kafka_jvm.next_offset(data) == 103
    assert bench_kafka_jvm.next_offset(data[: len(data) - 10]) == 102  # a cut last batch
    with pytest.raises(RuntimeError, match="no whole batch"):
        bench_kafka_jvm.next_offset(data[:40])


def test_without_java_or_maven_every_figure_is_skip_with_the_reason(monkeypatch, tmp_path):
    def no_maven(module_dir, version):
        raise kafka_jars.KafkaJarsError("Maven (mvn) is needed and is not on the PATH")

    monkeypatch.setattr(kafka_jars, "build", no_maven)
    ctx = Context(size=KiB, memory_size=KiB, quick=True, repeats=1, shape=RecordShape(),
                  tmp=tmp_path, out=tmp_path)  # fmt: skip
    figures = [bench_kafka_jvm.measure(ctx, name) for name in bench_kafka_jvm.FIGURES]
    assert [f.name for f in figures] == list(bench_kafka_jvm.FIGURES)
    for figure in figures:
        assert figure.status == "SKIP" and "Maven" in figure.note
        assert figure.target.value == bench_kafka_jvm.FIGURES[figure.name][3]


def test_the_jvm_answers_each_request_or_names_the_error(kafka_or_skip, tmp_path):
    built = kafka_or_skip("benchmark module", kafka_jars.build, bench_kafka_jvm.MODULE_DIR, "4.4.0")
    jvm = bench_kafka_jvm.KafkaJvm(built, tmp_path / "stderr.txt")
    try:
        with pytest.raises(RuntimeError, match="unknown request"):
            jvm.request("compact", tmp_path)
        directory = tmp_path / "bench-0"
        batches_file = tmp_path / "client-batches"
        template = batch_template(16 * KiB, RecordShape())
        batches_file.write_bytes(b"".join(batches(template, 4, client=True)))
        cpu, wall, log_end = jvm.request("append", directory, batches_file, 0)
        assert log_end == 4 * template.count and cpu > 0 and wall > 0
        # the same bytes again: Kafka assigned offsets in its copy, each request starts afresh
        assert jvm.request("append", directory, batches_file, 0)[2] == log_end
        # a consumer's fetches of 20 KiB: a batch and part of the next, which the next fetch
        # reads again; the reference's fetch loop reads the same bytes
        fetched = jvm.request("read", directory, 20 * KiB)[2]
        log = Log.open(directory)
        try:
            assert fetched == bench_kafka_jvm.fetch_loop(log, 20 * KiB) > 4 * template.size
        finally:
            log.close_handlers()
    finally:
        jvm.close()
    assert jvm.process.returncode == 0
