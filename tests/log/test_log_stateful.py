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
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
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

from reference_impl.checkpoint_files import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    read_offsets_or_empty,
)
from reference_impl.clock import ManualClock
from reference_impl.config import LogConfig
from reference_impl.errors import Category, KafkaLogError
from reference_impl.log import Log
from reference_impl.records import (
    Compression,
    SimpleRecord,
    build_legacy_message_set,
    build_record_batch,
    iter_batches,
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
        changed = self.log.truncate_to(target)
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
        load recovers from the checkpointed recovery point, which it does not raise."""
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
        self.recovery_point = min(checkpoints[RECOVERY_POINT_CHECKPOINT], self.log_end_offset)

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
