"""A fixed sequence of log operations, recorded write by write, with the batches the log must
hold before and after each (the model the crash tests check recovery against).

The workload mixes leader appends (every codec, growing leader epochs) and follower
appends (several batches per set), explicit flushes, ``flush_messages`` flushes and the
flush of every roll, a manual roll, a truncation, a log-start-offset raise with segment
deletion, and ends with a clean close. Each ``Step`` knows which snapshots of the
recorder its writes made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.records import Compression, SimpleRecord, build_record_batch, iter_batches

from .fault_fs import WriteRecorder
from .support import MOCK_TIME_START, open_log

CODECS = list(Compression)

# kind: what a crash in the middle of the step may leave
APPEND, TRUNCATE, RETENTION, OTHER = "append", "truncate", "retention", "other"


@dataclass(frozen=True)
class Step:
    name: str
    kind: str
    before: tuple[bytes, ...]  # the log's batches before the step, in order
    after: tuple[bytes, ...]
    first: int  # the step's writes made snapshots [first, last)
    last: int
    data_write: int | None = None  # an append's batches are whole from this snapshot on

    def outcomes(self, crash: int) -> tuple[bytes, ...] | None:
        """The exact batches a process crash after snapshot ``crash`` must recover to, or
        None when the step allows a range (truncation, retention)."""
        if self.kind == APPEND:
            return self.after if crash >= self.data_write else self.before
        if self.kind == OTHER:
            return self.after
        return None


CONFIGS = {
    "plain": LogConfig(
        segment_bytes=700,
        index_interval_bytes=90,
        segment_index_bytes=120,
        flush_messages=9,
        file_delete_delay_ms=0,
    ),
    "preallocated": LogConfig(
        segment_bytes=1100,
        index_interval_bytes=0,
        segment_index_bytes=240,
        preallocate=True,
        file_delete_delay_ms=500,
    ),
}


def leader_batch(i: int) -> bytes:
    n = 1 + i % 4
    records = [
        SimpleRecord(
            key=b"k%d" % i,
            value=(b"leader-%d-%d " % (i, j)) * 3,
            timestamp=MOCK_TIME_START + i * 10 + j,
        )
        for j in range(n)
    ]
    return build_record_batch(records, compression=CODECS[i % len(CODECS)])


def follower_set(offset: int, i: int, epoch: int) -> bytes:
    """Two or three batches, keeping their offsets, as a replica fetches them."""
    out, count = b"", 2 + i % 2
    for k in range(count):
        records = [
            SimpleRecord(value=b"follower-%d-%d" % (i, k), timestamp=MOCK_TIME_START + i * 10)
        ]
        out += build_record_batch(
            records,
            base_offset=offset + k,
            partition_leader_epoch=epoch,
            compression=CODECS[(i + k) % len(CODECS)],
        )
    return out


class Workload:
    def __init__(self, root: Path, config: LogConfig, recorder: WriteRecorder) -> None:
        self.root, self.config, self.recorder = root, config, recorder
        self.clock = ManualClock(MOCK_TIME_START)
        self.steps: list[Step] = []
        self.model: list[bytes] = []

    def _step(self, name: str, kind: str, operation) -> None:
        before, first = tuple(self.model), self.recorder.count
        data_write = operation()
        self.steps.append(
            Step(name, kind, before, tuple(self.model), first, self.recorder.count, data_write)
        )

    def _batches_on_disk(self) -> list[bytes]:
        return [b.raw for s in self.log.log_segments() for b in s.log.batches()]

    def run(self) -> list[Step]:
        def open_():
            self.log = open_log(self.root, self.clock, self.config, clean=None, recovery_point=None)

        self._step("open", OTHER, open_)
        epoch = 0
        for i in range(36):
            self.clock.sleep(3)
            if i % 9 == 8:
                epoch += 1
                self._step(
                    f"epoch {epoch}",
                    OTHER,
                    lambda e=epoch: self.log.maybe_assign_epoch_start_offset(
                        e, self.log.log_end_offset
                    ),
                )
            if i % 3 == 2:
                records = follower_set(self.log.log_end_offset, i, epoch)
                self._step(
                    f"follower append {i}",
                    APPEND,
                    lambda r=records: self._append(lambda: self.log.append_as_follower(r)),
                )
            else:
                records = leader_batch(i)
                self._step(
                    f"leader append {i}",
                    APPEND,
                    lambda r=records, e=epoch: self._append(
                        lambda: self.log.append_as_leader(r, e)
                    ),
                )
            if i == 11:
                self._step("flush", OTHER, self.log.flush)
            if i == 14:
                self._step("roll", OTHER, self.log.roll)
            if i == 20:  # to a batch boundary: inside a batch would leave a gap (quirk 9)
                target = max(
                    _base_offset(r)
                    for r in self.model
                    if _base_offset(r) <= self.log.log_end_offset - 12
                )
                self._step("truncate", TRUNCATE, lambda t=target: self._truncate(t))
            if i == 30:
                self._step("retention", RETENTION, self._retention)
        self._step("close", OTHER, self.log.close)
        return self.steps

    def _append(self, append) -> int:
        """Run an append; the model gains the bytes its data write put on disk."""
        writes_before = len(self.recorder.torn)
        append()
        data = [t for t in self.recorder.torn[writes_before:] if t.file.endswith(".log")]
        (write,) = data  # one append is one write of the .log
        self.model += [b.raw for b in iter_batches(write.data)]
        assert self.model == self._batches_on_disk()
        return write.index

    def _truncate(self, target: int) -> None:
        self.log.truncate_to(target)
        self.model = [raw for raw in self.model if _last_offset(raw) < target]
        assert self.model == self._batches_on_disk()

    def _retention(self) -> None:
        self.log.maybe_increment_log_start_offset(self.log.log_end_offset - 20)
        self.log.delete_old_segments()
        first_base = self.log.log_segments()[0].base_offset
        self.model = [raw for raw in self.model if _last_offset(raw) >= first_base]
        assert self.model == self._batches_on_disk()


def _base_offset(raw: bytes) -> int:
    (batch,) = iter_batches(raw)
    return batch.base_offset


def _last_offset(raw: bytes) -> int:
    (batch,) = iter_batches(raw)
    return batch.last_offset


def record_workload(root: Path, config: LogConfig) -> tuple[WriteRecorder, list[Step]]:
    root.mkdir(parents=True, exist_ok=True)
    with WriteRecorder(root) as recorder:
        steps = Workload(root, config, recorder).run()
    return recorder, steps
