"""Damage to a closed log, then recovery of every segment (``klogspec recover --from-offset 0``
in process, and the loader as a broker with recovery point 0 would run it): a bit flip in any
batch, a zero-filled tail, garbage after the last batch, an index cut mid-entry, a missing
index, a missing ``.log`` beside its indexes, stale ``.deleted``/``.cleaned``/``.swap`` files.

Each case checks: the log holds exactly the longest valid prefix the damage leaves (the
model: the workload's batches); the loader did what the plan said; what it removed is in
the quarantine folder byte for byte; a second run has nothing to do. Every few cases (all
with --runslow): the log takes an append at its end and ``klogspec verify`` is clean.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from klogspec.recover.journal import MANIFEST
from klogspec.recover.run import recover_partition
from klogspec.verify.findings import Severity
from klogspec.verify.run import verify_paths
from reference_impl.formats.file_naming import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
)
from reference_impl.log.clock import ManualClock
from reference_impl.records import iter_batches

from .checks import Counts, check_appends_and_verify, checkpoint_offset, last_offset, recover
from .fault_fs import Snapshot, materialize
from .support import MOCK_TIME_START, open_log, partition_dir
from .workload import CONFIGS, record_workload

CONFIG = CONFIGS["plain"]
TOOL_CONFIG = replace(CONFIG, file_delete_delay_ms=0)
DIR = "topic-0/"
FLIP_BYTES = (8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23, 25, 27, 31, 35, 43, 51, 53, 57, 61)


@pytest.fixture(scope="module")
def closed(tmp_path_factory) -> Snapshot:
    """The workload's log after its clean close: segments of leader and follower batches of
    every codec, a truncation and a deletion behind them."""
    recorder, _ = record_workload(tmp_path_factory.mktemp("workload"), CONFIG)
    return recorder.snapshots[-1]


def segments_of(state: Snapshot) -> list[str]:
    return sorted(n for n in state if n.startswith(DIR) and n.endswith(".log"))


def batches_in(state: Snapshot) -> list[tuple[str, int, bytes]]:
    """(segment, position, raw) of every batch, in log order."""
    out = []
    for name in segments_of(state):
        for b in iter_batches(state[name]):
            out.append((name, b.position, b.raw))
    return out


def raws(state: Snapshot) -> tuple[bytes, ...]:
    return tuple(raw for _, _, raw in batches_in(state))


def run_tool(state: Snapshot, root: Path):
    materialize(state, root)
    report = recover_partition(partition_dir(root), TOOL_CONFIG, from_offset=0)
    assert report.error is None, report.error
    return report


def check_quarantine(report, state: Snapshot) -> None:
    """RECOV-14, RECOV-15, RECOV-20: every removed byte is kept, and the manifest says where
    from; so is every producer snapshot the load deleted or rewrote."""
    removed = [a for a in report.plan.actions if a.action in ("truncate", "delete")]
    if report.quarantine is None:
        assert not removed
        return
    entries = json.loads((report.quarantine / MANIFEST).read_text())["entries"]
    for entry in [e for e in entries if e["action"] == "snapshot"]:
        stored = (report.quarantine / entry["stored"]).read_bytes()
        assert stored == state[DIR + entry["file"]]
    entries = [e for e in entries if e["action"] != "snapshot"]
    assert [(e["action"], e["file"]) for e in entries] == [(a.action, a.file) for a in removed]
    cut_at: dict[str, int] = {}  # a file truncated, then deleted (the log ends below its start)
    for entry in entries:
        original = state[DIR + entry["file"]][: cut_at.get(entry["file"])]
        if entry["action"] == "delete":
            stored = (report.quarantine / entry["stored"]).read_bytes()
            # an index is kept as it was when deleted: rebuilt first if its segment was recovered
            assert stored == original or not entry["file"].endswith(".log")
        elif entry["stored"] is None:
            assert not original[entry["position"] :].strip(b"\0")  # zeros are noted only
        else:
            kept = (report.quarantine / entry["stored"]).read_bytes()
            assert kept == original[entry["position"] : entry["position"] + entry["bytes"]]
        if entry["action"] == "truncate":
            cut_at[entry["file"]] = entry["position"]


def recovered_batches(root: Path) -> tuple[bytes, ...]:
    dir = partition_dir(root)
    return tuple(b.raw for p in sorted(dir.glob("*.log")) for b in iter_batches(p.read_bytes()))


def check_case(
    state: Snapshot, expected: tuple[bytes, ...], root: Path, full: bool, counts: Counts, kind: str
):
    # the broker's loader, recovery point 0 (Kafka's path: no index check)
    log, batches, _ = recover(state, root, CONFIG, clean=False, recovery_point=0)
    log.crash()
    assert batches == expected, f"{kind}: the loader"
    # ... and from the checkpointed recovery point (the LEO: only the last segment is read),
    # as a broker's start after a crash: damage before the last segment goes unseen, and
    # nothing there is lost
    materialize(state, root)
    open_log(root, ManualClock(MOCK_TIME_START), CONFIG, clean=False, recovery_point=None).crash()
    replaced = kind == "stale compacted .swap"  # LOAD-9, LOAD-10 replace the segment
    for name in [] if replaced else segments_of(state)[:-1]:  # below the recovery point
        assert (root / name).read_bytes() == state[name], f"{kind}: {name} changed"
    # the tool: the same prefix, the plan followed, every removed byte kept
    report = run_tool(state, root)
    assert recovered_batches(root) == expected, f"{kind}: klogspec recover"
    check_quarantine(report, state)
    again = recover_partition(partition_dir(root), TOOL_CONFIG, from_offset=0)
    assert again.error is None and again.plan.changes == [], again.plan.changes
    counts.add(kind)
    if full:
        check_appends_and_verify(root, CONFIG, expected)
        counts.add(f"{kind}, full checks")


def with_file(state: Snapshot, name: str, data: bytes | None) -> Snapshot:
    out = dict(state)
    if data is None:
        out.pop(name, None)
    else:
        out[name] = data
    return out


def damaged_cases(state: Snapshot, slow: bool):
    """(kind, damaged state, expected batches) for every damage of the matrix."""
    batches = batches_in(state)
    everything = raws(state)
    segments = segments_of(state)
    last = segments[-1]
    log_start = checkpoint_offset(state, "log-start-offset-checkpoint") or 0

    def prefix(j: int) -> tuple[bytes, ...]:
        """The first j batches; none when they end below the log start offset (LOAD-19)."""
        kept = everything[:j]
        end = last_offset(kept[-1]) + 1 if kept else 0
        return kept if end >= log_start else ()

    # a bit flip in any batch, outside baseOffset and partitionLeaderEpoch (not under the CRC)
    for j, (name, position, raw) in enumerate(batches):
        spots = (
            range(8, len(raw))
            if slow
            else [b for b in (*FLIP_BYTES, len(raw) // 2, len(raw) - 1) if b < len(raw)]
        )
        for byte in spots:
            if 12 <= byte < 16:
                continue
            data = bytearray(state[name])
            data[position + byte] ^= 1 << (byte % 8)
            yield "bit flips", with_file(state, name, bytes(data)), prefix(j)
    # tails after the last batch
    for n in (1, 11, 12, 17, 18, 60, 61, 200, 4096):
        yield "zero tails", with_file(state, last, state[last] + bytes(n)), everything
    for seed in range(12):
        garbage = bytes((seed * 37 + i * 101) % 256 for i in range(5 + seed * 13))
        yield "garbage tails", with_file(state, last, state[last] + garbage), everything
    # indexes
    for name in segments:
        base = int(Path(name).name.split(".")[0])
        for index, cut in ((offset_index_file_name(base), 3), (time_index_file_name(base), 5)):
            key = DIR + index
            if key in state and len(state[key]) > cut:
                yield "index cut mid-entry", with_file(state, key, state[key][:-cut]), everything
            yield "missing index", with_file(state, key, None), everything
        both = with_file(
            with_file(state, DIR + offset_index_file_name(base), None),
            DIR + time_index_file_name(base),
            None,
        )
        yield "missing index", both, everything
    # a .log gone, its indexes left: its batches go, the rest stays
    for name in segments:
        lost = {raw for n, _, raw in batches if n == name}
        yield (
            "missing .log",
            with_file(state, name, None),
            tuple(r for r in everything if r not in lost),
        )
    # stale temporary files
    for name in segments:
        yield (
            "stale .deleted",
            with_file(state, name + DELETED_FILE_SUFFIX, state[name]),
            everything,
        )
        yield (
            "stale .cleaned",
            with_file(state, name + CLEANED_FILE_SUFFIX, state[name]),
            everything,
        )
        yield "stale .swap", with_file(state, name + SWAP_FILE_SUFFIX, state[name]), everything
        own = [raw for n, _, raw in batches if n == name]
        if len(own) > 2:  # a compacted copy: the swap completes, its dropped batch is gone
            swap = b"".join(own[:1] + own[2:])
            dropped = tuple(r for r in everything if r != own[1])
            yield "stale compacted .swap", with_file(state, name + SWAP_FILE_SUFFIX, swap), dropped
            cleaned = with_file(state, name + SWAP_FILE_SUFFIX, swap)
            cleaned = with_file(cleaned, DIR + log_file_name(0) + CLEANED_FILE_SUFFIX, b"")
            yield "stale .swap", cleaned, everything  # an unfinished split: the swap goes


def run_matrix(closed: Snapshot, tmp_path: Path, slow: bool) -> Counts:
    counts = Counts()
    root = tmp_path / "damage"
    for n, (kind, state, expected) in enumerate(damaged_cases(closed, slow)):
        full = slow or n % 15 == 0 or kind != "bit flips"
        if kind in ("missing .log", "stale compacted .swap"):
            full = False  # a hole in the offsets, which verify reports (PART-2): see below
        check_case(state, expected, root, full, counts, kind)
    return counts


@pytest.mark.req(
    "RECOV-2",
    "RECOV-3",
    "RECOV-4",
    "RECOV-5",
    "RECOV-12",
    "RECOV-13",
    "RECOV-14",
    "RECOV-15",
    "RECOV-16",
    "LOAD-6",
    "LOAD-7",
    "LOAD-9",
    "LOAD-10",
    "LOAD-12",
    "LOAD-13",
    "LOAD-14",
    "LOAD-16",
)
def test_damage_matrix(closed, scratch):
    started = time.perf_counter()
    counts = run_matrix(closed, scratch, slow=False)
    print(f"\n{counts} in {time.perf_counter() - started:.1f} s")


@pytest.mark.slow
def test_damage_matrix_every_byte(closed, scratch):
    started = time.perf_counter()
    counts = run_matrix(closed, scratch, slow=True)
    print(f"\n{counts} in {time.perf_counter() - started:.1f} s")


@pytest.mark.req("LOAD-12", "RECOV-13")
def test_missing_log_in_the_middle_leaves_a_gap_verify_reports(closed, tmp_path):
    """Recovery cannot bring back a deleted .log: the orphan indexes go and the offsets of the
    segment are missing between its neighbours, which ``klogspec verify`` reports (PART-2)."""
    segments = segments_of(closed)
    middle = segments[len(segments) // 2]
    run_tool(with_file(closed, middle, None), tmp_path)
    rules = {
        (f.rule, f.severity) for f in verify_paths([tmp_path]) if f.severity is not Severity.INFO
    }
    assert rules == {("PART-2", Severity.WARNING)}


@pytest.mark.req("RECOV-5")
def test_zero_tail_on_an_inner_segment_deletes_the_later_ones(closed, tmp_path):
    """Kafka's rule has no exception for zeros: any bytes cut from a segment end the log."""
    segments = segments_of(closed)
    inner = segments[1]
    state = with_file(closed, inner, closed[inner] + bytes(64))
    expected = tuple(raw for n, _, raw in batches_in(closed) if n <= inner)
    log, batches, _ = recover(state, tmp_path, CONFIG, clean=False, recovery_point=0)
    assert batches == expected
    log.close()
