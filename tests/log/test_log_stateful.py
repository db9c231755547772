"""The reference log against a plain model: a list of batches (hypothesis RuleBasedStateMachine).

Random configs (small segments and index files, so rolls and full indexes happen often)
drive appends (leader and follower, single and multi-batch, with gaps, legacy too),
rolls, reads, truncations, log-start-offset deletions, retention, clock jumps, closes and
reopens. After every step the log must agree with the model:

* the log start offset and log end offset are the model's; the recovery point is not
  past the LEO;
* every batch is where the model says, byte for byte: each segment's ``.log`` is exactly
  the model batches whose offsets fall in it, and a segment is named by its base offset,
  at or below its first batch;
* the offset and time indexes agree with a linear scan of the ``.log``;
* reads return exactly the bytes the read rules select (checked in the read rule).

The model does not predict *when* the log rolls (that is the roll tests' job); it reads
the segment boundaries from the log and checks everything else against them.

ProducerLogMachine (below) runs the same rules with idempotent and transactional producers
(issue 9): retries, fenced and out-of-order batches, commits and aborts, and after every step
checks the producer state in memory, and as a reload from a copy of the directory rebuilds
it, against a replay of the model's batches.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.index_entries import AbortedTxn
from reference_impl.log.checkpoint_files import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    read_offsets_or_empty,
)
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.fetch import FetchIsolation
from reference_impl.log.loader import LoadOptions
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.unified_log import Log
from reference_impl.records import (
    Compression,
    ControlRecordType,
    SimpleRecord,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
    iter_batches,
    parse_end_txn_marker,
)
from reference_impl.records.record import TimestampType

INT32_MAX = 2**31 - 1
START_MS = 1_700_000_000_000


@dataclass(frozen=True)
class ModelBatch:
    base_offset: int
    last_offset: int
    raw: bytes
    max_timestamp: int


def parse(raw: bytes) -> ModelBatch:
    (b,) = list(iter_batches(raw))
    return ModelBatch(b.base_offset, b.last_offset, raw, b.max_timestamp)


configs = st.fixed_dictionaries(
    {
        "segment_bytes": st.integers(100, 1500),
        "segment_ms": st.integers(10, 5000),
        "roll_jitter_ms": st.sampled_from([0, 5]),
        "segment_index_bytes": st.integers(12, 120),
        "index_interval_bytes": st.integers(0, 200),
        "message_timestamp_type": st.sampled_from(
            [TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME]
        ),
        "preallocate": st.booleans(),
        "retention_ms": st.sampled_from([-1, 100, 3000]),
        "retention_bytes": st.sampled_from([-1, 300, 1000]),
        "file_delete_delay_ms": st.sampled_from([0, 500]),
    }
)
values = st.binary(min_size=0, max_size=24)
timestamp_deltas = st.one_of(st.none(), st.integers(-6000, 6000))


class LogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="klogspec-stateful-"))
        self.dir = self.root / "topic-0"
        self.clock = ManualClock(START_MS)
        self.batches: list[ModelBatch] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.recovery_point = 0
        self.epoch = 0
        self.forgetful_bases: set[int] = set()  # segments TRUNC-9 left at -1

    def teardown(self) -> None:
        if hasattr(self, "log") and not self.log.closed:
            self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)

    @initialize(config=configs)
    def open_log(self, config):
        self.config = LogConfig(**config)
        self.log = Log.open(self.dir, self.config, self.clock)

    # --- helpers ---
    def timestamp(self, delta: int | None) -> int:
        return -1 if delta is None else max(0, self.clock.milliseconds() + delta)

    def segment_bases(self) -> list[int]:
        return [s.base_offset for s in self.log.state().segments]

    def accept_roll_flushes(self) -> None:
        """FLUSH-4: a roll flushes up to its new base offset; the model does not predict
        rolls, so it accepts a recovery point that rose to some segment's base."""
        moved = self.log.recovery_point
        if moved != self.recovery_point:
            assert moved > self.recovery_point and moved in self.segment_bases()
            self.recovery_point = moved

    def drop_below(self, first_base: int) -> None:
        self.batches = [b for b in self.batches if b.last_offset >= first_base]

    def expect_error(self, category: Category, operation) -> None:
        with pytest.raises(KafkaLogError) as raised:
            operation()
        assert raised.value.category is category, raised.value

    # --- appends ---
    @rule(
        records=st.lists(st.tuples(values, timestamp_deltas), min_size=1, max_size=4),
        gzip=st.booleans(),
        epoch_step=st.integers(0, 1),
    )
    def append_as_leader(self, records, gzip, epoch_step):
        self.epoch += epoch_step
        data = build_record_batch(
            [SimpleRecord(value=v, timestamp=self.timestamp(d)) for v, d in records],
            compression=Compression.GZIP if gzip else Compression.NONE,
        )
        if len(data) > self.config.segment_bytes:
            self.expect_error(
                Category.RECORD_BATCH_TOO_LARGE, lambda: self.log.append_as_leader(data, self.epoch)
            )
            return
        info = self.log.append_as_leader(data, self.epoch)
        assert (info.first_offset, info.last_offset) == (
            self.log_end_offset,
            self.log_end_offset + len(records) - 1,
        )
        # the stored batch: offsets assigned, epoch stamped, timestamps per the topic's type
        stored = self.log.read(info.first_offset, 1 << 20).batches()[0]
        stored.ensure_valid()
        assert stored.base_offset == info.first_offset
        assert stored.partition_leader_epoch == self.epoch
        assert [r.value for r in stored.records()] == [v for v, _ in records]
        if self.config.message_timestamp_type is TimestampType.LOG_APPEND_TIME:
            assert stored.max_timestamp == self.clock.milliseconds()
        self.batches.append(parse(stored.raw))
        self.log_end_offset = info.last_offset + 1
        self.accept_roll_flushes()

    @rule(
        count=st.integers(1, 12),
        size=st.integers(0, 40),
        delta=timestamp_deltas,
        step_ms=st.integers(0, 400),
    )
    def append_many_as_leader(self, count, size, delta, step_ms):
        """Many small appends, the clock moving between them: fills segments and indexes."""
        for i in range(count):
            self.clock.sleep(step_ms)
            self.append_as_leader([(bytes([i]) * size, delta)], False, 0)

    @rule(
        shape=st.lists(
            st.tuples(
                st.integers(0, 3), st.lists(values, min_size=1, max_size=3), timestamp_deltas
            ),
            min_size=1,
            max_size=3,
        ),
        legacy=st.booleans(),
    )
    def append_as_follower(self, shape, legacy):
        """A fetched chunk: batches with the leader's offsets, gaps allowed."""
        raws, next_offset = [], self.log_end_offset
        for gap, batch_values, delta in shape:
            base = next_offset + gap
            records = [SimpleRecord(value=v, timestamp=self.timestamp(delta)) for v in batch_values]
            if legacy:  # one v1 message per record, each its own "batch"
                raw = build_legacy_message_set(records, magic=1, base_offset=base)
                raws.extend(
                    raw[i.position : i.position + i.size_in_bytes] for i in iter_batches(raw)
                )
            else:
                raw = build_record_batch(
                    records, base_offset=base, partition_leader_epoch=self.epoch
                )
                raws.append(raw)
            next_offset = base + len(records)
        data = b"".join(raws)
        if len(data) > self.config.segment_bytes:
            self.expect_error(
                Category.RECORD_BATCH_TOO_LARGE, lambda: self.log.append_as_follower(data)
            )
            return
        info = self.log.append_as_follower(data)
        assert info.last_offset == next_offset - 1
        self.batches.extend(parse(raw) for raw in raws)
        self.log_end_offset = next_offset
        self.accept_roll_flushes()

    @precondition(lambda self: self.log_end_offset < INT32_MAX)
    @rule(value=values)
    def append_as_follower_past_int32_range(self, value):
        """An over-compacted log: the next offset is more than 2^31-1 past the segment base,
        which only a new segment can hold."""
        base = self.log_end_offset + INT32_MAX + 2
        raw = build_record_batch(
            [SimpleRecord(value=value)], base_offset=base, partition_leader_epoch=self.epoch
        )
        self.log.append_as_follower(raw)
        assert self.log.active_segment.base_offset == base
        self.batches.append(parse(raw))
        self.log_end_offset = base + 1
        self.accept_roll_flushes()

    @precondition(lambda self: self.log_end_offset > 0)
    @rule(data=st.data())
    def refused_follower_appends(self, data):
        """Offsets below the LEO, or going back within a set: typed errors, nothing written."""
        below = build_record_batch(
            [SimpleRecord(value=b"x")],
            base_offset=data.draw(st.integers(0, self.log_end_offset - 1)),
            partition_leader_epoch=self.epoch,
        )
        self.expect_error(
            Category.UNEXPECTED_APPEND_OFFSET, lambda: self.log.append_as_follower(below)
        )
        first = build_record_batch(
            [SimpleRecord(value=b"a")],
            base_offset=self.log_end_offset + 1,
            partition_leader_epoch=self.epoch,
        )
        second = build_record_batch(
            [SimpleRecord(value=b"b")],
            base_offset=self.log_end_offset,
            partition_leader_epoch=self.epoch,
        )
        self.expect_error(
            Category.OFFSETS_OUT_OF_ORDER, lambda: self.log.append_as_follower(first + second)
        )

    # --- rolls, time, flushes ---
    @rule()
    def roll(self):
        active = self.log.active_segment
        new_segment = self.log.roll()
        assert new_segment.base_offset == self.log_end_offset
        assert new_segment is not active or active.size == 0
        self.recovery_point = max(self.recovery_point, new_segment.base_offset)

    @rule(ms=st.integers(0, 6000))
    def clock_jump(self, ms):
        self.clock.sleep(ms)

    @rule()
    def flush(self):
        self.log.flush()
        self.recovery_point = max(self.recovery_point, self.log_end_offset)

    # --- reads ---
    @rule(data=st.data(), max_bytes=st.integers(0, 600), min_one_message=st.booleans())
    def read(self, data, max_bytes, min_one_message):
        start = data.draw(st.integers(self.log_start_offset, self.log_end_offset))
        if start < self.segment_bases()[0]:  # a log start offset below the first segment
            self.expect_error(Category.OFFSET_OUT_OF_RANGE, lambda: self.log.read(start, max_bytes))
            return
        max_offset = data.draw(st.one_of(st.none(), st.integers(start, self.log_end_offset)))
        fetch = self.log.read(start, max_bytes, max_offset, min_one_message)
        assert fetch.data() == self.expected_read(start, max_bytes, max_offset, min_one_message)

    @rule(data=st.data())
    def read_out_of_range(self, data):
        below = list(range(max(0, self.log_start_offset - 3), self.log_start_offset))
        above = list(range(self.log_end_offset + 1, self.log_end_offset + 4))
        start = data.draw(st.sampled_from(below + above))
        self.expect_error(Category.OFFSET_OUT_OF_RANGE, lambda: self.log.read(start, 100))

    def expected_read(self, start, max_bytes, max_offset, min_one_message) -> bytes:
        layout = self.layout()
        # where the bound lies: the first batch reaching max_offset (none: the LEO itself)
        bound = None if max_offset is None else self.locate(layout, max_offset)
        bound_offset = self.log_end_offset if bound is None else max_offset
        if start >= bound_offset:
            return b""
        first = self.locate(layout, start)
        if first is None:
            return b""
        segment, position, size = first
        if bound is not None and bound[0] == segment:
            limit = bound[1]
        else:
            limit = sum(len(b.raw) for b in layout[segment])
        adjusted = max(max_bytes, size) if min_one_message else max_bytes
        content = b"".join(b.raw for b in layout[segment])
        return content[position : position + min(limit - position, adjusted)]

    def locate(self, layout, offset):
        """(segment base, position, size) of the first batch whose last offset >= offset."""
        for base, batches in layout.items():
            position = 0
            for b in batches:
                if b.last_offset >= offset:
                    return base, position, len(b.raw)
                position += len(b.raw)
        return None

    # --- truncation and deletion ---
    @rule(data=st.data())
    def truncate_to(self, data):
        target = data.draw(st.integers(0, self.log_end_offset + 2))
        first_base = self.segment_bases()[0]
        kept = [s for s in self.log.log_segments() if s.base_offset <= target]
        # TRUNC-9: a segment that has not read its largest timestamp since it was opened
        # reads it from its time index after truncating it, and an empty one gives -1,
        # which stays: later, lower timestamps are then indexed (INDEX-16's exception)
        unread = kept and kept[-1].max_timestamp_and_offset_so_far is None
        changed = self.log.truncate_to(target)
        if unread and kept[-1].max_timestamp_so_far < 0:
            self.forgetful_bases.add(kept[-1].base_offset)
        assert changed == (target < self.log_end_offset)
        if target >= self.log_end_offset:
            return
        if target < first_base:
            self.batches, self.log_start_offset = [], target
        else:
            self.batches = [b for b in self.batches if b.last_offset < target]
            self.log_start_offset = min(self.log_start_offset, target)
        self.log_end_offset = target
        self.recovery_point = min(self.recovery_point, target)

    @rule(data=st.data(), with_start=st.booleans())
    def truncate_fully_and_start_at(self, data, with_start):
        new_offset = data.draw(st.integers(0, self.log_end_offset + 10))
        start = data.draw(st.integers(0, new_offset)) if with_start else None
        self.log.truncate_fully_and_start_at(new_offset, start)
        self.forgetful_bases = set()
        self.batches = []
        self.log_end_offset = new_offset
        self.log_start_offset = new_offset if start is None else start
        self.recovery_point = min(self.recovery_point, new_offset)

    @rule(data=st.data())
    def delete_segments_before(self, data):
        offset = data.draw(st.integers(self.log_start_offset, self.log_end_offset))
        bases = self.segment_bases()
        if offset > self.log_start_offset:  # RET-1: otherwise nothing moves
            self.log_start_offset = offset
            self.recovery_point = max(self.recovery_point, offset)
        kept = [
            base
            for base, nxt in zip(bases, [*bases[1:], None], strict=True)
            if nxt is None or nxt > self.log_start_offset
        ]
        deleted = self.log.delete_segments_before(offset)
        assert self.segment_bases() == bases[len(bases) - len(kept) :] and deleted == len(
            bases
        ) - len(kept)
        self.drop_below(self.segment_bases()[0])

    @rule()
    def delete_old_segments(self):
        before = self.segment_bases()
        deleted = self.log.delete_old_segments()
        after = self.segment_bases()
        if deleted == len(before):  # everything went: a new segment at the LEO
            assert after == [self.log_end_offset]
        else:
            assert after[0] in before and before[before.index(after[0]) :] == after
            assert before.index(after[0]) == deleted
        self.accept_roll_flushes()  # deleting every segment rolls first
        if deleted and after[0] > self.log_start_offset:
            self.log_start_offset = after[0]
            self.recovery_point = max(self.recovery_point, after[0])
        self.drop_below(after[0])

    # --- close and reopen ---
    @rule()
    def close_and_reopen(self):
        bases = self.segment_bases()
        # the log-start-offset checkpoint holds the log start only when above the first base
        checkpointed = self.log_start_offset if self.log_start_offset > bases[0] else 0
        self.log.close()
        self.log = Log.open(self.dir, self.config, self.clock)
        # a reopened log ends after its last batch (a truncation inside a batch set the LEO
        # past it) or, with an empty last segment, at that segment's base
        in_last = [b for b in self.batches if b.base_offset >= bases[-1]]
        self.log_end_offset = in_last[-1].last_offset + 1 if in_last else bases[-1]
        if self.log_end_offset < checkpointed:  # the log ends below its start: start afresh
            self.batches, self.log_end_offset = [], checkpointed
            assert self.segment_bases() == [checkpointed]
        self.log_start_offset = max(checkpointed, self.segment_bases()[0])
        self.recovery_point = self.log_end_offset

    @rule()
    def crash_and_reopen(self):
        """LOAD-1, RECOV-9, RECOV-11: a process crash keeps every byte written, and the unclean
        load recovers from the checkpointed recovery point, which it raises only to the log
        start offset."""
        root = self.dir.parent
        checkpoints = {
            name: read_offsets_or_empty(root / name).get(("topic", 0), 0)
            for name in (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT)
        }
        bases = self.segment_bases()
        self.log.crash()
        try:
            self.log = Log.open(self.dir, self.config, self.clock)
        except KafkaLogError as exc:
            # INDEX-8 indexes per batch where appends index per set: the rebuilt index may not
            # fit a tiny segment_index_bytes, and the load fails as Kafka's does; an operator
            # then raises segment.index.bytes
            assert exc.category is Category.INVALID_ARGUMENT and "full" in exc.message, exc
            self.config = replace(self.config, segment_index_bytes=4096)
            self.log = Log.open(self.dir, self.config, self.clock)
        in_last = [b for b in self.batches if b.base_offset >= bases[-1]]
        self.log_end_offset = in_last[-1].last_offset + 1 if in_last else bases[-1]
        start = checkpoints[LOG_START_OFFSET_CHECKPOINT]
        if self.log_end_offset < start:  # the log ends below its start: start afresh
            self.batches, self.log_end_offset = [], start
            assert self.segment_bases() == [start]
        self.log_start_offset = max(start, self.segment_bases()[0])
        self.recovery_point = max(
            min(checkpoints[RECOVERY_POINT_CHECKPOINT], self.log_end_offset),
            self.log_start_offset,
        )

    # --- invariants ---
    def layout(self) -> dict[int, list[ModelBatch]]:
        """The model's batches, grouped by the log's segments."""
        bases = self.segment_bases()
        groups: dict[int, list[ModelBatch]] = {base: [] for base in bases}
        for b in self.batches:
            owner = max(base for base in bases if base <= b.base_offset)
            groups[owner].append(b)
        return groups

    @invariant()
    def offsets_match_the_model(self):
        if not hasattr(self, "log"):
            return
        state = self.log.state()
        assert state.log_start_offset == self.log_start_offset
        assert state.log_end_offset == self.log_end_offset
        assert state.recovery_point == self.recovery_point <= state.log_end_offset
        bases = [s.base_offset for s in state.segments]
        assert bases == sorted(set(bases))
        assert bases[-1] <= state.log_end_offset

    @invariant()
    def segments_hold_exactly_the_model_batches(self):
        if not hasattr(self, "log"):
            return
        bases = self.segment_bases()
        layout = self.layout()
        files = {p.name for p in self.dir.iterdir() if p.name.endswith(".log")}
        assert files == {f"{base:020d}.log" for base in bases}
        for index_file in self.dir.glob("*index"):
            assert int(index_file.name.split(".")[0]) in bases, index_file
        for i, segment in enumerate(self.log.log_segments()):
            batches = layout[segment.base_offset]
            if i + 1 < len(bases):
                assert all(b.last_offset < bases[i + 1] for b in batches)
            if batches:
                assert segment.base_offset <= batches[0].base_offset
            on_disk = segment.log.read_bytes()
            assert on_disk == b"".join(b.raw for b in batches)
            assert segment.size <= self.config.segment_bytes

    @invariant()
    def indexes_agree_with_a_linear_scan(self):
        if not hasattr(self, "log"):
            return
        for segment in self.log.log_segments():
            batches = self.layout()[segment.base_offset]
            positions, position = {}, 0
            for b in batches:
                positions[position] = b
                position += len(b.raw)
            offset_index = segment.offset_index
            entries = [offset_index.entry(i) for i in range(offset_index.entries)]
            assert [e.offset for e in entries] == sorted({e.offset for e in entries})
            for e in entries:
                assert e.position in positions and e.offset >= positions[e.position].last_offset
            time_index = segment.time_index
            time_entries = [time_index.entry(i) for i in range(time_index.entries)]
            assert [t.timestamp for t in time_entries] == sorted(
                {t.timestamp for t in time_entries}
            )
            for t in time_entries:
                reached = [b.max_timestamp for b in batches if b.last_offset <= t.offset]
                assert any(b.last_offset == t.offset for b in batches)
                if segment.base_offset in self.forgetful_bases:
                    assert max(reached) >= t.timestamp and t.timestamp in reached
                else:
                    assert max(reached) == t.timestamp
            targets = {segment.base_offset}
            for b in batches:
                targets |= {b.base_offset, b.last_offset, b.last_offset + 1}
            for target in targets:
                found = segment.translate_offset(target)
                expected = self.locate({segment.base_offset: batches}, target)
                if expected is None:
                    assert found is None
                else:
                    assert (found.position, found.size) == expected[1:]
            for ts in {b.max_timestamp for b in batches if b.max_timestamp >= 0}:
                found = segment.find_offset_by_timestamp(ts, segment.base_offset)
                scan = [
                    r.offset
                    for b in batches
                    if b.max_timestamp >= ts
                    for r in next(iter(iter_batches(b.raw))).records()
                    if r.timestamp >= ts
                ]
                assert (found.offset if found else None) == (scan[0] if scan else None)


def run(max_examples: int, steps: int) -> None:
    run_state_machine_as_test(
        LogMachine,
        settings=settings(
            max_examples=max_examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


@pytest.mark.req(
    "APPEND-19",
    "APPEND-22",
    "INDEX-13",
    "INDEX-14",
    "INDEX-15",
    "INDEX-16",
    "INDEX-20",
    "MODEL-1",
    "MODEL-4",
    "READ-8",
    "READ-10",
    "READ-14",
    "RET-5",
    "RET-12",
    "ROLL-21",
    "TRUNC-5",
    "TRUNC-6",
)
@pytest.mark.req("FLUSH-4", "FLUSH-6")
def test_log_matches_model():
    """The default run: small enough for every test run."""
    run(max_examples=100, steps=40)


@pytest.mark.slow
def test_log_matches_model_long():
    run(max_examples=1000, steps=100)


# --- producer state (issue 9) ---------------------------------------------------------------
#
# The same log with idempotent and transactional producers. ProducerLogMachine keeps every
# LogMachine rule and invariant but the deletions from the start (retention and
# delete_segments_before): the log keeps the producers of deleted batches in memory and a
# reload does not (PSTATE-6's unknown producer), which this model does not follow.
#
# The model of the producers is a replay of the model's batches (a follower's view, which
# is what every accepted append leaves): per producer its epoch, the batches of that epoch,
# the coordinator epoch, the open transaction; and the aborted transactions with the LSO
# each was indexed with. After every step:
#
# * the log's producers are the model's: epoch, coordinator epoch, last timestamp, open
#   transaction; the batches retained (at most 5, PSTATE-2) are the last ones of the model's,
#   all 5 unless a reload (snapshot: the last one only) came between;
# * ongoing transactions, the LSO (TXN-B-7) and each segment's .txnindex are the model's;
# * a copy of the partition directory loaded by an unclean load (every segment recovered
#   from the snapshots on disk, RECOV-19, SNAP-B-2) holds the same state as memory, as far
#   as a snapshot can keep it (the last batch of each producer).
#
# Appends a client or the coordinator may not make (out of order, fenced, zombie coordinator,
# a non-transactional batch in a transaction) are refused with their error and change no
# producer; a retry of a retained batch returns its offsets and writes nothing (PSTATE-4).

PRODUCER_IDS = (1000, 1001, 1002)
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
RETAINED = 5  # PSTATE-2
producer_deltas = st.integers(-3000, 3000)  # always near the clock: no producer expires


@dataclass(frozen=True)
class ProducerBatch:
    """What a v2 batch with a producer id tells the producer state."""

    producer_id: int
    epoch: int
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    is_transactional: bool
    timestamp: int  # the batch's max timestamp, a marker's record timestamp
    marker: ControlRecordType | None = None
    coordinator_epoch: int = -1

    @property
    def span(self) -> tuple[int, int, int, int]:
        """What the producer state keeps of a batch: sequences and offsets."""
        return (self.first_seq, self.last_seq, self.first_offset, self.last_offset)


@dataclass
class ModelProducer:
    epoch: int
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    txn_first_offset: int | None = None
    batches: list[ProducerBatch] = field(default_factory=list)  # this epoch's, oldest first

    @property
    def next_seq(self) -> int:
        """PSTATE-6: right after the last batch (Int.MAX wraps to 0); 0 with none."""
        return (self.batches[-1].last_seq + 1) % (INT32_MAX + 1) if self.batches else 0


@dataclass
class ProducerModel:
    producers: dict[int, ModelProducer]
    aborted: list[AbortedTxn]  # in marker order


def producer_batch(raw: bytes) -> ProducerBatch | None:
    (b,) = list(iter_batches(raw))
    if b.magic < 2 or b.producer_id < 0:
        return None
    if b.is_control:
        (record,) = b.records()
        marker = parse_end_txn_marker(record.key, record.value)
        return ProducerBatch(
            b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.base_offset,
            b.last_offset, b.is_transactional, record.timestamp, marker.control_type,
            marker.coordinator_epoch,
        )  # fmt: skip
    return ProducerBatch(
        b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.base_offset,
        b.last_offset, b.is_transactional, b.max_timestamp,
    )  # fmt: skip


def replay(batches: list[ProducerBatch]) -> ProducerModel:
    """PSTATE-1, PSTATE-3, TXN-B-2, TXN-B-3, TXN-B-6 as a follower applies them."""
    model = ProducerModel({}, [])
    for b in batches:
        p = model.producers.setdefault(b.producer_id, ModelProducer(b.epoch))
        if p.epoch != b.epoch:
            p.epoch, p.batches = b.epoch, []
        if b.marker is None:
            p.batches.append(b)
            p.last_timestamp = b.timestamp
            if p.txn_first_offset is None and b.is_transactional:
                p.txn_first_offset = b.first_offset
            continue
        if p.txn_first_offset is not None and b.marker is ControlRecordType.ABORT:
            others = [
                q.txn_first_offset
                for pid, q in model.producers.items()
                if pid != b.producer_id and q.txn_first_offset is not None
            ]
            lso = min(others) if others else b.first_offset + 1
            model.aborted.append(AbortedTxn(b.producer_id, p.txn_first_offset, b.first_offset, lso))
        p.coordinator_epoch = b.coordinator_epoch
        p.txn_first_offset = None
        p.last_timestamp = b.timestamp
    return model


def kept_batches(entry) -> list[tuple[int, int, int, int]]:
    return [(m.first_seq, m.last_seq, m.first_offset, m.last_offset) for m in entry.batch_metadata]


class ProducerLogMachine(LogMachine):
    delete_segments_before = None  # not rules here: see above
    delete_old_segments = None

    def __init__(self) -> None:
        super().__init__()
        # on a RAM file system where there is one: every step copies and reloads the
        # directory, and the reloads' fsyncs would dominate the run on a disk
        shutil.rmtree(self.root)
        self.root = Path(tempfile.mkdtemp(prefix="klogspec-stateful-", dir=SCRATCH))
        self.dir = self.root / "topic-0"
        self.copies = Path(tempfile.mkdtemp(prefix="klogspec-stateful-copy-", dir=SCRATCH))
        self.parsed: dict[bytes, ProducerBatch | None] = {}
        # per producer, how many of its last batches the log must still hold: all (up to 5)
        # since the last reload, which keeps only a snapshot's one
        self.retained_at_least: dict[int, int] = {}
        self.last_copy_check = None
        # producers a replay may leave with an older epoch's batches (producer-state.md §3:
        # Kafka replays a segment's batches per producer as one append)
        self.replayed_across_epochs: set[int] = set()

    def teardown(self) -> None:
        super().teardown()
        shutil.rmtree(self.copies, ignore_errors=True)

    # --- the model ---
    def model(self) -> ProducerModel:
        found = []
        for b in self.batches:
            if b.raw not in self.parsed:
                self.parsed[b.raw] = producer_batch(b.raw)
            if self.parsed[b.raw] is not None:
                found.append(self.parsed[b.raw])
        return replay(found)

    def expected_lso(self, model: ProducerModel) -> int:
        """TXN-B-7: the earliest open transaction's first offset (not below the log start),
        else the high watermark (here the LEO)."""
        firsts = [
            p.txn_first_offset for p in model.producers.values() if p.txn_first_offset is not None
        ]
        if not firsts:
            return self.log_end_offset
        return min(max(min(firsts), self.log_start_offset), self.log_end_offset)

    def fingerprint(self):
        psm = self.log.producer_state_manager
        producers = {
            pid: (
                e.producer_epoch, e.coordinator_epoch, e.last_timestamp,
                e.current_txn_first_offset, tuple(e.batch_metadata),
            )
            for pid, e in psm.producers.items()
        }  # fmt: skip
        return (
            producers,
            dict(psm.ongoing_txns),
            dict(psm.unreplicated_txns),
            self.log.last_stable_offset,
            self.log.log_end_offset,
        )

    def all_producer_batches(self, pid: int) -> list[ProducerBatch]:
        """Every data batch of ``pid`` in the log, any epoch."""
        found = []
        for b in self.batches:
            parsed = self.parsed.get(b.raw) or producer_batch(b.raw)
            if parsed is not None and parsed.producer_id == pid and parsed.marker is None:
                found.append(parsed)
        return found

    def forget_retained(self) -> None:
        """A reload keeps a snapshot's one batch per producer (and the batches after it)."""
        self.retained_at_least = {pid: min(n, 1) for pid, n in self.retained_at_least.items()}

    def accepted(self, info, count: int) -> ProducerBatch:
        """A written batch: the model's new last batch."""
        assert (info.first_offset, info.last_offset) == (
            self.log_end_offset,
            self.log_end_offset + count - 1,
        ), info
        stored = self.log.read(info.first_offset, 1 << 20).batches()[0]
        assert stored.base_offset == info.first_offset
        self.batches.append(parse(stored.raw))
        self.log_end_offset = info.last_offset + 1
        self.accept_roll_flushes()
        return producer_batch(stored.raw)

    def note_retained(self, before: ModelProducer | None, b: ProducerBatch) -> None:
        same_epoch = before is not None and before.epoch == b.epoch
        n = self.retained_at_least.get(b.producer_id, 0) if same_epoch else 0
        self.retained_at_least[b.producer_id] = n if b.marker is not None else min(n + 1, RETAINED)

    def refused(self, category: Category, append) -> None:
        """PSTATE-9: a refused append changes no producer (a roll before the check stays)."""
        before = self.fingerprint()
        self.expect_error(category, append)
        assert self.fingerprint() == before
        self.accept_roll_flushes()

    def data_batch(self, pid, epoch, seq, count, transactional, delta, gzip=False) -> bytes:
        now = self.clock.milliseconds()
        return build_record_batch(
            [SimpleRecord(value=b"p%d" % i, timestamp=max(0, now + delta)) for i in range(count)],
            compression=Compression.GZIP if gzip else Compression.NONE,
            producer_id=pid, producer_epoch=epoch, base_sequence=seq,
            is_transactional=transactional,
        )  # fmt: skip

    def marker(self, pid, epoch, commit, coordinator_epoch, delta, base_offset=0) -> bytes:
        return build_control_batch(
            ControlRecordType.COMMIT if commit else ControlRecordType.ABORT,
            producer_id=pid, producer_epoch=epoch, coordinator_epoch=coordinator_epoch,
            timestamp=max(0, self.clock.milliseconds() + delta), base_offset=base_offset,
            partition_leader_epoch=self.epoch,
        )  # fmt: skip

    def duplicate_of(self, pid: int, raw: bytes):
        """PSTATE-4: the oldest retained batch of the producer's epoch with the sequence
        range of ``raw`` (a follower may have written the same range twice), if any."""
        (b,) = list(iter_batches(raw))
        entry = self.log.producer_state_manager.producers.get(pid)
        if entry is None or entry.producer_epoch != b.producer_epoch:
            return None
        span = (b.base_sequence, b.last_sequence)
        return next((m for m in entry.batch_metadata if (m.first_seq, m.last_seq) == span), None)

    def duplicate(self, raw: bytes, original) -> None:
        """PSTATE-4: the original's offsets and timestamp, nothing written or changed."""
        before = self.fingerprint()
        info = self.log.append_as_leader(raw, self.epoch)
        assert (info.first_offset, info.last_offset) == (
            original.first_offset,
            original.last_offset,
        )
        assert info.log_append_time == original.timestamp
        assert self.fingerprint() == before
        self.accept_roll_flushes()

    def fits(self, raw: bytes) -> bool:
        if len(raw) <= self.config.segment_bytes:
            return True
        self.refused(
            Category.RECORD_BATCH_TOO_LARGE, lambda: self.log.append_as_leader(raw, self.epoch)
        )
        return False

    # --- producers appending ---
    @rule(
        pid=st.sampled_from(PRODUCER_IDS),
        batches=st.lists(st.tuples(st.integers(1, 3), producer_deltas), min_size=1, max_size=6),
        transactional=st.booleans(),
        bump=st.integers(0, 5),
        first_seq=st.sampled_from([0, 0, 17, INT32_MAX - 1, INT32_MAX]),
        gzip=st.booleans(),
    )
    def produce(self, pid, batches, transactional, bump, first_seq, gzip):
        """PSTATE-6, PSTATE-7, TXN-B-1, TXN-B-2: a producer's next batches, in sequence. A new
        producer may start anywhere (wrapping past Int.MAX); one in five bumps its epoch.
        A non-transactional batch inside its transaction is refused."""
        for i, (count, delta) in enumerate(batches):
            p = self.model().producers.get(pid)
            if p is None:
                epoch, seq = 0, first_seq
            elif bump == 0 and i == 0:
                epoch, seq = p.epoch + 1, 0
            else:
                epoch, seq = p.epoch, p.next_seq
            raw = self.data_batch(pid, epoch, seq, count, transactional, delta, gzip)
            if not self.fits(raw):
                return
            original = self.duplicate_of(pid, raw)  # after follower writes that went back
            if original is not None:
                self.duplicate(raw, original)
                continue
            if p is not None and p.txn_first_offset is not None and not transactional:
                self.refused(
                    Category.INVALID_TXN_STATE,
                    lambda raw=raw: self.log.append_as_leader(raw, self.epoch),
                )
                return
            info = self.log.append_as_leader(raw, self.epoch)
            b = self.accepted(info, count)
            assert (b.producer_id, b.epoch, b.first_seq) == (pid, epoch, seq)
            self.note_retained(p, b)

    @rule(
        pid=st.sampled_from(PRODUCER_IDS),
        commit=st.booleans(),
        bump=st.integers(0, 4),
        coordinator_step=st.integers(0, 1),
        delta=producer_deltas,
    )
    def end_transaction(self, pid, commit, bump, coordinator_step, delta):
        """TXN-B-3 to TXN-B-6: the coordinator's COMMIT or ABORT, at the producer's epoch or a
        bumped one (a timed-out transaction), from the same or a newer coordinator; with no
        transaction open it completes nothing."""
        p = self.model().producers.get(pid)
        epoch = (p.epoch if p else 0) + (bump == 0)
        coordinator_epoch = max(p.coordinator_epoch if p else 0, 0) + coordinator_step
        raw = self.marker(pid, epoch, commit, coordinator_epoch, delta)
        if not self.fits(raw):
            return
        info = self.log.append_as_leader(raw, self.epoch, AppendOrigin.COORDINATOR)
        b = self.accepted(info, 1)
        assert b.marker is (ControlRecordType.COMMIT if commit else ControlRecordType.ABORT)
        self.note_retained(p, b)

    @rule(
        steps=st.lists(
            st.tuples(
                st.sampled_from(PRODUCER_IDS),
                st.sampled_from(["data", "data", "commit", "abort"]),
            ),
            min_size=1,
            max_size=12,
        ),
        delta=producer_deltas,
    )
    def transactions(self, steps, delta):
        """TXN-B-2, TXN-B-3, TXN-B-6: transactions of several producers interleaved, some
        committed, some aborted (indexed with the first offset of the other producers'
        earliest open one), some left open. A marker goes to a producer with a transaction
        open if there is one."""
        for pid, action in steps:
            if action == "data":
                self.produce(pid, [(1, delta)], True, 1, 0, False)
                continue
            producers = self.model().producers
            open_ids = [k for k, q in producers.items() if q.txn_first_offset is not None]
            if open_ids and pid not in open_ids:
                pid = open_ids[0]
            self.end_transaction(pid, action == "commit", 1, 0, delta)

    @precondition(lambda self: any(p.batches for p in self.model().producers.values()))
    @rule(data=st.data())
    def retry(self, data):
        """PSTATE-4: a client's retry of one of its recent batches: a retained one (the last
        5, or fewer since a reload) returns its first offsets and writes nothing; an older one
        is out of order."""
        model = self.model()
        choices = [
            (pid, b) for pid, p in model.producers.items() for b in p.batches[-RETAINED - 2 :]
        ]
        pid, b = data.draw(st.sampled_from(choices))
        p = model.producers[pid]
        count = b.last_offset - b.first_offset + 1
        raw = self.data_batch(pid, b.epoch, b.first_seq, count, b.is_transactional, 0)
        if not self.fits(raw):
            return
        entry = self.log.producer_state_manager.producers[pid]
        age = len(p.batches) - p.batches.index(b)  # 1: the last batch
        if age <= self.retained_at_least.get(pid, 0):
            assert b.span in kept_batches(entry)
        original = self.duplicate_of(pid, raw)
        if original is None:
            self.refused(
                Category.OUT_OF_ORDER_SEQUENCE_NUMBER,
                lambda: self.log.append_as_leader(raw, self.epoch),
            )
        else:
            self.duplicate(raw, original)

    @precondition(lambda self: any(p.batches for p in self.model().producers.values()))
    @rule(data=st.data(), new_epoch=st.booleans(), gap=st.integers(1, 3))
    def out_of_order(self, data, new_epoch, gap):
        """PSTATE-6, PSTATE-7: a gap after the last sequence, or a new epoch not starting at
        0, is OUT_OF_ORDER_SEQUENCE_NUMBER."""
        model = self.model()
        pid = data.draw(st.sampled_from(sorted(k for k, p in model.producers.items() if p.batches)))
        p = model.producers[pid]
        if new_epoch:
            epoch, seq = p.epoch + 1, gap
        else:
            epoch, seq = p.epoch, (p.next_seq + gap) % (INT32_MAX + 1)
        raw = self.data_batch(pid, epoch, seq, 1, p.txn_first_offset is not None, 0)
        if not self.fits(raw):
            return
        original = self.duplicate_of(pid, raw)  # after follower writes that went back
        if original is not None:
            self.duplicate(raw, original)
            return
        self.refused(
            Category.OUT_OF_ORDER_SEQUENCE_NUMBER,
            lambda: self.log.append_as_leader(raw, self.epoch),
        )

    @precondition(lambda self: any(p.epoch > 0 for p in self.model().producers.values()))
    @rule(data=st.data(), as_marker=st.booleans())
    def fenced(self, data, as_marker):
        """PSTATE-5: a batch or marker of an older producer epoch is INVALID_PRODUCER_EPOCH."""
        model = self.model()
        pid = data.draw(st.sampled_from(sorted(k for k, p in model.producers.items() if p.epoch)))
        p = model.producers[pid]
        epoch = data.draw(st.integers(0, p.epoch - 1))
        if as_marker:
            raw = self.marker(pid, epoch, True, max(p.coordinator_epoch, 0), 0)
            origin = AppendOrigin.COORDINATOR
        else:
            raw = self.data_batch(pid, epoch, 0, 1, p.txn_first_offset is not None, 0)
            origin = AppendOrigin.CLIENT
        if self.fits(raw):
            self.refused(
                Category.INVALID_PRODUCER_EPOCH,
                lambda: self.log.append_as_leader(raw, self.epoch, origin),
            )

    @precondition(
        lambda self: any(p.coordinator_epoch > 0 for p in self.model().producers.values())
    )
    @rule(data=st.data(), commit=st.booleans())
    def zombie_coordinator(self, data, commit):
        """TXN-B-4: a marker from an older coordinator epoch is TRANSACTION_COORDINATOR_FENCED."""
        model = self.model()
        pid = data.draw(
            st.sampled_from(
                sorted(k for k, p in model.producers.items() if p.coordinator_epoch > 0)
            )
        )
        p = model.producers[pid]
        raw = self.marker(pid, p.epoch, commit, p.coordinator_epoch - 1, 0)
        if self.fits(raw):
            self.refused(
                Category.TRANSACTION_COORDINATOR_FENCED,
                lambda: self.log.append_as_leader(raw, self.epoch, AppendOrigin.COORDINATOR),
            )

    @rule(
        pid=st.sampled_from(PRODUCER_IDS),
        epoch=st.integers(0, 3),
        seq=st.integers(0, 50),
        transactional=st.booleans(),
        as_marker=st.booleans(),
        commit=st.booleans(),
        coordinator_epoch=st.integers(0, 3),
        gap=st.integers(0, 2),
    )
    def replicate(self, pid, epoch, seq, transactional, as_marker, commit, coordinator_epoch, gap):
        """PSTATE-8: a follower takes the leader's batches as they are: any epoch, sequence or
        coordinator epoch; a non-transactional batch in an open transaction is still refused
        (INVALID_TXN_STATE)."""
        p = self.model().producers.get(pid)
        refused = not as_marker and not transactional and p and p.txn_first_offset is not None
        # no gap before a refused set: the roll that comes before the producer checks would
        # leave an empty active segment above the LEO, the recovery point with it (as in
        # Kafka), which LogMachine's invariants do not allow
        base = self.log_end_offset + (0 if refused else gap)
        if as_marker:
            raw = self.marker(pid, epoch, commit, coordinator_epoch, 0, base)
        else:
            now = self.clock.milliseconds()
            raw = build_record_batch(
                [SimpleRecord(value=b"r", timestamp=now)], base_offset=base,
                partition_leader_epoch=self.epoch, producer_id=pid, producer_epoch=epoch,
                base_sequence=seq, is_transactional=transactional,
            )  # fmt: skip
        if len(raw) > self.config.segment_bytes:
            return
        if refused:
            self.refused(Category.INVALID_TXN_STATE, lambda: self.log.append_as_follower(raw))
            return
        self.log.append_as_follower(raw)
        self.batches.append(parse(raw))
        self.log_end_offset = base + 1
        self.accept_roll_flushes()
        self.note_retained(p, producer_batch(raw))

    @rule(data=st.data(), max_bytes=st.integers(0, 600), min_one_message=st.booleans())
    def read_committed(self, data, max_bytes, min_one_message):
        """READ-21, READ-22: a read_committed read stops at the LSO and lists the aborted
        transactions overlapping [start, the first index entry past the bytes read)."""
        start = data.draw(st.integers(self.log_start_offset, self.log_end_offset))
        if start < self.segment_bases()[0]:
            self.expect_error(
                Category.OFFSET_OUT_OF_RANGE,
                lambda: self.log.read(start, max_bytes, isolation=FetchIsolation.TXN_COMMITTED),
            )
            return
        max_offset = data.draw(st.one_of(st.none(), st.integers(start, self.log_end_offset)))
        model = self.model()
        lso = self.expected_lso(model)
        fetch = self.log.read(
            start, max_bytes, max_offset, min_one_message, FetchIsolation.TXN_COMMITTED
        )
        bound = min(self.log_end_offset if max_offset is None else max_offset, lso)
        assert fetch.data() == self.expected_read(start, max_bytes, bound, min_one_message)
        assert all(b.last_offset < lso for b in fetch.batches())
        layout = self.layout()
        first = self.locate(layout, start)
        # the log's bound as Kafka holds it: a bound below the LEO is where a read from it
        # starts (LocalLog.java convertToOffsetMetadataOrThrow), which since 4.0 is the base
        # offset of the batch holding it (READ-11); the LEO when no batch reaches it
        if bound < self.log_end_offset:
            holding = [b.base_offset for b in self.batches if b.last_offset >= bound]
            bound = min(holding, default=self.log_end_offset)
        if start >= bound:
            assert fetch.aborted_transactions == ()
            return
        if first is None:  # nothing left at or after start: Kafka's empty result at the LEO
            assert fetch.aborted_transactions is None and fetch.data() == b""
            return
        base, position, _ = first
        metadata = fetch.fetch_offset_metadata
        assert (metadata.segment_base_offset, metadata.relative_position_in_segment) == (
            base,
            position,
        )
        # the upper bound: the first offset index entry at or past the end of the bytes read,
        # except that Kafka's search passes over a first entry exactly at that end (READ-22)
        segment = next(s for s in self.log.log_segments() if s.base_offset == base)
        index = segment.offset_index
        end = position + fetch.size_in_bytes
        entries = [index.entry(i) for i in range(index.entries)]
        past = [
            e.offset
            for n, e in enumerate(entries)
            if e.position > end or (e.position == end and n > 0)
        ]
        if entries and entries[0].position == end and len(entries) == 1:
            past = []
        later = [b for b in self.segment_bases() if b > base]
        upper = past[0] if past else later[0] if later else self.log_end_offset
        expected = [a for a in model.aborted if a.last_offset >= start and a.first_offset < upper]
        assert list(fetch.aborted_transactions) == expected

    # --- reloads: the log keeps one batch per producer from a snapshot ---
    @rule(data=st.data())
    def truncate_to(self, data):
        super().truncate_to(data)
        self.forget_retained()
        self.replayed_across_epochs |= self.producers_lowering_their_epoch()

    def producers_lowering_their_epoch(self) -> set[int]:
        """The producers with a batch or marker whose epoch is below the one before it (a
        follower may write one, PSTATE-8): the grouped replay of a rebuild can keep batches
        of the epoch before such a drop."""
        last_epoch: dict[int, int] = {}
        found = set()
        for b in self.batches:
            parsed = self.parsed.get(b.raw) or producer_batch(b.raw)
            if parsed is None:
                continue
            if parsed.epoch < last_epoch.get(parsed.producer_id, parsed.epoch):
                found.add(parsed.producer_id)
            last_epoch[parsed.producer_id] = parsed.epoch
        return found

    @rule(data=st.data(), with_start=st.booleans())
    def truncate_fully_and_start_at(self, data, with_start):
        super().truncate_fully_and_start_at(data, with_start)
        self.retained_at_least = {}
        self.replayed_across_epochs = set()

    @rule()
    def close_and_reopen(self):
        super().close_and_reopen()
        self.forget_retained()

    @rule()
    def crash_and_reopen(self):
        super().crash_and_reopen()
        self.forget_retained()

    # --- invariants ---
    @invariant()
    def producers_match_the_model(self):
        """PSTATE-1, PSTATE-2, TXN-B-7: memory against the model."""
        if not hasattr(self, "log"):
            return
        model = self.model()
        psm = self.log.producer_state_manager
        assert set(psm.producers) == set(model.producers)
        for pid, p in model.producers.items():
            entry = psm.producers[pid]
            assert (
                entry.producer_epoch,
                entry.coordinator_epoch,
                entry.last_timestamp,
                entry.current_txn_first_offset,
            ) == (p.epoch, p.coordinator_epoch, p.last_timestamp, p.txn_first_offset), pid
            kept = kept_batches(entry)
            history = [b.span for b in p.batches]
            if pid in self.replayed_across_epochs and kept and history:
                # a grouped replay may keep an earlier epoch's batches before this epoch's
                spans = {b.span for b in self.all_producer_batches(pid)}
                assert len(kept) <= RETAINED and kept[-1] == history[-1], pid
                assert set(kept) <= spans, pid
                continue
            assert len(kept) <= RETAINED and kept == history[len(history) - len(kept) :], pid
            assert len(kept) >= min(self.retained_at_least.get(pid, 0), len(history)), pid
            assert bool(kept) == bool(history), pid
        assert {first: t.producer_id for first, t in psm.ongoing_txns.items()} == {
            p.txn_first_offset: pid
            for pid, p in model.producers.items()
            if p.txn_first_offset is not None
        }
        assert not psm.unreplicated_txns  # single replica: the high watermark is the LEO
        assert self.log.last_stable_offset == self.expected_lso(model)
        assert self.log.state().last_stable_offset == self.expected_lso(model)

    @invariant()
    def txn_indexes_hold_the_aborted_transactions(self):
        """TXN-B-5, TXN-B-6: each segment indexes the aborts whose marker it holds."""
        if not hasattr(self, "log"):
            return
        aborted = self.model().aborted
        bases = self.segment_bases()
        for segment, end in zip(self.log.log_segments(), [*bases[1:], None], strict=True):
            expected = [
                a
                for a in aborted
                if a.last_offset >= segment.base_offset and (end is None or a.last_offset < end)
            ]
            assert segment.txn_index.all_aborted_txns() == expected, segment.base_offset

    @invariant()
    def state_rebuilt_from_disk_is_the_same(self):
        """SNAP-B-1, SNAP-B-2, RECOV-19: the directory as it stands, loaded uncleanly (every
        segment recovered from the snapshots there), holds what memory holds."""
        if not hasattr(self, "log"):
            return
        files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in self.dir.iterdir())
        if files == self.last_copy_check:
            return  # nothing on disk changed since the last check
        self.last_copy_check = files
        # a log directory of its own, without checkpoints: the load recovers every segment
        copy = self.copies / "reload" / self.dir.name
        shutil.copytree(self.dir, copy)
        config = replace(self.config, segment_index_bytes=4096)  # INDEX-8 may need more room
        rebuilt = Log.open(
            copy,
            config,
            ManualClock(self.clock.milliseconds()),
            load=LoadOptions(had_clean_shutdown=False),
        )
        try:
            # a reload ends after the last batch (a truncation inside one set the LEO past it)
            bases = self.segment_bases()
            in_last = [b for b in self.batches if b.base_offset >= bases[-1]]
            end = in_last[-1].last_offset + 1 if in_last else bases[-1]
            assert rebuilt.log_end_offset == end
            mine, theirs = self.log.producer_state_manager, rebuilt.producer_state_manager
            assert set(theirs.producers) == set(mine.producers)
            for pid, entry in mine.producers.items():
                other = theirs.producers[pid]
                for name in (
                    "producer_epoch", "coordinator_epoch", "last_timestamp",
                    "current_txn_first_offset", "last_seq", "last_data_offset",
                    "last_offset_delta",
                ):  # fmt: skip
                    assert getattr(other, name) == getattr(entry, name), (pid, name)
                kept, loaded = kept_batches(entry), kept_batches(other)
                n = min(len(kept), len(loaded))
                assert kept[len(kept) - n :] == loaded[len(loaded) - n :], pid
            assert theirs.ongoing_txns == mine.ongoing_txns
            assert rebuilt.last_stable_offset == min(self.log.last_stable_offset, end)
            assert [s.txn_index.all_aborted_txns() for s in rebuilt.log_segments()] == [
                s.txn_index.all_aborted_txns() for s in self.log.log_segments()
            ]
        finally:
            rebuilt.crash()
            shutil.rmtree(copy.parent, ignore_errors=True)


def run_producers(max_examples: int, steps: int) -> None:
    run_state_machine_as_test(
        ProducerLogMachine,
        settings=settings(
            max_examples=max_examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


@pytest.mark.req(
    "PSTATE-1", "PSTATE-2", "PSTATE-3", "PSTATE-4", "PSTATE-5", "PSTATE-6", "PSTATE-7",
    "PSTATE-8", "PSTATE-9", "TXN-B-1", "TXN-B-2", "TXN-B-3", "TXN-B-4", "TXN-B-5",
    "TXN-B-6", "TXN-B-7", "READ-21", "READ-22", "SNAP-B-1", "SNAP-B-2", "SNAP-B-5",
    "SNAP-B-7", "RECOV-19",
)  # fmt: skip
def test_log_with_producers_matches_model():
    """The default run: small enough for every test run."""
    run_producers(max_examples=100, steps=40)


@pytest.mark.slow
def test_log_with_producers_matches_model_long():
    run_producers(max_examples=600, steps=100)
