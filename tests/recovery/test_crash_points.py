"""A crash at every write boundary of a workload, a torn write at every byte of its last append
and of every fourth (at the header's field boundaries for the others; every byte of every
append with --runslow), and a power failure at every write boundary; then the broker's next
start. Checked against the workload's model (workload.py):

* a process crash loses nothing written: the log holds exactly the batches of the step's
  before- or after-state (an append: after once its data write happened), or for a
  truncation or a segment deletion, a state between the two;
* a power failure keeps every batch below the checkpointed recovery point, and what it
  holds is a run of appended batches, in order;
* every few cases, in full with --runslow: a second load after a crash changes no byte,
  the log takes an append at its end, ``klogspec verify`` finds nothing, and ``klogspec
  recover`` does what its plan says.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from klogspec.recover.run import recover_partition
from reference_impl.log.config import LogConfig
from reference_impl.records import iter_batches

from .checks import (
    Counts,
    check_appends_and_verify,
    check_recovered_again_is_the_same,
    is_slice,
    last_offset,
    recover,
    rp_checkpoint,
)
from .fault_fs import materialize
from .support import partition_dir
from .workload import APPEND, CONFIGS, RETENTION, TRUNCATE, Step, record_workload

TORN_SAMPLE = (1, 8, 12, 16, 17, 21, 57, 61, 62)  # the header's field boundaries, and inside


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def recorded(request, tmp_path_factory):
    config = CONFIGS[request.param]
    recorder, steps = record_workload(tmp_path_factory.mktemp("workload"), config)
    return request.param, config, recorder, steps


def step_of(steps: list[Step], snapshot: int) -> Step:
    return next(s for s in steps if s.first <= snapshot < s.last)


def check_process_crash(batches: tuple[bytes, ...], step: Step, snapshot: int) -> None:
    exact = step.outcomes(snapshot)
    if exact is not None:
        assert batches == exact, f"{step.name}: crash after write {snapshot}"
    elif step.kind == TRUNCATE:
        assert step.before[: len(batches)] == batches and len(batches) >= len(step.after)
    else:
        assert step.kind == RETENTION
        assert step.before[len(step.before) - len(batches) :] == batches
        assert len(batches) >= len(step.after)


def check_power_loss(batches, step: Step, recovery_point: int, appended: set[bytes]) -> None:
    """Only what was fsynced survives. A truncation is not fsynced either, so batches it
    removed can come back (Kafka relies on replication to cut them again): what is left
    is batches once appended, in offset order, holding every batch below the recovery
    point of the step's smaller state as a contiguous run."""
    assert all(raw in appended for raw in batches), f"{step.name}: a batch never appended"
    offsets = [last_offset(raw) for raw in batches]
    assert offsets == sorted(set(offsets)), f"{step.name}: offsets out of order"
    kept = min(step.before, step.after, key=len)
    durable = tuple(raw for raw in kept if last_offset(raw) < recovery_point)
    assert is_slice(durable, batches), f"{step.name}: lost data below {recovery_point}"


def check_the_tool(snapshot, root, config, step: Step, n: int) -> None:
    """RECOV-16: ``klogspec recover`` (in process) does what its plan says on a crash state,
    and leaves the batches a broker's load would."""
    materialize(snapshot, root)
    report = recover_partition(
        partition_dir(root), replace(config, file_delete_delay_ms=0), from_offset=0
    )
    assert report.error is None, report.error
    batches = tuple(
        b.raw
        for p in sorted(partition_dir(root).glob("*.log"))
        for b in iter_batches(p.read_bytes())
    )
    check_process_crash(batches, step, n)


def full_check_due(n: int, every: int, slow: bool) -> bool:
    return slow or n % every == 0


def run_crash_points(recorded, tmp_path, slow: bool) -> Counts:
    name, config, recorder, steps = recorded
    counts = Counts()
    root = tmp_path / "crash"
    for n, snapshot in enumerate(recorder.snapshots):
        step = step_of(steps, n)
        log, batches, observer = recover(snapshot, root, config)
        check_process_crash(batches, step, n)
        counts.add("crash points")
        if full_check_due(n, 3, slow):
            clean = ".kafka_cleanshutdown" in snapshot
            check_recovered_again_is_the_same(log, root, config, observer, clean)
            check_appends_and_verify(root, config, batches)
            counts.add("crash points, full checks")
        else:
            log.crash()
        if full_check_due(n, 5, slow):
            check_the_tool(snapshot, root, config, step, n)
            counts.add("crash points, klogspec recover")
    appended = {raw for step in steps for raw in step.after}
    for n, image in enumerate(recorder.durable_images):
        step = step_of(steps, n)
        log, batches, _ = recover(image, root, config)
        check_power_loss(batches, step, rp_checkpoint(image), appended)
        log.crash()
        counts.add("power failures")
    appends = [t for t in recorder.torn if step_of(steps, t.index).kind == APPEND]
    for i, t in enumerate(appends):
        step = step_of(steps, t.index)
        every_byte = slow or t is appends[-1] or i % 4 == 0
        cuts = range(1, len(t.data)) if every_byte else [k for k in TORN_SAMPLE if k < len(t.data)]
        for k in cuts:
            state = t.state(k)
            log, batches, observer = recover(state, root, config)
            written = state[t.file][t.position : t.position + len(t.data)]
            same = next(
                (i for i, (a, b) in enumerate(zip(written, t.data, strict=False)) if a != b),
                len(written),
            )
            # a set's first batches may be whole, and so may a batch whose last bytes are
            # zeros already there (a preallocated file)
            whole = tuple(b.raw for b in iter_batches(t.data[:same]))
            assert batches == step.before + whole, f"{step.name}: torn after {k} bytes"
            counts.add("torn writes")
            if full_check_due(k, 13, slow):
                check_recovered_again_is_the_same(log, root, config, observer)
                check_appends_and_verify(root, config, batches)
                counts.add("torn writes, full checks")
            else:
                log.crash()
    return counts


@pytest.mark.req(
    "RECOV-1", "RECOV-2", "RECOV-3", "RECOV-5", "RECOV-11", "RECOV-12", "RECOV-13", "RECOV-16"
)
def test_crash_at_every_write(recorded, scratch):
    started = time.perf_counter()
    counts = run_crash_points(recorded, scratch, slow=False)
    print(f"\n[{recorded[0]}] {counts} in {time.perf_counter() - started:.1f} s")


@pytest.mark.slow
@pytest.mark.req("RECOV-11", "RECOV-12", "RECOV-13")
def test_crash_at_every_write_full(recorded, scratch):
    started = time.perf_counter()
    counts = run_crash_points(recorded, scratch, slow=True)
    print(f"\n[{recorded[0]}] {counts} in {time.perf_counter() - started:.1f} s")


def test_the_workload_is_rich_enough(recorded):
    """Several segments, every codec, leader and follower appends, a truncation, deletions."""
    name, config, recorder, steps = recorded
    assert isinstance(config, LogConfig)
    kinds = {s.kind for s in steps}
    assert kinds >= {APPEND, TRUNCATE, RETENTION}
    calls = {call for call, _ in recorder.writes}
    assert {"pwrite", "ftruncate", "replace", "create"} <= calls
    if config.file_delete_delay_ms == 0:
        assert "unlink" in calls  # else the .deleted files wait for a load to remove them
    segments = {f for _, f in recorder.writes if f.endswith(".log")}
    assert len(segments) >= 5
