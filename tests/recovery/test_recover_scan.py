"""``klogspec recover --dry-run``'s segment scan (klogspec/recover/scan.py) against
LogSegment.recover itself: the same walk (RecoveryScanner, recover_batch) on a recording
segment must stop where the segment's own recovery stops, with the same index entries, for
each outcome the plan tells apart (issue 24 point 2)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from klogspec.recover.scan import scan_recovery
from reference_impl import kernels
from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.file_naming import log_file_name
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.segment import LogSegment
from reference_impl.records import SimpleRecord, build_record_batch

BASE = 100
OUTCOMES = {
    Category.OFFSET_OVERFLOW: "overflow",
    Category.INVALID_OFFSET: "invalid_offset",
    Category.INVALID_ARGUMENT: "index_full",
}


def _batches(first: int, count: int, step: int = 10) -> bytes:
    """``count`` batches of 2 records from offset ``first``, each batch's timestamps ``step``
    above the last (0: one time-index entry at most, so the offset index fills first)."""
    return b"".join(
        build_record_batch(
            [
                SimpleRecord(b"v" * 20, b"k", timestamp=1000 + step * n),
                SimpleRecord(b"w", timestamp=1000 + step * n),
            ],
            base_offset=first + 2 * n,
        )
        for n in range(count)
    )


def _recover(log: Path, interval: int, max_index_size: int) -> tuple[str, int, list, list]:
    """LogSegment.recover on a copy of ``log``: its outcome, the bytes it keeps, the entries."""
    dir = log.parent / "copy"
    dir.mkdir()
    shutil.copy(log, dir / log_file_name(BASE))
    config = LogConfig(index_interval_bytes=interval, segment_index_bytes=max_index_size)
    segment = LogSegment.open(dir, BASE, config, ManualClock(0), file_already_exists=True)
    try:
        segment.recover()
        outcome = "truncated" if segment.size < log.stat().st_size else "ok"
    except KafkaLogError as exc:
        outcome = OUTCOMES[exc.category]
    indexes = (segment.offset_index, segment.time_index)
    entries = [[index.entry(n) for n in range(index.entries)] for index in indexes]
    size = segment.size
    segment.close_handlers()
    return outcome, size, *entries


@pytest.mark.req("RECOV-2", "RECOV-6", "RECOV-10", "INDEX-8", "INDEX-12")
@pytest.mark.parametrize(
    ("name", "data", "interval", "max_index_size"),
    [
        ("clean", _batches(BASE, 12), 1, 4096),
        ("no batch indexed", _batches(BASE, 5), 10_000, 4096),  # the final time entry only
        ("sparse index, torn", _batches(BASE, 12)[:-30], 150, 4096),
        ("torn tail", _batches(BASE, 12)[:-30], 1, 4096),
        ("zero tail", _batches(BASE, 5) + bytes(200), 1, 4096),
        ("offsets go back", _batches(BASE, 6) + _batches(BASE, 6), 1, 4096),
        ("offset index full", _batches(BASE, 12, step=0), 1, 8 * 4),
        ("time index full", _batches(BASE, 12), 1, 12 * 4),
        ("below the base", _batches(BASE - 50, 3), 1, 4096),
        ("past the base's int32", _batches(BASE, 2) + _batches(BASE + 2**31, 2), 1, 4096),
    ],
)
def test_the_scan_stops_where_the_segments_recovery_stops(
    tmp_path, name, data, interval, max_index_size
):
    log = tmp_path / log_file_name(BASE)
    log.write_bytes(data)
    outcome, size, offsets, times = _recover(log, interval, max_index_size)
    scan = scan_recovery(log, BASE, interval, max_index_size, lambda: None)
    assert scan.outcome == outcome, name
    if outcome != "index_full" or kernels.recovery is None:  # the load fails there, and
        # the compiled walk (kernels) leaves one more offset entry than the readable one
        assert (scan.offset_entries, scan.time_entries) == (offsets, times), name
    if outcome in ("ok", "truncated"):  # the other outcomes leave the file to the loader
        assert scan.valid_bytes == size, name
    assert log.read_bytes() == data  # the scan writes nothing


def test_the_scan_leaves_no_scratch_file_or_descriptor(tmp_path):
    log = tmp_path / log_file_name(BASE)
    log.write_bytes(_batches(BASE, 4))
    before = set(os.listdir(tmp_path)), _open_descriptors()
    for _ in range(3):
        scan_recovery(log, BASE, 1, 4096, lambda: None)
    assert (set(os.listdir(tmp_path)), _open_descriptors()) == before


def _open_descriptors() -> int | None:
    fds = Path("/proc/self/fd")
    return len(list(fds.iterdir())) if fds.is_dir() else None
