"""``klogspec scan`` gives exactly ``klogspec verify``'s findings (same JSON Lines, same exit
status) on the corpus and on damaged directories, and writes them as its report."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from pipeline_trees import batch_positions, build_log_dir, data_batch, flip_byte, write_segment

from klogspec.verify.cli import verify
from pipeline.cli import scan
from pipeline.scan import FINDING_COLUMNS, SEGMENT_COLUMNS
from reference_impl.records.checksums import crc32c

pytestmark = pytest.mark.spark


def run(command, *args) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(command, ["--json", *map(str, args)], catch_exceptions=False)
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def damage(log_dir: Path) -> None:
    """One kind of damage per partition (the rule verify cites in brackets)."""
    segments = {}
    for name in ("crc-0", "torn-0", "zeros-0", "index-0", "gap-0", "deep-0", "frame-0"):
        directory = log_dir / name
        directory.mkdir()
        batches = [data_batch(3 * i) for i in range(6)]
        write_segment(directory, 0, batches[:3])
        write_segment(directory, 9, batches[3:])
        segments[name] = directory / f"{0:020d}.log"
    crc = segments["crc-0"]
    flip_byte(crc, batch_positions(crc)[1] + 70)  # BATCH-4
    torn = segments["torn-0"]
    torn.write_bytes(torn.read_bytes()[:-20])  # a rolled segment's partial tail (FRAME-9)
    zeros = log_dir / "zeros-0" / f"{9:020d}.log"
    zeros.write_bytes(zeros.read_bytes() + bytes(4096))  # the active segment's (FRAME-8)
    index = segments["index-0"].with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 2, 5))  # an entry inside a batch
    gap = log_dir / "gap-0"  # a renamed segment: a gap, offsets below its name (FRAME-12)
    (gap / f"{9:020d}.log").rename(gap / f"{12:020d}.log")  # and orphan indexes (PART-3)
    deep = bytearray(segments["deep-0"].read_bytes())
    deep[61] = 0x7F  # the first record's length varint, under a valid CRC (REC-2, --deep)
    struct.pack_into(">I", deep, 17, crc32c(memoryview(deep)[21 : first_batch_end(deep)]))
    segments["deep-0"].write_bytes(bytes(deep))
    frame = bytearray(segments["frame-0"].read_bytes())
    struct.pack_into(">i", frame, batch_positions(segments["frame-0"])[2] + 8, 3)  # FRAME-3
    segments["frame-0"].write_bytes(bytes(frame))
    (log_dir / "orphan-0").mkdir()
    (log_dir / "orphan-0" / f"{0:020d}.index").write_bytes(b"")  # an index without its .log
    (log_dir / "crc-0" / f"{0:020d}.log.swap").write_bytes(b"")  # a stale swap file (PART-4)


def first_batch_end(data: bytearray) -> int:
    """The end of the first batch of ``data``."""
    return 12 + struct.unpack_from(">i", data, 8)[0]


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> Path:
    log_dir = build_log_dir(tmp_path_factory.mktemp("scan"))
    damage(log_dir)
    return log_dir


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_scan_and_verify_agree_on_damaged_directories(spark, damaged, deep):
    flags = ["--deep"] if deep else []
    want = run(verify, *flags, damaged)
    got = run(scan, *flags, damaged)
    assert got == want
    status, lines = got
    rules = {line["rule"] for line in lines[:-1]}
    assert status == 1 and {"BATCH-4", "FRAME-9", "FRAME-8", "OIDX-5", "FRAME-3", "FRAME-12",
                            "PART-2", "PART-3", "PART-4"} <= rules  # fmt: skip
    assert ("REC-2" in rules) == deep


def test_a_tree_of_hundreds_of_segments(spark, tmp_path):
    """12 partitions of 20 segments in two log directories: scan is verify, and the data
    source reads every batch once."""
    for broker in ("broker-1", "broker-2"):
        for p in range(6):
            directory = tmp_path / broker / f"events-{p}"
            directory.mkdir(parents=True)
            for s in range(20):
                write_segment(directory, 6 * s, [data_batch(6 * s), data_batch(6 * s + 3)])
    status, lines = run(scan, tmp_path)
    assert (status, lines) == run(verify, tmp_path)
    assert lines[-1]["segments"] == 240 and lines[-1]["partitions"] == 12
    frame = spark.read.format("kafka-segments").option("level", "batch").load(str(tmp_path))
    assert frame.count() == 480
    assert frame.select("file").distinct().count() == 240


@pytest.mark.corpus
def test_scan_and_verify_agree_on_the_corpus_and_the_report_holds_the_findings(
    spark, corpus, tmp_path
):
    want = run(verify, corpus)
    got = run(scan, "--out", tmp_path / "report", corpus)
    assert got == want
    status, lines = got
    *findings, summary_line = lines
    report = tmp_path / "report"
    summary = json.loads((report / "summary.json").read_text())
    assert {k: summary[k] for k in summary_line} == summary_line
    assert summary["exitStatus"] == status and summary["paths"] == [str(corpus)]
    rows = pq.read_table(report / "findings").to_pylist()
    assert [name for name, _, _ in FINDING_COLUMNS] == list(rows[0])
    assert [{k: v for k, v in row.items() if k != "seq"} for row in rows] == findings
    assert [row["seq"] for row in rows] == list(range(len(findings)))
    segments = pq.read_table(report / "segments")
    assert segments.column_names == [name for name, _, _ in SEGMENT_COLUMNS]
    assert segments.num_rows == summary["segments"]
    logs = [r for r in segments.to_pylist() if r["file"].endswith(".log")]
    assert sum(r["batches"] for r in logs) == 157_716  # as test_corpus.py counts them


def test_nothing_to_scan_is_exit_status_2(spark, tmp_path):
    result = CliRunner().invoke(scan, [str(tmp_path)])
    assert result.exit_code == 2
