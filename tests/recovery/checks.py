"""What every recovered directory must satisfy (recovery.md §8): the checks the crash and
damage tests run on each case."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from klogspec.verify.findings import Severity
from klogspec.verify.run import verify_paths
from reference_impl.log import checkpoint_files as ckpt
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.load_events import LoadObserver, Reason
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch, iter_batches

from .fault_fs import Snapshot, materialize
from .support import MOCK_TIME_START, PARTITION, TOPIC, open_log, partition_dir


@dataclass
class Counts:
    """How many cases of each kind ran (printed by the tests)."""

    cases: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, n: int = 1) -> None:
        self.cases[kind] = self.cases.get(kind, 0) + n

    @property
    def total(self) -> int:
        """Distinct cases: the "..., full checks" counts are a subset of their kind's."""
        return sum(v for k, v in self.cases.items() if not k.endswith("full checks"))

    def __str__(self) -> str:
        return f"{self.total} cases: " + ", ".join(
            f"{k} {v}" for k, v in sorted(self.cases.items())
        )


def batches_of(log: Log) -> tuple[bytes, ...]:
    return tuple(b.raw for s in log.log_segments() for b in s.log.batches())


def last_offset(raw: bytes) -> int:
    (batch,) = iter_batches(raw)
    return batch.last_offset


def checkpoint_offset(snapshot: Snapshot, name: str) -> int | None:
    data = snapshot.get(name)
    if data is None:
        return None
    from reference_impl.formats.checkpoints import read_offset_checkpoint

    entries = read_offset_checkpoint(data)
    return next((e.offset for e in entries if (e.topic, e.partition) == (TOPIC, PARTITION)), None)


def recover(
    state: Snapshot, root: Path, config: LogConfig, **load
) -> tuple[Log, tuple[bytes, ...], LoadObserver]:
    """Lay ``state`` out in ``root`` and open it as the broker's next start would."""
    materialize(state, root)
    observer = LoadObserver()
    clock = ManualClock(MOCK_TIME_START + 10**6)
    options = {"clean": None, "recovery_point": None, **load}
    log = open_log(root, clock, config, observer=observer, **options)
    return log, batches_of(log), observer


def files_without_deleted(root: Path) -> Snapshot:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".deleted")
    }


def check_recovered_again_is_the_same(
    log: Log, root: Path, config: LogConfig, first_load: LoadObserver, clean: bool = False
) -> None:
    """RECOV-12: after an unclean load, a second load after a crash changes no byte. Two
    exceptions: ``.deleted`` files whose delay had not passed (the next load removes them,
    LOAD-6), and the zeros of a preallocated segment the first load created (LOAD-20), which
    the second trims. After a ``clean`` first load the second may rebuild indexes (INDEX-8
    per batch, appends per set): only the .log files and checkpoints must stay."""
    log.crash()
    created = {
        e.file.name for e in first_load.events if e.action == "create" and e.reason is Reason.EMPTY
    }
    first = _normalized(files_without_deleted(root), created)
    observer = LoadObserver()
    again = open_log(
        root,
        ManualClock(MOCK_TIME_START + 10**6),
        config,
        clean=False,
        recovery_point=None,
        observer=observer,
    )
    again.crash()
    cuts = [e for e in observer.events if e.action == "truncate"]
    assert all(e.file.name in created and e.error == "zero_tail" for e in cuts), cuts
    second = _normalized(files_without_deleted(root), created)
    if clean:
        first, second = (
            {k: v for k, v in files.items() if not k.endswith(("index", "timeindex"))}
            for files in (first, second)
        )
    assert second == first


def _normalized(files: Snapshot, created: set[str]) -> Snapshot:
    return {k: v.rstrip(b"\0") if Path(k).name in created else v for k, v in files.items()}


def check_appends_and_verify(root: Path, config: LogConfig, expected: tuple[bytes, ...]) -> None:
    """RECOV-13: the recovered log takes an append at its log end offset, reads back what it
    holds, and once closed ``klogspec verify`` finds nothing above info."""
    clock = ManualClock(MOCK_TIME_START + 10**6)
    log = open_log(root, clock, config, clean=False, recovery_point=None)
    assert batches_of(log) == expected
    end = log.log_end_offset
    if expected:
        assert end == last_offset(expected[-1]) + 1
    info = log.append_as_leader(
        build_record_batch([SimpleRecord(value=b"after recovery", timestamp=clock.milliseconds())]),
        log.latest_epoch or 0,
    )
    assert info.first_offset == end and log.log_end_offset == end + 1
    assert batches_of(log)[:-1] == expected
    log.close()
    serious = [f for f in verify_paths([root]) if f.severity in (Severity.WARNING, Severity.ERROR)]
    assert serious == [], serious


def rp_checkpoint(snapshot: Snapshot) -> int:
    return checkpoint_offset(snapshot, ckpt.RECOVERY_POINT_CHECKPOINT) or 0


def is_slice(part: tuple[bytes, ...], whole: tuple[bytes, ...]) -> bool:
    n = len(part)
    return any(whole[i : i + n] == part for i in range(len(whole) - n + 1))


__all__ = ["partition_dir"]
