"""The record-level reader's compiled walk (pipeline/_compiled_walk.py, the kernel
``extract_clean_batches``) against the readable reader (pipeline/reader.py with
``ChunkBuilder``, ``_record_rows`` and ``walk_range``): the same chunks, row for row and
chunk for chunk, and the same typed error, under every ``on_error`` policy, on valid logs
(mixed batch sizes, every codec, control and legacy entries), damaged and hostile bytes,
ranges that start and end inside the segment, small windows (the kernel's refills) and
small chunks (its stops at a full chunk). ``KLOGSPEC_PURE_PYTHON=1`` makes them skip.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_records import hostile_logs
from test_speedups import CASES, clean_log, damaged_log, headed_log

from reference_impl import kernels

pytestmark = [
    pytest.mark.skipif(not kernels.compiled, reason=f"no compiled kernels: {kernels.why_pure}"),
]
pa = pytest.importorskip("pyarrow")
FEWER = CASES.__class__(CASES, max_examples=150)


def _read(path: Path, start, end, on_error: str, *, readable: bool, window: int, chunk) -> tuple:
    """Every chunk ``read_range`` yields for ``[start, end)`` (as rows), then the error it
    raised (type, category, message, position, offset) or None."""
    from pipeline import _compiled_walk, reader, storage
    from pipeline.chunks import ChunkBuilder
    from pipeline.layout import discover_segments
    from pipeline.splits import SegmentRange

    saved = (reader._RecordChunks, reader._records_of, reader._compiled_entries,
             storage.WINDOW, _compiled_walk.WINDOW)  # fmt: skip
    max_rows, max_bytes = chunk
    if readable:
        reader._RecordChunks, reader._records_of = ChunkBuilder, reader._record_rows
        reader._compiled_entries = None
    reader._RecordChunks = functools.partial(
        reader._RecordChunks, max_rows=max_rows, max_bytes=max_bytes
    )
    storage.WINDOW = _compiled_walk.WINDOW = window
    chunks, error = [], None
    try:
        [segment] = discover_segments([str(path)])
        for piece in reader.read_range(SegmentRange(segment, start, end), "record", on_error):
            chunks.append(piece.to_pylist())
    except Exception as exc:  # noqa: BLE001 (the readable reader's error, whatever it is)
        error = (type(exc), getattr(exc, "category", None), str(exc),
                 getattr(exc, "position", None), getattr(exc, "offset", None))  # fmt: skip
    finally:
        (reader._RecordChunks, reader._records_of, reader._compiled_entries,
         storage.WINDOW, _compiled_walk.WINDOW) = saved  # fmt: skip
    return chunks, error


def _segment(tmp_path: Path, data: bytes, base: int) -> Path:
    directory = Path(tempfile.mkdtemp(dir=tmp_path)) / "topic-0"
    directory.mkdir()
    (directory / f"{base:020d}.log").write_bytes(data)
    return directory


@st.composite
def mixed_log(draw) -> bytes:
    """Clean runs (16 KiB-ish and tiny batches, every codec) with headed batches, control
    and legacy seeds between them, or damage somewhere."""
    parts = draw(st.lists(headed_log() | damaged_log() | clean_log().map(b"".join),
                          min_size=1, max_size=3))  # fmt: skip
    data = b"".join(parts)
    if draw(st.booleans()):
        data += draw(hostile_logs)
    return data


@FEWER
@given(
    data=mixed_log(),
    base=st.sampled_from([0, 0, 0, 7, 2**40, 2**63 - 1]),
    on_error=st.sampled_from(["fail", "skip", "report"]),
    window=st.sampled_from([1 << 20, 4096, 200, 61]),
    chunk=st.sampled_from([(10_000, 8 << 20), (3, 8 << 20), (10_000, 700), (1, 1)]),
    cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_compiled_walk_same_chunks_and_errors(tmp_path, data, base, on_error, window, chunk, cut):
    path = _segment(tmp_path, data, base)
    inside = sorted(int(f * len(data)) for f in cut)
    for start, end in [(0, len(data)), tuple(inside), (inside[0], len(data) + 100)]:
        readable = _read(path, start, end, on_error, readable=True, window=window, chunk=chunk)
        compiled = _read(path, start, end, on_error, readable=False, window=window, chunk=chunk)
        assert compiled == readable


def test_clean_batches_never_reach_the_readable_checks(tmp_path, monkeypatch):
    """The kernel is in use: on a clean uncompressed log no entry is judged the readable
    way (a test that fails if the compiled walk silently hands everything back)."""
    from pipeline import reader
    from reference_impl.records import Compression, SimpleRecord, build_record_batch

    batches, offset = [], 0
    for size in (1, 5, 300, 2):
        records = [SimpleRecord(b"v" * 100, key=b"k%d" % i) for i in range(size)]
        batches.append(
            build_record_batch(records, base_offset=offset, compression=Compression.NONE)
        )
        offset += size
    path = _segment(tmp_path, b"".join(batches), 0)
    calls = []
    monkeypatch.setattr(reader, "header_problem", lambda *a, **k: calls.append(a))
    chunks, error = _read(
        path, 0, 10**9, "fail", readable=False, window=1 << 20, chunk=(10_000, 8 << 20)
    )
    assert error is None and sum(map(len, chunks)) == offset and calls == []


def test_pure_python_reads_with_the_readable_walk():
    code = "from pipeline import reader; print(reader._compiled_entries is None)"
    env = {**os.environ, kernels.PURE_PYTHON_VARIABLE: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True"], out.stderr
