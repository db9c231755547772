"""``klogspec recover`` and the log directory's ``.lock`` (RECOV-22): refused while another
process holds it (a BSD ``flock``, as ``flock -x`` takes it, or a POSIX ``fcntl`` lock, as a
Kafka broker's FileLock takes it on Linux), the holder named; ``--force`` goes on; a dry run
only warns; the lock is let go at the end."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec.recover.cli import recover as recover_command
from klogspec.recover.lock import LockHeld, LogDirLock

from .support import files_of
from .test_recover_cli import TOOL, build, flip

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
(fcntl.flock if sys.argv[2] == "flock" else fcntl.lockf)(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()  # held until the test closes our stdin
"""


class Holder:
    """Another process holding ``path`` locked, the way ``kind`` says, until ``release``."""

    def __init__(self, path: Path, kind: str) -> None:
        if kind == "flock(1)":
            command = ["flock", "-x", str(path), sys.executable, "-c",
                       "import sys; print('locked', flush=True); sys.stdin.read()"]  # fmt: skip
        else:
            command = [sys.executable, "-c", HOLD, str(path), kind]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout.readline().strip() == "locked"

    def release(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


KINDS = [
    "flock",
    "lockf",  # a POSIX record lock: what Java's FileChannel.tryLock takes on Linux
    pytest.param(
        "flock(1)",
        marks=pytest.mark.skipif(shutil.which("flock") is None, reason="no flock(1) here"),
    ),
]


def run(*args, expect: int):
    result = CliRunner().invoke(recover_command, [*map(str, args), *TOOL])
    assert result.exit_code == expect, result.output
    return result


def damaged(root: Path) -> Path:
    dir = build(root, close=False)
    flip(sorted(dir.glob("*.log"))[-2], 200)
    return dir


@pytest.mark.req("RECOV-22")
@pytest.mark.parametrize("kind", KINDS)
def test_a_held_lock_is_refused_and_its_holder_named(tmp_path, kind):
    dir = damaged(tmp_path)
    holder = Holder(tmp_path / ".lock", kind)
    try:
        before = files_of(tmp_path)
        result = run(dir, "--from-offset", 0, expect=2)
        assert files_of(tmp_path) == before  # nothing changed
        assert f"{tmp_path / '.lock'} is locked by pid " in result.output
        assert "stop the broker" in result.output and "--force" in result.output
        # the holder is named by its process id (flock(1) holds it itself, then runs python)
        assert str(holder.process.pid) in result.output
        dry = run(dir, "--from-offset", 0, "--dry-run", expect=1)
        assert "warning:" in dry.output and f"pid {holder.process.pid}" in dry.output
        forced = run(dir, "--from-offset", 0, "--force", expect=1)
        assert "recovering anyway (--force)" in forced.output
        assert "recovered" in forced.output
    finally:
        holder.release()


@pytest.mark.req("RECOV-22")
def test_the_lock_is_let_go_and_reentrant_runs_are_refused(tmp_path):
    dir = damaged(tmp_path)
    run(dir, "--from-offset", 0, expect=1)
    fd = os.open(tmp_path / ".lock", os.O_RDWR)
    try:  # nobody holds it after the run
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # a second recover while this process holds it (another open file description)
        with pytest.raises(LockHeld, match="this process"):
            LogDirLock(tmp_path).__enter__()
    finally:
        os.close(fd)
    with LogDirLock(tmp_path), pytest.raises(LockHeld):
        LogDirLock(tmp_path).__enter__()
