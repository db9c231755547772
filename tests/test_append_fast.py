"""The compiled path of a leader's append against the readable one (issue 14).

``Log._append`` gives a client's set to ``log/_compiled_append.py`` first: the kernel
``leader_append`` takes one whole, uncompressed CreateTime v2 batch, the module checks
that the rest of the append is common (no new epoch, no roll, a known producer's next
batch), or it returns None having changed nothing and the readable path runs. These
tests hold the two together:

* on valid batches (hypothesis: keys, values, headers of every varint width, timestamps
  with and without -1, producer ids and sequences, both timestamp types of the topic) and
  on damaged and hostile ones (bytes overwritten, cut or added, the header's fields
  changed, the CRC recomputed so the record checks are reached), the compiled path gives
  exactly the readable path's info, bytes and batches, or None, never where the readable
  path refuses;
* a producer's stream of appends (its next batches, retries, gaps, new epochs, damaged
  batches, leader changes, rolls) to two logs, one per path, gives the same results,
  the same typed errors (category, message, offset, position), the same files and the
  same state in memory (segments, producers, epochs, offsets).

``KLOGSPEC_PURE_PYTHON=1`` makes them skip, as there is no second path to compare.
"""

from __future__ import annotations

import struct
from functools import partial
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_speedups import (
    CASES,
    pytestmark,  # noqa: F401 (its skip: without the kernels, one path)
)

from reference_impl.errors import KafkaLogError
from reference_impl.log import _compiled_append
from reference_impl.log import unified_log as append_module
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.log_validator import AppendOrigin, analyze_and_validate_records
from reference_impl.log.offset_index import OffsetIndex
from reference_impl.log.unified_log import Log
from reference_impl.records import (
    Compression,
    Header,
    SimpleRecord,
    TimestampType,
    build_record_batch,
)
from reference_impl.records.batch import ATTRIBUTES_OFFSET, CRC_OFFSET
from reference_impl.records.checksums import crc32c
from reference_impl.records.record import INT32_MAX
from reference_impl.records.stream import iter_memory_batches

FEWER = settings(CASES, max_examples=60)  # a log directory per example
SIZES = st.sampled_from([0, 1, 5, 63, 64, 100, 1024, 8191, 8192])
blobs = st.one_of(st.none(), SIZES.flatmap(lambda n: st.binary(min_size=n, max_size=n)))
headers = st.lists(st.builds(Header, st.binary(max_size=70), blobs), max_size=3).map(tuple)
TIMESTAMP_TYPES = st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])


@st.composite
def client_batches(draw) -> bytes:
    """A client's batch: mostly the common shape, sometimes another (compressed, marked
    LogAppendTime, a control batch, a base offset, a producer without a sequence)."""
    count = draw(st.integers(1, 5))
    first = draw(st.sampled_from([-1, 0, 1_700_000_000_000, 2**62]))
    records = [
        SimpleRecord(
            value=draw(blobs), key=draw(blobs), headers=draw(headers),
            timestamp=-1 if first == -1 else first + draw(st.sampled_from([0, 1, 2**40])),
        )
        for _ in range(count)
    ]  # fmt: skip
    unusual = draw(st.sampled_from([None] * 6 + ["gzip", "lat", "control", "offset", "seq"]))
    producer_id = draw(st.sampled_from([-1, 0, 4242]))
    sequence = draw(st.sampled_from([0, 7, INT32_MAX - 1]))
    return build_record_batch(
        records,
        base_offset=5 if unusual == "offset" else 0,
        compression=Compression.GZIP if unusual == "gzip" else Compression.NONE,
        timestamp_type=(
            TimestampType.LOG_APPEND_TIME if unusual == "lat" else TimestampType.CREATE_TIME
        ),
        log_append_time=first if unusual == "lat" else None,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=-1 if unusual == "seq" or producer_id < 0 else sequence,
        is_control=unusual == "control",
        partition_leader_epoch=draw(st.sampled_from([-1, 0, 3])),
    )


def _fix_crc(raw: bytearray) -> None:
    struct.pack_into(">I", raw, CRC_OFFSET, crc32c(bytes(raw[ATTRIBUTES_OFFSET:])))


@st.composite
def damaged_batches(draw) -> bytes:
    """A client's batch with bytes overwritten, cut or added anywhere (header included),
    a header field set to a hostile value, the CRC recomputed or not; maybe a second
    batch or a partial one after it."""
    raw = bytearray(draw(client_batches()))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["set", "cut", "insert", "field", "count"]))
        at = draw(st.integers(0, len(raw))) if raw else 0
        if action == "set" and at < len(raw):
            raw[at] = draw(st.integers(0, 255))
        elif action == "cut":
            del raw[at : at + draw(st.integers(1, 8))]
        elif action == "insert":
            raw[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "count" and len(raw) >= 61:  # lastOffsetDelta and count agree, off by one
            step = draw(st.sampled_from([-1, 1]))
            for where in (23, 57):
                value = struct.unpack_from(">i", raw, where)[0] + step  # a field set to a
                value = (value + 2**31) % 2**32 - 2**31  # hostile Int.MIN/MAX wraps, as in Java
                struct.pack_into(">i", raw, where, value)
        elif len(raw) >= 61:
            where, fmt = draw(st.sampled_from([
                (8, ">i"), (23, ">i"), (57, ">i"), (53, ">i"), (43, ">q"), (27, ">q"),
                (35, ">q"), (21, ">h"), (12, ">i"),
            ]))  # fmt: skip
            bits = struct.calcsize(fmt) * 8
            value = draw(st.sampled_from([0, 1, -1, 2 ** (bits - 1) - 1, -(2 ** (bits - 1))]))
            value = draw(
                st.sampled_from([value, value, struct.unpack_from(fmt, raw, where)[0] + 1])
            )
            if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
                struct.pack_into(fmt, raw, where, value)
    if len(raw) >= 61 and draw(st.booleans()):
        struct.pack_into(">i", raw, 8, len(raw) - 12)
    if len(raw) >= 61 and draw(st.booleans()):
        _fix_crc(raw)
    tail = draw(st.sampled_from([b"", b"", b"\x00" * 7, None]))
    raw += bytes(raw) if tail is None else tail
    return bytes(raw)


def _outcome(call):
    try:
        return "ok", call()
    except KafkaLogError as exc:
        return "error", type(exc), exc.category, exc.message, exc.offset, exc.position, exc.file
    except (ValueError, struct.error, OverflowError) as exc:
        return "raised", type(exc), str(exc)


def _stub_log(timestamp_type, max_message_bytes, next_offset):
    return SimpleNamespace(
        config=LogConfig(
            message_timestamp_type=timestamp_type, max_message_bytes=max_message_bytes
        ),
        log_end_offset=next_offset,
        log_start_offset=3,
        clock=ManualClock(1_800_000_000_000),
    )


def _readable_checks(log, records: bytes, leader_epoch: int):
    """What Log._append's readable path makes of a client's set before any change."""
    info = analyze_and_validate_records(
        records, origin=AppendOrigin.CLIENT, ignore_record_size=False,
        require_offsets_monotonic=False, max_message_bytes=log.config.max_message_bytes,
        log_start_offset=log.log_start_offset,
    )  # fmt: skip
    if info.valid_bytes <= 0:
        return info
    valid = Log._assign_offsets(
        log, info, records[: info.valid_bytes], leader_epoch, AppendOrigin.CLIENT
    )
    return info, valid, *iter_memory_batches(valid)


@pytest.mark.req("APPEND-4", "APPEND-7", "APPEND-10", "APPEND-14", "APPEND-15")
@CASES
@given(
    records=client_batches() | damaged_batches(),
    timestamp_type=TIMESTAMP_TYPES,
    max_message_bytes=st.sampled_from([1_048_588, 100, 20_000]),
    next_offset=st.sampled_from([0, 17, 2**40]),
    leader_epoch=st.sampled_from([0, 5, -1, INT32_MAX, INT32_MAX + 1]),
)
def test_compiled_checks_give_the_readable_result_or_step_aside(
    records, timestamp_type, max_message_bytes, next_offset, leader_epoch
):
    log = _stub_log(timestamp_type, max_message_bytes, next_offset)
    compiled = _compiled_append.validate_client_batch(log, records, leader_epoch)
    readable = _outcome(lambda: _readable_checks(log, records, leader_epoch))
    if compiled is None:
        return  # the readable path takes the append, with its result or error
    assert readable == ("ok", compiled)
    assert type(compiled[1]) is bytes


def test_the_common_batch_takes_the_compiled_path():
    """The benchmark's shape (an idempotent producer's batch) is what the kernel takes."""
    records = build_record_batch(
        [SimpleRecord(b"v" * 1024, b"k" * 16, 1_700_000_000_000 + i) for i in range(15)],
        producer_id=4242, producer_epoch=0, base_sequence=0,
    )  # fmt: skip
    for timestamp_type in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
        log = _stub_log(timestamp_type, 1_048_588, 10)
        assert _compiled_append.validate_client_batch(log, records, 2) is not None


START_MS = 1_800_000_000_000


@st.composite
def producer_streams(draw) -> list[tuple]:
    """Steps for a log: ``("append", records, leader_epoch)`` or ``("tick", ms)``. Two
    idempotent producers send their next batches, mostly; sometimes a retry of an earlier
    batch, a sequence gap, a new producer epoch, a batch with no producer, a batch of
    another shape or a damaged one, a new leader epoch, or the clock moves on."""
    sequences, epochs, sent, steps = {4242: 0, 7: 0}, {4242: 0, 7: 0}, [], []
    leader_epoch, now = 0, START_MS
    for _ in range(draw(st.integers(1, 24))):
        kind = draw(st.sampled_from(
            ["next"] * 8 + ["retry", "gap", "bump", "plain", "other", "damaged", "epoch", "tick"]
        ))  # fmt: skip
        producer = draw(st.sampled_from([4242, 7]))
        if kind == "tick":
            step = draw(st.sampled_from([1, 5_000, 70_000]))
            now += step
            steps.append(("tick", step))
            continue
        if kind == "epoch":
            leader_epoch += 1
        if kind in ("retry",) and sent:
            steps.append(("append", draw(st.sampled_from(sent)), leader_epoch))
            continue
        if kind in ("other", "damaged"):
            strategy = client_batches() if kind == "other" else damaged_batches()
            steps.append(("append", draw(strategy), leader_epoch))
            continue
        if kind == "bump":
            epochs[producer] += 1
            sequences[producer] = 0
        if kind == "gap":
            sequences[producer] += 3
        count = draw(st.integers(1, 4))
        records = [
            SimpleRecord(draw(blobs), draw(st.sampled_from([None, b"k"])), now + i, ())
            for i in range(count)
        ]
        plain = kind == "plain"
        raw = build_record_batch(
            records,
            producer_id=-1 if plain else producer,
            producer_epoch=-1 if plain else epochs[producer],
            base_sequence=-1 if plain else sequences[producer],
        )
        if not plain:
            sequences[producer] += count
        sent.append(raw)
        steps.append(("append", raw, leader_epoch))
    return steps


def _log(path, timestamp_type, clock):
    return Log.open(
        path,
        LogConfig(message_timestamp_type=timestamp_type, max_message_bytes=20_000,
                  segment_bytes=40_000, segment_ms=60_000, index_interval_bytes=100),
        clock,
    )  # fmt: skip


def _files(path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def _state(log) -> tuple:
    segments = [
        (s.base_offset, s.size, s.rolling_based_timestamp, s.max_timestamp_and_offset_so_far,
         s.bytes_since_last_index_entry, s.log.last_modified())
        for s in log.segments.values()
    ]  # fmt: skip
    psm = log.producer_state_manager
    return (
        log.log_end_offset, log.recovery_point, log.high_watermark, log.first_unstable_offset,
        segments, dict(psm.producers), dict(psm.ongoing_txns), dict(psm.unreplicated_txns),
        psm.map_end_offset, log.leader_epoch_cache.epoch_entries(),
    )  # fmt: skip


@pytest.mark.req("APPEND-5", "APPEND-22", "INDEX-7", "PSTATE-4", "PSTATE-6", "ROLL-1")
@FEWER
@given(steps=producer_streams(), timestamp_type=TIMESTAMP_TYPES)
def test_appends_give_the_same_results_errors_files_and_state_both_paths(
    tmp_path_factory, monkeypatch, steps, timestamp_type
):
    root = tmp_path_factory.mktemp("append")
    runs = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(append_module, "_lean_append", None)
        path = root / ("compiled" if compiled else "readable") / "topic-0"
        clock = ManualClock(START_MS)
        log = _log(path, timestamp_type, clock)
        results = []
        for step in steps:
            if step[0] == "tick":
                clock.sleep(step[1])
                continue
            _, records, leader_epoch = step
            results.append(_outcome(partial(log.append_as_leader, records, leader_epoch)))
        state = _state(log)
        log.close()
        runs.append((results, state, _files(path)))
        monkeypatch.undo()
    assert runs[0] == runs[1]


def test_a_producers_stream_takes_the_compiled_path(tmp_path, monkeypatch):
    """After its first batch (a new producer, a new epoch in the cache), each next batch
    of the benchmark's shape is appended by the compiled path."""
    taken = []
    lean = append_module._lean_append
    monkeypatch.setattr(
        append_module, "_lean_append", lambda *a: taken.append(lean(*a)) or taken[-1]
    )
    log = _log(tmp_path / "topic-0", TimestampType.CREATE_TIME, ManualClock(START_MS))
    for n in range(6):
        records = [SimpleRecord(b"v" * 1024, b"k" * 16, START_MS + n) for _ in range(3)]
        batch = build_record_batch(
            records, producer_id=4242, producer_epoch=0, base_sequence=3 * n
        )  # fmt: skip
        log.append_as_leader(batch, 0)
    log.close()
    assert [info is not None for info in taken] == [False] + [True] * 5


@pytest.mark.req("INDEX-7")
def test_packed_entries_are_written_as_the_indexes_own(tmp_path):
    """``AbstractIndex.append_packed`` (the compiled recovery's one write for many entries)
    leaves the file and the entries ``append`` leaves."""
    readable = OffsetIndex(tmp_path / "0.index", 0, 80)
    packed = OffsetIndex(tmp_path / "1.index", 0, 80)
    for offset in (3, 9, 40):
        readable.append(offset, offset * 100)
    packed.append_packed(b"".join(readable.ENTRY.pack(o, o * 100) for o in (3, 9, 40)))
    assert packed.entries == readable.entries == 3
    assert packed.read_file() == readable.read_file()
    assert packed.lookup(10) == readable.lookup(10)
