"""Each index rule written once (issue 24 point 5): the checks of
reference_impl/formats/index_entries.py yield ``Problem`` values, the log raises the first
and ``klogspec verify`` reports them all, with the same words; one lookup (Kafka's search)
serves the log and ``klogspec dump``; one step over a bad entry serves every walk."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

import reference_impl.formats.index_entries as index
from klogspec import cli
from klogspec.index_files import IndexSlots
from klogspec.verify import Findings
from klogspec.verify.index import TxnIndexCheck, read_index
from klogspec.walk import following_entry, next_entry
from pipeline.reader import _next_entry as pipeline_next_entry
from reference_impl.errors import CorruptIndexError, Problem
from reference_impl.formats.index_entries import AbortedTxn, OffsetPosition, TimestampOffset
from reference_impl.log.offset_index import OffsetIndex
from reference_impl.log.time_index import TimeIndex
from reference_impl.records import SimpleRecord, build_record_batch

BASE = 100


def time_image(entries, tail: bytes = b"") -> bytes:
    return b"".join(struct.pack(">qi", t, o - BASE) for t, o in entries) + tail


def verify_findings(path: Path, *, time: bool) -> list:
    findings = Findings()
    read_index(str(path), BASE, time=time, active=True, findings=findings)
    return findings.done()


# --- sanity checks: the log raises the first problem, verify reports them all ------------------


@pytest.mark.req("TIDX-5", "TIDX-6", "TIDX-7")
def test_time_index_problems_the_log_raises_the_first_verify_reports_all(tmp_path):
    """Last timestamp below the first, last offset below the base and a torn tail at once:
    ``index_problems`` yields all three in Kafka's order, TimeIndex.sanity_check raises the
    first (as TimeIndex.sanityCheck throws on it), verify reports each with the same words."""
    path = tmp_path / f"{BASE:020d}.timeindex"
    path.write_bytes(time_image([(500, 150), (400, 99)], b"\x01"))
    data = path.read_bytes()
    entry = lambda slot: index.time_index_entry(data, slot, BASE)  # noqa: E731
    problems = list(index.index_problems(len(data), entry, BASE, time=True, file=str(path)))
    assert [p.rule for p in problems] == ["TIDX-6", "TIDX-7", "TIDX-5"]
    with pytest.raises(CorruptIndexError) as caught:
        TimeIndex(path, BASE).sanity_check()
    assert caught.value.message == problems[0].message and caught.value.position == 12
    reported = {(f.rule, f.message) for f in verify_findings(path, time=True)}
    assert {(p.rule, p.message) for p in problems} <= reported
    assert "TIDX-3" in {rule for rule, _ in reported}  # and the order rule, verify's own


@pytest.mark.req("OIDX-2", "OIDX-3")
def test_offset_index_problems_are_one_definition(tmp_path):
    path = tmp_path / f"{BASE:020d}.index"
    path.write_bytes(struct.pack(">ii", -1, 40) + b"\x00\x00\x00")
    with pytest.raises(CorruptIndexError) as caught:
        OffsetIndex(path, BASE).sanity_check()
    assert "less than the base offset" in caught.value.message
    reported = {f.rule: f.message for f in verify_findings(path, time=False)}
    assert reported["OIDX-3"] == caught.value.message
    assert "not a multiple of the 8-byte entry size" in reported["OIDX-2"]


def test_problem_is_the_error_the_log_raises():
    problem = Problem("OIDX-3", "x.index", 8, 99, "below")
    error = problem.error()
    assert isinstance(error, CorruptIndexError)
    assert (error.file, error.position, error.offset, error.message) == ("x.index", 8, 99, "below")


@pytest.mark.req("OIDX-4", "TIDX-3")
@pytest.mark.parametrize(
    ("previous", "entry", "rule"),
    [
        (OffsetPosition(5, 10), OffsetPosition(6, 20), None),
        (OffsetPosition(5, 10), OffsetPosition(5, 20), "OIDX-4"),
        (None, TimestampOffset(-2, 5), "TIDX-3"),  # a negative timestamp
        (TimestampOffset(10, 5), TimestampOffset(11, 5), None),  # offsets may repeat
        (TimestampOffset(10, 5), TimestampOffset(10, 6), "TIDX-3"),  # timestamps increase
        (TimestampOffset(10, 5), TimestampOffset(11, 4), "TIDX-3"),  # offsets never decrease
    ],
)
def test_order_rules(previous, entry, rule):
    problem = index.order_problem(previous, entry, position=8)
    assert (problem.rule if problem else None) == rule


@pytest.mark.req("TXN-3", "TXN-6", "TXN-7")
def test_txn_rules_the_log_raises_verify_reports(tmp_path):
    path = tmp_path / f"{BASE:020d}.txnindex"
    entries = [
        AbortedTxn(1, 100, 110, 100),
        AbortedTxn(1, 90, 95, 90),
        AbortedTxn(1, 100, 105, 100),
    ]
    data = b"".join(index.encode_aborted_txn(t) for t in entries)
    path.write_bytes(data + b"\x01" + index.encode_aborted_txn(entries[0])[1:])  # version 1
    findings = Findings()
    TxnIndexCheck(str(path), BASE, True, findings)
    assert [f.rule for f in findings.done()] == ["TXN-6", "TXN-7", "TXN-3"]
    with pytest.raises(CorruptIndexError) as caught:
        index.sanity_check_txn_index(data, BASE)
    assert caught.value.message == findings.done()[0].message
    with pytest.raises(CorruptIndexError, match="version 1"):
        index.read_txn_index(path.read_bytes())


# --- the stop rule ----------------------------------------------------------------------------


@pytest.mark.req("OIDX-10", "TIDX-12")
def test_stop_rule_and_the_blank_slot_0():
    assert not index.is_unused_slot(0, 0)  # slot 0 may hold the base offset
    assert index.is_unused_slot(0, 0, blank=True)  # ... but an all-zero one may count unused
    assert index.is_unused_slot(3, 0) and not index.is_unused_slot(3, 7)


# --- one lookup: Kafka's ------------------------------------------------------------------------


def untrimmed_index(path: Path, entries, zero_slots: int) -> None:
    data = b"".join(index.encode_offset_index_entry(e, BASE) for e in entries)
    path.write_bytes(data + bytes(8 * zero_slots))


@pytest.mark.req("OIDX-6", "OIDX-9")
@pytest.mark.parametrize("zero_slots", [0, 3, 1500])
def test_dump_looks_up_as_the_log_does(tmp_path, zero_slots):
    """``lookup_offset`` over the file's slots as Kafka opens it (what dump searches) gives
    OffsetIndex.lookup's answer for every target, zero slots included."""
    path = tmp_path / f"{BASE:020d}.index"
    untrimmed_index(
        path, [OffsetPosition(BASE + 10, 100), OffsetPosition(BASE + 20, 200)], zero_slots
    )
    log_index = OffsetIndex(path, BASE)
    with path.open("rb") as handle:
        slots = IndexSlots(handle, BASE, time=False)
        for target in range(BASE - 1, BASE + 30):
            assert index.lookup_offset(slots, target, BASE) == log_index.lookup(target), target
    log_index.close_handler()
    if zero_slots > 1024:  # the warm section is all zero slots: the scan starts at 0
        assert log_index.lookup(BASE + 15) == OffsetPosition(BASE, 0)


def test_dump_verify_index_only_on_an_untrimmed_index_follows_kafkas_lookup(tmp_path):
    """A .log whose second batch (offsets 10-15) sits after one holding 20-25, an untrimmed
    offset index and a time index pointing at offset 15. Kafka's lookup on the untrimmed
    offset index gives position 0, whose batch (20-25) does not hold 15: DumpLogSegments
    reports "offset not found", and so does dump now (a floor search of the real entries
    used to start at the second batch and report nothing)."""
    base, ts = 0, 1_700_000_000_000
    first = build_record_batch([SimpleRecord(b"a", timestamp=ts)] * 6, base_offset=20)
    second = build_record_batch([SimpleRecord(b"b", timestamp=ts + 5)] * 6, base_offset=10)
    directory = tmp_path / "t-0"
    directory.mkdir()
    (directory / f"{base:020d}.log").write_bytes(first + second)
    index_bytes = index.encode_offset_index_entry(OffsetPosition(15, len(first)), base)
    (directory / f"{base:020d}.index").write_bytes(index_bytes + bytes(8 * 1500))
    time_bytes = index.encode_time_index_entry(TimestampOffset(ts + 5, 15), base)
    (directory / f"{base:020d}.timeindex").write_bytes(time_bytes + bytes(12 * 10))
    args = ["dump", "--json", "--verify-index-only", str(directory / f"{base:020d}.timeindex")]
    result = CliRunner().invoke(cli.main, args, catch_exceptions=False)
    summary = [json.loads(line) for line in result.stdout.splitlines()][-1]
    assert summary["mismatches"] == [
        {"kind": "offset_not_found", "slot": 0, "indexValue": 15, "logValue": 25,
         "allowedBy": "TIDX-9"},
    ]  # fmt: skip


# --- one step over a bad entry ------------------------------------------------------------------


class _Source:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, position: int, size: int) -> bytes:
        return self.data[position : position + size]


@pytest.mark.req("FRAME-3", "FRAME-7")
@pytest.mark.parametrize(
    ("size_field", "end", "expected"),
    [(100, 200, 112), (100, 111, None), (13, 200, None), (14, 200, 26)],
)
def test_walks_step_over_an_entry_alike(tmp_path, size_field, end, expected):
    """klogspec's walk and the pipeline's step by ``following_entry``: a size below the
    minimum entry (FRAME-3) or past the end stops the walk."""
    data = struct.pack(">qi", 0, size_field).ljust(end, b"\x00")
    path = tmp_path / "x.log"
    path.write_bytes(data)
    assert following_entry(_Source(data).read, 0, end) == expected
    assert pipeline_next_entry(_Source(data), 0, end) == expected
    with path.open("rb") as handle:
        assert next_entry(handle, 0, end) == expected
    assert following_entry(_Source(data[:5]).read, 0, end) is None  # a partial size field


@pytest.mark.req("TXN-4", "OIDX-2")
def test_dump_and_verify_report_a_torn_index_in_the_same_words(tmp_path):
    """A partial last .txnindex entry (TXN-4) and a torn .index (OIDX-2): dump's default pass
    and verify report the one Problem each, at the same position."""
    directory = tmp_path / "t-0"
    directory.mkdir()
    txn = directory / f"{BASE:020d}.txnindex"
    txn.write_bytes(index.encode_aborted_txn(AbortedTxn(1, 100, 110, 100)) + b"\x00" * 5)
    offsets = directory / f"{BASE:020d}.index"
    offsets.write_bytes(struct.pack(">ii", 3, 40) + b"\x00" * 3)
    findings = Findings()
    TxnIndexCheck(str(txn), BASE, True, findings)
    read_index(str(offsets), BASE, time=False, active=True, findings=findings)
    reported = {f.rule: (f.position, f.message) for f in findings.done()}
    for path, rule in ((txn, "TXN-4"), (offsets, "OIDX-2")):
        result = CliRunner().invoke(cli.main, ["dump", "--json", str(path)], catch_exceptions=False)
        (error,) = [json.loads(line) for line in result.stdout.splitlines()][-1]["errors"]
        assert (error["position"], error["message"]) == reported[rule], rule
