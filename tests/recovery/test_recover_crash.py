"""``klogspec recover`` killed at any moment (RECOV-21), and two at once (RECOV-22).

A damaged partition (a flipped batch in a middle segment, so a truncation and the deletion of
the segments after it; producer snapshots the load deletes; a stale ``.deleted`` file) is
recovered once with every file-system write recorded (fault_fs.py). Each recorded state is
what a SIGKILL right after that write leaves. For each:

* at the kill, every manifest names only pieces that are there, holding the bytes they say;
* a second ``recover`` finishes (exit 0 or 1, never 2), and leaves every file of the partition
  exactly as the uninterrupted run does;
* every byte of every original ``.log`` is in the ``.log`` files or in a piece a manifest
  names, every manifest is complete, and a third run has nothing to do.

The same from real processes: ``KLOGSPEC_FAULT_KILL_AT=N`` kills ``klogspec recover`` with
SIGKILL after its N-th durable step (journal.py), for every step; with --runslow also at
random moments of a run on a corpus partition.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec.recover import journal as journal_module
from klogspec.recover.cli import recover as recover_command
from klogspec.recover.journal import MANIFEST
from klogspec.recover.quarantine import QUARANTINE_DIR
from klogspec.recover.run import recover_partition
from klogspec.verify.findings import Severity
from klogspec.verify.run import verify_paths
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.records import SimpleRecord, build_record_batch

from .fault_fs import Snapshot, WriteRecorder, materialize
from .support import MOCK_TIME_START, open_log, partition_dir

CONFIG = LogConfig(segment_bytes=400, index_interval_bytes=100, segment_index_bytes=1024)
TOOL = replace(CONFIG, file_delete_delay_ms=0)
TOOL_ARGS = ["--index-interval-bytes", "100", "--segment-index-bytes", "1024", "--yes"]
DIR = "topic-0/"


def build_damaged(root: Path) -> Path:
    """30 one-record batches of an idempotent producer in segments of 3, flushed at 20, then
    a crash; a flipped batch in the third segment and a stale .deleted file."""
    clock = ManualClock(MOCK_TIME_START)
    log = open_log(root, clock, CONFIG, clean=None, recovery_point=None)
    for i in range(30):
        batch = build_record_batch(
            [SimpleRecord(value=b"order-%d" % i, timestamp=clock.milliseconds())],
            producer_id=7, producer_epoch=0, base_sequence=i, partition_leader_epoch=i // 10,
        )  # fmt: skip
        log.append_as_leader(batch, i // 10)
        clock.sleep(5)
        if i == 20:
            log.flush()
    log.crash()
    dir = partition_dir(root)
    segment = sorted(dir.glob("*.log"))[2]
    data = bytearray(segment.read_bytes())
    data[150] ^= 0x10
    segment.write_bytes(bytes(data))
    (dir / "00000000000000000001.log.deleted").write_bytes(b"stale bytes")
    return dir


def files(root: Path) -> Snapshot:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def partition_files(state: Snapshot, dir: str = DIR) -> Snapshot:
    """The partition's own files: the quarantine folders and the lock file aside."""
    return {
        name: data
        for name, data in state.items()
        if name.startswith(dir) and not name.startswith(dir + QUARANTINE_DIR)
    }


def manifests(state: Snapshot, dir: str = DIR) -> list[tuple[str, dict]]:
    """(folder, manifest) of every quarantine folder, oldest first."""
    found = []
    for name in sorted(state):
        if name.startswith(dir + QUARANTINE_DIR) and name.endswith("/" + MANIFEST):
            found.append((name[: -len(MANIFEST)], json.loads(state[name])))
    return found


def check_named_pieces(state: Snapshot, original: Snapshot, dir: str = DIR) -> None:
    """The manifest never names bytes that are not there: each named piece is present and
    holds the original bytes of the range (or the file) it names."""
    for folder, manifest in manifests(state, dir):
        for entry in manifest["entries"]:
            stored = entry.get("stored")
            if stored is None:
                continue
            assert folder + stored in state, f"{folder}{stored} named but missing"
            piece = state[folder + stored]
            assert len(piece) == entry["bytes"], f"{folder}{stored}: {len(piece)} bytes"
            source = original.get(dir + entry["file"])
            if entry["action"] == "truncate" and source is not None:
                position = entry["position"]
                assert piece == source[position : position + entry["bytes"]], stored
            elif entry["action"] == "snapshot" or entry["file"].endswith(".log"):
                assert piece == source, stored
        for name, stored in manifest.get("snapshotsBefore", {}).items():
            assert state[folder + stored] == original[dir + name], stored


def check_every_byte_kept(state: Snapshot, original: Snapshot, dir: str = DIR) -> None:
    """Each original .log, rebuilt from what is left of it and the pieces the manifests name,
    is the original."""
    entries = [(folder, e) for folder, m in manifests(state, dir) for e in m["entries"]]
    for name in (n for n in original if n.startswith(dir) and n.endswith(".log")):
        file = name[len(dir) :]
        content = state.get(name)
        if content is None:
            deleted = [(f, e) for f, e in entries if e["action"] == "delete" and e["file"] == file]
            assert deleted, f"{file} is gone and no manifest keeps it"
            folder, entry = deleted[-1]
            content = state[folder + entry["stored"]]
        cuts = [(f, e) for f, e in entries if e["action"] == "truncate" and e["file"] == file]
        for folder, entry in reversed(cuts):
            stored = entry.get("stored")
            piece = bytes(entry["bytes"]) if stored is None else state[folder + stored]
            position = entry["position"]
            if len(content) == position + len(piece):  # journaled, not cut yet: in both
                assert content[position:] == piece, f"{file}: {stored} differs"
                continue
            assert len(content) == position, f"{file}: {len(content)} bytes, cut at {position}"
            content += piece
        assert content == original[name], f"{file}: bytes lost"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The original directory, the uninterrupted run's result, and the recorded states."""
    root = tmp_path_factory.mktemp("original")
    build_damaged(root)
    original = files(root)
    done = tmp_path_factory.mktemp("done")
    materialize(original, done)
    report = recover_partition(partition_dir(done), TOOL, from_offset=0)
    assert report.error is None and report.mode == "recovered", report.error
    kinds = {a.action for a in report.plan.actions}
    assert {"truncate", "delete"} <= kinds
    recording = tmp_path_factory.mktemp("recording")
    materialize(original, recording)
    with WriteRecorder(recording) as recorder:
        recover_partition(partition_dir(recording), TOOL, from_offset=0)
    return original, files(done), recorder.snapshots


def check_kill_state(state: Snapshot, original: Snapshot, done: Snapshot, root: Path) -> None:
    check_named_pieces(state, original)
    check_every_byte_kept(state, original)  # what the kill left loses nothing either
    materialize(state, root)
    second = recover_partition(partition_dir(root), TOOL, from_offset=0)
    assert second.error is None, second.error
    after = files(root)
    assert partition_files(after) == partition_files(done)
    check_named_pieces(after, original)
    check_every_byte_kept(after, original)
    assert all(m["state"] == "complete" for _, m in manifests(after))
    third = recover_partition(partition_dir(root), TOOL, from_offset=0)
    assert third.status == 0, third.plan.changes


@pytest.mark.req("RECOV-21")
def test_a_kill_after_any_write(recorded, scratch):
    """Every write boundary of the run: the journal's and the loader's."""
    original, done, snapshots = recorded
    assert len(snapshots) > 40  # the journal and the load: many kill points
    started = time.perf_counter()
    for n, state in enumerate(snapshots):
        try:
            check_kill_state(state, original, done, scratch / "kill")
        except AssertionError as exc:
            raise AssertionError(f"killed after write {n + 1} of {len(snapshots)}: {exc}")
    took = time.perf_counter() - started
    print(f"{len(snapshots)} kill points checked in {took:.1f} s")


def test_the_uninterrupted_run_is_verified(recorded, tmp_path):
    original, done, _ = recorded
    materialize(done, tmp_path)
    assert [f for f in verify_paths([tmp_path]) if f.severity is not Severity.INFO] == []
    check_every_byte_kept(done, original)


# --- real processes, killed with SIGKILL --------------------------------------------------


def klogspec(*args: str, env: dict | None = None, timeout: float = 120):
    return subprocess.run(
        [sys.executable, "-c", "from klogspec.cli import main; main()", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout,
    )  # fmt: skip


def count_steps(dir: Path, monkeypatch) -> int:
    steps = []
    monkeypatch.setattr(journal_module, "STEP", steps.append)
    recover_partition(dir, TOOL, from_offset=0)
    monkeypatch.undo()
    return len(steps)


@pytest.mark.req("RECOV-21")
def test_sigkill_at_every_durable_step(tmp_path, monkeypatch, request):
    """A real process killed after each durable step of the journal; a second run finishes."""
    original_root = tmp_path / "original"
    build_damaged(original_root)
    original = files(original_root)
    done_root = tmp_path / "done"
    materialize(original, done_root)
    steps = count_steps(partition_dir(done_root), monkeypatch)
    done = files(done_root)
    assert steps >= 8
    points = range(1, steps + 1)
    if not request.config.getoption("--runslow"):
        points = sorted({1, 2, 3, steps // 2, steps - 2, steps - 1, steps})
    started = time.perf_counter()
    for n in points:
        root = tmp_path / f"kill{n}"
        materialize(original, root)
        killed = klogspec(
            "recover", "--from-offset", "0", *TOOL_ARGS, str(partition_dir(root)),
            env={"KLOGSPEC_FAULT_KILL_AT": str(n)},
        )  # fmt: skip
        assert killed.returncode == -signal.SIGKILL, (n, killed.returncode, killed.stderr)
        check_kill_state(files(root), original, done, root)
    print(f"{len(points)} of {steps} durable steps killed in {time.perf_counter() - started:.1f} s")


def _start_recover(root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from klogspec.cli import main; main()", "recover", "--yes",
         "--from-offset", "0", str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def _until_changes_begin(process: subprocess.Popen, partition: Path) -> float:
    """Wait for the run's first change (its quarantine folder); returns when, or the end."""
    while process.poll() is None and not (partition / QUARANTINE_DIR).exists():
        time.sleep(0.0005)
    return time.perf_counter()


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.req("RECOV-21")
def test_sigkill_at_random_moments(corpus, tmp_path):
    """A corpus partition (3 MB, a flipped batch: the load cuts 0.5 MB and deletes a segment)
    recovered by real processes killed at random moments of the part of the run that changes
    files (from its quarantine folder on); a second run (in process) finishes each."""
    from .test_recover_corpus import FLIP_AT, FLIPPED, MULTISEG, copy_log_dir, flip

    source = copy_log_dir(corpus, MULTISEG, tmp_path / "source")
    flip(source / "invoice-0" / FLIPPED, FLIP_AT)
    original = files(source)
    reference = tmp_path / "done"
    materialize(original, reference)
    process = _start_recover(reference)
    changing = _until_changes_begin(process, reference / "invoice-0")
    assert process.wait() == 1
    window = time.perf_counter() - changing  # how long the changes take
    done = files(reference)
    rng, runs, kills, midway = random.Random(16), 60, 0, 0
    started = time.perf_counter()
    for n in range(runs):
        root = tmp_path / f"run{n}"
        materialize(original, root)
        process = _start_recover(root)
        _until_changes_begin(process, root / "invoice-0")
        time.sleep(rng.uniform(0, 1.2) * window)
        process.kill()
        process.wait()
        kills += process.returncode == -signal.SIGKILL
        state = files(root)
        midway += any(m["state"] == "in-progress" for _, m in manifests(state, "invoice-0/"))
        check_named_pieces(state, original, "invoice-0/")
        check_every_byte_kept(state, original, "invoice-0/")
        second = recover_partition(root / "invoice-0", LogConfig(), from_offset=0)
        assert second.error is None, second.error
        after = files(root)
        assert partition_files(after, "invoice-0/") == partition_files(done, "invoice-0/")
        check_every_byte_kept(after, original, "invoice-0/")
    took = time.perf_counter() - started
    print(
        f"{runs} runs (changes take {window * 1000:.0f} ms): {kills} killed, {midway} of them "
        f"with the journal in progress; {took:.1f} s"
    )


# --- two at once ---------------------------------------------------------------------------


@pytest.mark.req("RECOV-22")
def test_a_second_recover_refuses_while_the_first_runs(tmp_path, monkeypatch):
    """RECOV-22: while one recover holds the log directory (stopped at its first durable
    step), another process's recover exits 2 naming the lock and its holder."""
    dir = build_damaged(tmp_path)
    seen = []

    def second_run(step: str) -> None:
        if not seen:
            seen.append(klogspec("recover", *TOOL_ARGS, str(dir)))

    monkeypatch.setattr(journal_module, "STEP", second_run)
    result = CliRunner().invoke(recover_command, [str(dir), "--from-offset", "0", *TOOL_ARGS])
    assert result.exit_code == 1, result.output
    second = seen[0]
    assert second.returncode == 2, second.stdout + second.stderr
    assert str(tmp_path / ".lock") in second.stdout
    assert f"pid {os.getpid()}" in second.stdout  # the first run, found in /proc/locks


@pytest.mark.req("RECOV-21", "RECOV-16")
def test_a_dry_run_reports_the_interrupted_run(tmp_path, monkeypatch):
    """Killed once the truncation is done and the first deletion journaled: a dry run names
    the interrupted run and the deletions it would finish, and changes nothing; the real run
    does exactly that, then has nothing more to do."""
    original_root = tmp_path / "original"
    build_damaged(original_root)
    names = []
    counting = tmp_path / "counting"
    materialize(files(original_root), counting)
    monkeypatch.setattr(journal_module, "STEP", names.append)
    recover_partition(partition_dir(counting), TOOL, from_offset=0)
    monkeypatch.undo()
    first_delete = next(i for i, n in enumerate(names) if n.startswith("entry delete"))
    root = tmp_path / "killed"
    materialize(files(original_root), root)
    killed = klogspec(
        "recover", "--from-offset", "0", *TOOL_ARGS, str(partition_dir(root)),
        env={"KLOGSPEC_FAULT_KILL_AT": str(first_delete + 1)},
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL
    before = files(root)
    runner = CliRunner()
    args = [str(partition_dir(root)), "--from-offset", "0", *TOOL_ARGS]
    dry = runner.invoke(recover_command, [*args, "--dry-run"])
    assert dry.exit_code == 1 and files(root) == before
    assert "would finish the recovery interrupted in" in dry.stdout
    pending = [line for line in dry.stdout.splitlines() if "(after_truncation)" in line]
    assert pending and all(line.strip().startswith("delete ") for line in pending)
    real = runner.invoke(recover_command, args)
    assert real.exit_code == 1 and "finished the recovery interrupted in" in real.stdout
    assert all(line in real.stdout for line in pending)
    assert runner.invoke(recover_command, args).exit_code == 0
