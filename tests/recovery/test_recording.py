"""``klogspec recover --dry-run``: the real loader over a storage that records the writes
(klogspec/recover/recording.py, reference_impl/log/storage.py). The overlay's own rules, a dry
run that changes nothing (a read-only directory, its log directory's checkpoints included),
and the dry run against the real run, file by file (RECOV-16)."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klogspec.recover import run as run_module
from klogspec.recover.recording import RecordingStorage
from klogspec.recover.run import recover_partition
from klogspec.safe_files import FileTooLargeError, NotRegularFileError
from reference_impl.formats.file_naming import (
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
)
from reference_impl.log import checkpoint_files as ckpt
from reference_impl.log.clock import SystemClock
from reference_impl.log.config import LogConfig
from reference_impl.log.loader import LoadOptions
from reference_impl.log.storage import using
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch

from .support import append_nonsense, keyed_batch, open_log, partition_dir, small_config

CONFIG = small_config(segment_bytes=250, index_interval_bytes=0)


# --- the overlay ---
def test_writes_truncations_and_growth_read_back_and_leave_the_file(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"abcdefgh")
    layer = RecordingStorage()
    channel = layer.open_channel(path)
    channel.write_at(b"XY", 2)
    assert channel.read_at(0, 100) == b"abXYefgh"
    channel.truncate(4)
    assert (channel.size(), channel.read_at(0, 100)) == (4, b"abXY")
    channel.truncate(6)  # growing adds zeros, never the real file's old bytes
    assert channel.read_at(0, 100) == b"abXY\0\0"
    channel.write_at(b"Z", 9)
    assert channel.read_at(3, 100) == b"Y\0\0\0\0\0Z"
    assert path.read_bytes() == b"abcdefgh" and layer.touched(path)
    layer.close()


def test_a_preallocated_index_is_a_length_not_bytes(tmp_path):
    layer = RecordingStorage()
    channel = layer.open_channel(tmp_path / "0.index")
    channel.truncate(10 << 20)
    for slot in range(1000):  # appends: one extent, grown in place
        channel.write_at(slot.to_bytes(8, "big"), slot * 8)
    content = layer.view(tmp_path / "0.index")
    assert content.length == 10 << 20 and [len(d) for _, d in content.extents] == [8000]
    assert channel.read_at(7992, 16) == (999).to_bytes(8, "big") + bytes(8)
    assert layer.created == [tmp_path / "0.index"] and list(tmp_path.iterdir()) == []


def test_renames_deletions_and_the_listing(tmp_path):
    (tmp_path / "a").write_bytes(b"one")
    (tmp_path / "b").write_bytes(b"two")
    layer = RecordingStorage()
    layer.replace(tmp_path / "a", tmp_path / "b")  # b replaced, as os.replace does
    assert layer.read_file(tmp_path / "b") == b"one" and not layer.exists(tmp_path / "a")
    layer.write_file(tmp_path / "c.tmp", b"three", sync=True)
    layer.rename(tmp_path / "c.tmp", tmp_path / "c")
    assert layer.unlink(tmp_path / "b")
    assert not layer.unlink(tmp_path / "b", missing_ok=True)
    with pytest.raises(FileNotFoundError):
        layer.unlink(tmp_path / "b")
    assert layer.files(tmp_path) == [tmp_path / "c"]
    assert layer.read_file(tmp_path / "c") == b"three"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


@pytest.mark.req("PART-8", "PART-9")
def test_reads_follow_the_tools_rules(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    os.mkfifo(part / "0.index")
    (tmp_path / "outside").write_bytes(b"x" * 20)
    (part / "1.log").symlink_to(tmp_path / "outside")
    with open(part / "2.snapshot", "wb") as handle:
        handle.truncate(4 << 30)  # sparse: no disk
    layer = RecordingStorage()
    with pytest.raises(NotRegularFileError, match="PART-8"):
        layer.open_channel(part / "0.index")
    with pytest.raises(NotRegularFileError, match="PART-9"):
        layer.open_channel(part / "1.log")
    with pytest.raises(FileTooLargeError):
        layer.read_file(part / "2.snapshot")


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.integers(0, 64), st.binary(min_size=1, max_size=16)),
        st.tuples(st.just("truncate"), st.integers(0, 80), st.just(b"")),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(initial=st.binary(max_size=40), ops=_OPS)
def test_the_overlay_reads_what_the_file_would_hold(tmp_path_factory, initial, ops):
    """Any run of positional writes and truncations reads back as on a real file."""
    path = tmp_path_factory.mktemp("overlay") / "f"
    path.write_bytes(initial)
    model = bytearray(initial)
    channel = RecordingStorage().open_channel(path)
    for op, position, data in ops:
        if op == "write":
            model[len(model) :] = bytes(max(0, position - len(model)))
            model[position : position + len(data)] = data
            channel.write_at(data, position)
        else:
            model[:] = model[:position].ljust(position, b"\0")
            channel.truncate(position)
        assert channel.size() == len(model)
        assert channel.read_at(0, len(model) + 5) == bytes(model)
    assert path.read_bytes() == initial


# --- the dry run over the loader ---
def _crashed(root: Path, clock, damage) -> Path:
    log = open_log(root, clock, CONFIG)
    for i in range(12):
        log.append_as_leader(keyed_batch(0, i, epoch=i // 4), i // 4)
    log.crash()
    dir = partition_dir(root)
    damage(dir)
    return dir


def _torn_middle(dir: Path) -> None:
    append_nonsense(dir / log_file_name(3), 40, seed=1)  # a cut, then the later segments go


def _no_indexes(dir: Path) -> None:
    (dir / offset_index_file_name(3)).unlink(missing_ok=True)
    (dir / time_index_file_name(6)).unlink(missing_ok=True)


def _no_epochs(dir: Path) -> None:
    (dir / ckpt.LEADER_EPOCH_CHECKPOINT).unlink()
    append_nonsense(dir / log_file_name(9), 17, seed=2)


def _start_above_end(dir: Path) -> None:
    ckpt.update_offset(dir.parent / ckpt.LOG_START_OFFSET_CHECKPOINT, "topic", 0, 50)


DAMAGE = {
    "torn middle segment": _torn_middle,
    "missing indexes": _no_indexes,
    "missing epochs": _no_epochs,
    "log start above the end": _start_above_end,
}


def _state(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under ``root``: its sha256, mtime and mode."""
    out = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        out[str(path.relative_to(root))] = (digest, info.st_mtime_ns, info.st_mode)
    return out


_WRITES = ("pwrite", "write", "ftruncate", "replace", "rename", "unlink", "utime", "link")


@pytest.mark.req("RECOV-16")
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_dry_run_changes_nothing_in_a_read_only_directory(tmp_path, clock, monkeypatch, case):
    dir = _crashed(tmp_path / "logs", clock, DAMAGE[case])
    before = _state(tmp_path)
    for path in [*tmp_path.rglob("*"), tmp_path]:  # read-only (root ignores it: hence below)
        path.chmod(path.lstat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        for name in _WRITES:  # and no write reaches the OS at all
            monkeypatch.setattr(os, name, _refuse(name))
        real_open = os.open
        monkeypatch.setattr(os, "open", _read_only(real_open))
        report = recover_partition(dir, CONFIG, from_offset=0, dry_run=True)
        monkeypatch.undo()
    finally:
        for path in [tmp_path, *tmp_path.rglob("*")]:
            path.chmod(path.lstat().st_mode | stat.S_IWUSR)
    assert report.error is None and report.mode == "dry-run" and report.plan.changes, case
    assert _state(tmp_path) == before


def _refuse(name):
    def call(*args, **kwargs):
        raise AssertionError(f"the dry run called os.{name}{args}")

    return call


def _read_only(real_open):
    def call(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND):
            raise AssertionError(f"the dry run opened {path} for writing")
        return real_open(path, flags, *args, **kwargs)

    return call


def _dry(dir: Path) -> tuple[RecordingStorage, dict[str, bytes]]:
    """The load and close of ``dir`` over a recording: the files it would leave."""
    layer = RecordingStorage()
    options = LoadOptions(had_clean_shutdown=False, recovery_point=0, index_sanity_check=True)
    config = replace(CONFIG, file_delete_delay_ms=0)
    with using(layer):
        Log.open(dir, config, SystemClock(), load=options).close()
        files = {
            str(p.relative_to(dir.parent)): layer.read_file(p)
            for folder in (dir.parent, dir)
            for p in layer.files(folder)
        }
    layer.close()
    return layer, files


@pytest.mark.req("RECOV-16")
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_the_recording_leaves_what_the_real_load_leaves(tmp_path, clock, case):
    """The layer's fidelity, which RECOV-16's run-time check stands on: after the same load
    and close, the recording holds the files, byte for byte, that the disk then holds."""
    dir = _crashed(tmp_path / "logs", clock, DAMAGE[case])
    _, would = _dry(dir)
    report = recover_partition(dir, CONFIG, from_offset=0, discard=True)
    assert report.error is None and report.mode == "recovered", report.error
    real = {
        str(p.relative_to(dir.parent)): p.read_bytes()
        for folder in (dir.parent, dir)
        for p in sorted(folder.iterdir())
        if p.is_file()
    }
    assert sorted(would) == sorted(real)
    assert [name for name in sorted(real) if would[name] != real[name]] == []


@pytest.mark.req("RECOV-16")
def test_a_plan_the_load_does_not_follow_fails_the_real_run(tmp_path, clock, monkeypatch):
    """Were the recording to miss a change, the plan would lose an action the disk's load then
    makes: the real run says so (exit status 2) rather than pass the plan off as done."""
    dir = _crashed(tmp_path / "logs", clock, _torn_middle)
    real_plan = run_module.plan_recovery

    def losing_a_deletion(*args, **kwargs):
        plan = real_plan(*args, **kwargs)
        first = next(a for a in plan.actions if a.action == "delete")
        plan.actions.remove(first)
        return plan

    monkeypatch.setattr(run_module, "plan_recovery", losing_a_deletion)
    report = recover_partition(dir, CONFIG, from_offset=0, discard=True)
    assert report.status == 2 and "did not follow the plan" in report.error


# --- what the dry run refuses, as the load would fail or split ---
BASE = 100


def _batches(first: int, count: int, step: int = 10) -> bytes:
    """``count`` batches of 2 records from offset ``first``; ``step`` 0: equal timestamps."""
    return b"".join(
        build_record_batch(
            [SimpleRecord(b"v" * 20, b"k", timestamp=1000 + step * n), SimpleRecord(b"w")],
            base_offset=first + 2 * n,
        )
        for n in range(count)
    )


REFUSED = {
    "offset index full": (_batches(BASE, 12, step=0), 8 * 4, "recovery would meet index full"),
    "offsets go back while loading": (
        _batches(BASE, 6) + _batches(BASE, 6),
        4096,
        "offsets that go back while loading (LOAD-13)",
    ),
    "past the base's int32": (
        _batches(BASE, 2) + _batches(BASE + 2**31, 2),
        4096,
        "recovery would meet overflow",
    ),
}


@pytest.mark.req("RECOV-6", "RECOV-10", "LOAD-13", "RECOV-17")
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_dry_run_refuses_what_the_load_cannot_plan(tmp_path, case):
    """A segment recovered while loading (no .index, LOAD-13) whose recovery fills an index,
    goes back, or overflows its base (a split, RECOV-10, which the plan does not describe):
    the dry run names the .log and the rule, exit status 2, and changes nothing."""
    data, index_bytes, words = REFUSED[case]
    dir = tmp_path / "t-0"
    dir.mkdir()
    (dir / log_file_name(BASE)).write_bytes(data)
    before = _state(tmp_path)
    config = LogConfig(index_interval_bytes=1, segment_index_bytes=index_bytes)
    report = recover_partition(dir, config, from_offset=0, dry_run=True)
    assert report.status == 2 and report.error == f"{log_file_name(BASE)}: {words}", case
    assert _state(tmp_path) == before


@pytest.mark.req("RECOV-6", "RECOV-16")
def test_offsets_that_go_back_after_loading_empty_the_segment_in_the_plan(tmp_path):
    """The same segment with a sane index: recovered as unflushed, emptied (RECOV-6), planned
    as the truncation of every byte, then made so by the real run."""
    dir = tmp_path / "t-0"
    dir.mkdir()
    data = _batches(BASE, 6) + _batches(BASE, 6)
    (dir / log_file_name(BASE)).write_bytes(data)
    (dir / offset_index_file_name(BASE)).write_bytes(b"")
    config = LogConfig(index_interval_bytes=1, segment_index_bytes=4096)
    plan = recover_partition(dir, config, from_offset=0, dry_run=True).plan
    cut = next(a for a in plan.actions if a.action == "truncate")
    assert (cut.position, cut.bytes, cut.error) == (0, len(data), "invalid_offset")
    assert cut.offsets == (BASE, BASE + 12)
    report = recover_partition(dir, config, from_offset=0, discard=True)
    assert report.mode == "recovered" and (dir / log_file_name(BASE)).stat().st_size == 0


@pytest.mark.req("LOAD-11")
def test_a_segment_not_named_as_the_loader_names_it_is_refused(tmp_path):
    """``100.log``: the loader would open (and create) ``00000000000000000100.log`` instead."""
    dir = tmp_path / "t-0"
    dir.mkdir()
    (dir / "100.log").write_bytes(_batches(BASE, 2))
    report = recover_partition(dir, LogConfig(), from_offset=0, dry_run=True)
    assert report.error == f"100.log: the loader would open {log_file_name(BASE)} instead"
    assert sorted(p.name for p in dir.iterdir()) == ["100.log"]
