"""The recovery tests replay thousands of crash states: fsync only costs time there (a
simulated crash never loses a page), so it is a no-op, except inside the write recorder,
which notes each call to keep its durable image (fault_fs.py)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def no_fsync():
    real = os.fsync
    os.fsync = lambda fd: None
    yield
    os.fsync = real


@pytest.fixture
def clock():
    """Kafka's MockTime."""
    from reference_impl.log.clock import ManualClock

    from .support import MOCK_TIME_START

    return ManualClock(MOCK_TIME_START)


@pytest.fixture
def scratch(tmp_path):
    """Where cases are laid out: memory (/dev/shm) when there is one, as thousands of small
    directories are written and removed; else the test's tmp_path."""
    import shutil
    import tempfile
    from pathlib import Path

    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="klogspec-recovery-", dir=shm))
    yield path
    shutil.rmtree(path, ignore_errors=True)
