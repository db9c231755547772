"""The compiled kernels (reference_impl/kernels) against the readable code they mirror.

Each kernel handles the well-formed case and hands everything else to the readable function,
so the property is always the same: on valid, damaged and hostile bytes both paths give
identical results and identical typed errors (category, message, file, position, offset).
Hypothesis draws the inputs from the fuzz corpus of the formats work
(tests/test_fuzz_records.py: its seeds, mutations and hostile logs) and from long clean
logs with damage somewhere inside, which the kernels' runs of batches need.

When the extension is built these tests also check that it is in use (the CI builds it);
``KLOGSPEC_PURE_PYTHON=1`` makes them skip, as there is no second path to compare.
"""

from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_records import SEED_LIST, hostile_logs, mutate

from klogspec.verify import segment as verify_segment
from klogspec.verify.segment import SegmentFiles
from reference_impl import kernels
from reference_impl.formats.index_entries import (
    OffsetPosition,
    TimestampOffset,
    encode_offset_index_entry,
    encode_time_index_entry,
)
from reference_impl.records import Compression, SimpleRecord, build_record_batch

pytestmark = pytest.mark.skipif(
    not kernels.compiled, reason=f"no compiled kernels: {kernels.why_pure}"
)
CASES = settings(
    max_examples=300, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
)  # fmt: skip
# recovery and the reader open a log directory per example: fewer, for the suite's time
FEWER = settings(CASES, max_examples=100)


def test_the_extension_is_in_use_when_built():
    """The CI installs with a compiler: the kernels must be loaded and installed, and the
    CRC-32C they call must be the crc32c package's C function, not a Python call."""
    assert kernels.path() == "compiled"
    assert all("C function" in source for source in kernels.crc_sources().values())
    assert verify_segment._compiled_run is not None


def test_pure_python_is_forced_by_the_variable(tmp_path):
    import subprocess
    import sys

    code = "from reference_impl import kernels; print(kernels.path(), kernels.why_pure)"
    env = {**os.environ, kernels.PURE_PYTHON_VARIABLE: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split()[0] == "pure", out.stderr
    assert out.stderr == ""  # chosen, so no warning


# --- logs ------------------------------------------------------------------------------


@st.composite
def clean_log(draw) -> list[bytes]:
    """A run of v2 batches as a broker writes them, with what verify counts: offset gaps
    between batches, compacted batches (fewer records than offsets), delete horizons,
    timestamps up and down, codecs, idempotent producers."""
    offset = draw(st.sampled_from([0, 0, 7, 2**40]))
    timestamp = 1_700_000_000_000
    batches = []
    for _ in range(draw(st.integers(1, 40))):
        offset += draw(st.sampled_from([0, 0, 0, 1, 5]))  # gaps between batches
        count = draw(st.integers(1, 4))
        gaps = draw(st.sampled_from([0, 0, 2]))  # compaction inside the batch
        records = [
            SimpleRecord(
                b"v" * draw(st.sampled_from([0, 10, 300, 1500])), key=b"k%d" % i,
                timestamp=timestamp + draw(st.integers(-5, 50)), offset_delta=i * (1 + gaps),
            )
            for i in range(count)
        ]  # fmt: skip
        raw = build_record_batch(
            records, base_offset=offset, compression=draw(st.sampled_from(list(Compression))),
            producer_id=draw(st.sampled_from([-1, 3])), producer_epoch=0, base_sequence=0,
            delete_horizon_ms=draw(st.sampled_from([None, None, None, 5])),
            partition_leader_epoch=1,
        )  # fmt: skip
        batches.append(raw)
        offset += records[-1].offset_delta + 1
        timestamp += 20
    return batches


@st.composite
def damaged_log(draw) -> bytes:
    """A clean log, then damage: a seed of the fuzz corpus (legacy, control, other
    offsets) spliced in, one mutation somewhere, a torn or zero-filled tail."""
    batches = draw(clean_log())
    for _ in range(draw(st.integers(0, 2))):
        batches.insert(draw(st.integers(0, len(batches))), draw(st.sampled_from(SEED_LIST)))
    data = b"".join(batches)
    kind = draw(st.sampled_from(["none", "mutate", "mutate", "torn", "zeros", "noise"]))
    if kind == "mutate":
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + draw(mutate(data[at : at + 120], max_ops=3)) + data[at + 120 :]
    elif kind == "torn":
        data = data[: draw(st.integers(0, len(data)))]
    elif kind == "zeros":
        data += bytes(draw(st.sampled_from([1, 17, 100, 5000])))
    elif kind == "noise":
        data += draw(hostile_logs)
    return data


def broker_indexes(data: bytes, base: int, interval: int) -> tuple[bytes, bytes]:
    """The offset and time index a broker writes for ``data`` (Kafka's append rule)."""
    from reference_impl.records import iter_batches

    offset_index, time_index = bytearray(), bytearray()
    since, max_ts = 0, -1
    try:
        for batch in iter_batches(data):
            max_ts = max(max_ts, batch.max_timestamp)
            if since > interval:
                offset_index += encode_offset_index_entry(
                    OffsetPosition(batch.last_offset, batch.position), base
                )
                time_index += encode_time_index_entry(
                    TimestampOffset(max_ts, batch.last_offset), base
                )
                since = 0
            since += batch.size_in_bytes
    except Exception:  # damaged: the indexes cover what came before
        pass
    return bytes(offset_index), bytes(time_index)


def _result(files: SegmentFiles, *, deep: bool, max_message_bytes, readable: bool):
    """verify_segment through one path; progress reports summed."""
    reported = []
    compiled = verify_segment._compiled_run
    if readable:
        verify_segment._compiled_run = None
    try:
        result = verify_segment.verify_segment(
            files, deep=deep, max_message_bytes=max_message_bytes, progress=reported.append
        )
    finally:
        verify_segment._compiled_run = compiled
    return asdict(result), sum(reported)


@CASES
@given(
    data=damaged_log() | hostile_logs,
    base=st.sampled_from([None, 0, 7, 2**40]),
    indexes=st.sampled_from(["none", "broker", "mutated"]),
    interval=st.sampled_from([0, 100, 4096]),
    deep=st.booleans(),
    active=st.booleans(),
    max_message_bytes=st.sampled_from([None, None, 1000]),
    mutation=st.data(),
)
def test_verify_segment_same_findings_both_paths(
    tmp_path, data, base, indexes, interval, deep, active, max_message_bytes, mutation
):
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    log = folder / "00000000000000000000.log"
    log.write_bytes(data)
    files = {"log": str(log), "base_offset": base, "active": active}
    if indexes != "none" and base is not None:
        offset_index, time_index = broker_indexes(data, base, interval)
        if indexes == "mutated":
            offset_index = mutation.draw(mutate(offset_index + bytes(16)))
            time_index = mutation.draw(mutate(time_index + bytes(24)))
        (folder / "0.index").write_bytes(offset_index)
        (folder / "0.timeindex").write_bytes(time_index)
        files.update(offset_index=str(folder / "0.index"), time_index=str(folder / "0.timeindex"))
    segment = SegmentFiles(**files)
    readable = _result(segment, deep=deep, max_message_bytes=max_message_bytes, readable=True)
    compiled = _result(segment, deep=deep, max_message_bytes=max_message_bytes, readable=False)
    assert compiled == readable


def test_verify_segment_after_a_negative_base_offset(tmp_path):
    """A first batch at Long.MIN (the readable walk takes it) then one at offset 100: the
    offsets missing between them are counted past int64, so the compiled walk leaves the
    sum to the readable one (found by hypothesis: missing_between was -9223372036854775709
    on the compiled path)."""
    first = bytearray(build_record_batch([SimpleRecord(b"v" * 10_000, key=b"big")], base_offset=0))
    first[0:8] = struct.pack(">q", -(2**63))  # the CRC does not cover the base offset
    second = build_record_batch([SimpleRecord(b"x", timestamp=35)], base_offset=100)
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(bytes(first) + second)
    files = SegmentFiles(str(log), None, active=False)
    readable = _result(files, deep=False, max_message_bytes=None, readable=True)
    compiled = _result(files, deep=False, max_message_bytes=None, readable=False)
    assert compiled == readable
    assert readable[0]["summary"]["missing_between"] == 100 + 2**63 - 1


def test_verify_segment_windows_and_big_batches(tmp_path):
    """Batches across the 1 MiB window's edge and one bigger than the window."""
    from reference_impl.records.stream import CHUNK_SIZE

    sizes = [1000] * 1500 + [CHUNK_SIZE + 5000] + [70_000] * 20
    batches = [
        build_record_batch([SimpleRecord(b"x" * size, timestamp=offset)], base_offset=offset)
        for offset, size in enumerate(sizes)
    ]
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(batches) + struct.pack(">qi", 0, 40))
    files = SegmentFiles(str(log), 0, active=True)
    readable = _result(files, deep=False, max_message_bytes=None, readable=True)
    compiled = _result(files, deep=False, max_message_bytes=None, readable=False)
    assert compiled == readable
    assert readable[0]["summary"]["batches"] == len(batches)


# --- record decode ------------------------------------------------------------------------


def _decoded(decoder, batch, buf, start):
    from reference_impl.errors import KafkaLogError

    try:
        return decoder(batch, buf, start)
    except KafkaLogError as exc:
        return type(exc), exc.category, exc.message, exc.position, exc.offset


@CASES
@given(raw=st.sampled_from(SEED_LIST) | hostile_logs, body=st.data())
def test_record_decode_same_records_or_error_both_paths(raw, body):
    """The compiled decoder against the readable ``decode_records`` on every v2 batch the
    fuzz corpus makes (mutated record bytes included, CRC or not)."""
    from reference_impl.records import RecordBatch
    from reference_impl.records.batch import decode_records

    if len(raw) < 61 or raw[16] != 2:
        return
    records = raw[61:]
    if body.draw(st.booleans()):
        records = body.draw(mutate(records)) if records else records
    batch = RecordBatch.from_bytes(raw[:61] + records)
    for start in (61, 0):
        buf = batch.raw if start else records
        compiled = _decoded(kernels.records.decode_records, batch, buf, start)
        assert compiled == _decoded(decode_records, batch, buf, start)


# --- recovery -----------------------------------------------------------------------------


@st.composite
def producer_log(draw) -> bytes:
    """A segment as brokers write it, with what recovery's producer replay and epoch cache
    meet: several idempotent producers, epoch bumps, transactions closed by COMMIT and
    ABORT markers, new leader epochs; long runs of one producer (more than the five batches
    an entry keeps)."""
    from reference_impl.records import ControlRecordType, build_control_batch

    offset, leader_epoch, parts = 0, 0, []
    producers = {pid: {"epoch": 0, "sequence": 0, "txn": False} for pid in (3, 4, 5)}
    for _ in range(draw(st.integers(1, 60))):
        leader_epoch += draw(st.sampled_from([0] * 9 + [1]))
        pid = draw(st.sampled_from([-1, 3, 3, 3, 4, 5]))
        if pid < 0:
            parts.append(build_record_batch(
                [SimpleRecord(b"x", timestamp=offset)], base_offset=offset,
                partition_leader_epoch=leader_epoch,
            ))  # fmt: skip
            offset += 1
            continue
        state = producers[pid]
        if state["txn"] and draw(st.booleans()):
            kind = draw(st.sampled_from([ControlRecordType.COMMIT, ControlRecordType.ABORT]))
            parts.append(build_control_batch(
                kind, producer_id=pid, producer_epoch=state["epoch"], base_offset=offset,
                timestamp=offset, partition_leader_epoch=leader_epoch,
            ))  # fmt: skip
            state["txn"] = False
            offset += 1
            continue
        if not state["txn"] and draw(st.sampled_from([False] * 6 + [True])):
            state["epoch"] += 1
            state["sequence"] = 0
        transactional = state["txn"] or draw(st.sampled_from([False] * 5 + [True]))
        state["txn"] = transactional
        count = draw(st.integers(1, 3))
        parts.append(build_record_batch(
            [SimpleRecord(b"v", timestamp=1000 + offset + draw(st.integers(-3, 3)))
             for _ in range(count)],
            base_offset=offset, producer_id=pid, producer_epoch=state["epoch"],
            base_sequence=state["sequence"], is_transactional=transactional,
            partition_leader_epoch=leader_epoch,
        ))  # fmt: skip
        state["sequence"] += count
        offset += count
    return b"".join(parts)


def _directory(root) -> dict:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _recovered(tmp_path, name: str, data: bytes, interval: int, readable: bool):
    """Log.open of an unclean directory holding ``data`` as its only segment, through one
    path: the log's state, producers, epochs and every file it leaves."""
    from reference_impl import Log, LogConfig
    from reference_impl.log import segment_recovery

    root = tmp_path / name
    directory = root / "topic-0"
    directory.mkdir(parents=True)
    (directory / "00000000000000000000.log").write_bytes(data)
    compiled = segment_recovery.recover_batches
    if readable:
        segment_recovery.recover_batches = segment_recovery.readable_recover_batches
    try:
        log = Log.open(directory, LogConfig(index_interval_bytes=interval))
    except Exception as exc:  # the same refusal both ways (the paths aside)
        return type(exc).__name__, str(exc).replace(str(root), "ROOT")
    finally:
        segment_recovery.recover_batches = compiled
    psm = log.producer_state_manager
    outcome = (
        log.state(),
        {
            pid: (
                e.producer_epoch,
                list(e.batch_metadata),
                e.last_timestamp,
                e.current_txn_first_offset,
            )
            for pid, e in psm.producers.items()
        },  # fmt: skip
        psm.map_end_offset,
        log.leader_epoch_cache.epoch_entries(),
    )
    log.close()
    return outcome, _directory(root)


@FEWER
@given(
    data=producer_log() | damaged_log() | hostile_logs,
    interval=st.sampled_from([0, 50, 4096]),
    tail=st.sampled_from([b"", b"", bytes(30), b"\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00"]),
)
def test_recovery_same_log_and_files_both_paths(tmp_path, data, interval, tail):
    case = Path(tempfile.mkdtemp(dir=tmp_path))
    readable = _recovered(case, "readable", data + tail, interval, readable=True)
    compiled = _recovered(case, "compiled", data + tail, interval, readable=False)
    assert compiled == readable


# --- records into Arrow columns (pipeline/reader.py) --------------------------------------


@st.composite
def headed_log(draw) -> bytes:
    """v2 batches with headers (non-ASCII keys too), nulls, every codec, and the fuzz
    corpus's seeds (control batches, legacy) among them."""
    from reference_impl.records import Header

    parts, offset = [], 0
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.sampled_from([False] * 4 + [True])):
            parts.append(draw(st.sampled_from(SEED_LIST)))
            continue
        records = [
            SimpleRecord(
                draw(st.none() | st.binary(max_size=300)), key=draw(st.none() | st.binary(max_size=20)),
                timestamp=1_000 + i,
                headers=tuple(
                    Header(draw(st.sampled_from([b"h", b"trace-id", "é".encode(), b""])),
                           draw(st.none() | st.binary(max_size=10)))
                    for _ in range(draw(st.integers(0, 2)))
                ),
            )
            for i in range(draw(st.integers(1, 5)))
        ]  # fmt: skip
        parts.append(build_record_batch(
            records, base_offset=offset, compression=draw(st.sampled_from(list(Compression))),
            producer_id=draw(st.sampled_from([-1, 9])), producer_epoch=0,
            base_sequence=draw(st.sampled_from([-1, 0, 2**31 - 2])),
        ))  # fmt: skip
        offset += len(records)
    data = b"".join(parts)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + draw(mutate(data[at : at + 80], max_ops=2)) + data[at + 80 :]
    return data


def _read_range(path: Path, on_error: str, readable: bool):
    from pipeline import reader
    from pipeline.chunks import ChunkBuilder
    from pipeline.layout import discover_segments
    from pipeline.splits import plan_ranges
    from reference_impl.errors import KafkaLogError

    compiled = reader._RecordChunks, reader._records_of, reader._compiled_entries
    if readable:
        reader._RecordChunks, reader._records_of = ChunkBuilder, reader._record_rows
        reader._compiled_entries = None
    try:
        [segment] = discover_segments([str(path)])
        rows = []
        for rng in plan_ranges(segment):
            for chunk in reader.read_range(rng, "record", on_error):
                rows += chunk.to_pylist()
        return rows
    except KafkaLogError as exc:
        return type(exc), exc.category, exc.message, exc.position, exc.offset
    finally:
        reader._RecordChunks, reader._records_of, reader._compiled_entries = compiled


@FEWER
@given(data=headed_log() | damaged_log(), on_error=st.sampled_from(["fail", "skip", "report"]))
def test_reader_same_rows_both_paths(tmp_path, data, on_error):
    pytest.importorskip("pyarrow")
    directory = Path(tempfile.mkdtemp(dir=tmp_path)) / "topic-0"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(data)
    readable = _read_range(directory, on_error, readable=True)
    assert _read_range(directory, on_error, readable=False) == readable
