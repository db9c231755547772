"""Checkpoint files as a log writes and loads them: the atomic write and the epoch-cache load."""

from __future__ import annotations

import os

import pytest

from reference_impl.formats.checkpoints import EpochEntry
from reference_impl.log import storage
from reference_impl.log.checkpoint_files import write_atomically
from reference_impl.log.leader_epoch import LeaderEpochFileCache


@pytest.mark.req("CKPT-8")
def test_checkpoint_write_goes_through_a_fsynced_tmp_file_and_an_atomic_rename(
    tmp_path, monkeypatch
):
    """The old content stays whole until the rename: a crash mid-write leaves it readable."""
    target = tmp_path / "recovery-point-offset-checkpoint"
    target.write_bytes(b"0\n1\ntopic 0 5\n")
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst):
        # at the moment of the rename the target still holds the old bytes
        events.append(("replace", os.fspath(src), target.read_bytes()))
        real_replace(src, dst)

    monkeypatch.setattr(storage.os, "fsync", fsync)
    monkeypatch.setattr(storage.os, "replace", replace)
    write_atomically(target, b"0\n1\ntopic 0 9\n")

    tmp = str(target) + ".tmp"
    assert events[0] == ("fsync", tmp)  # the temp file is synced before it is renamed
    assert events[1] == ("replace", tmp, b"0\n1\ntopic 0 5\n")
    assert events[2] == ("fsync", str(tmp_path))  # then the directory, so the rename is durable
    assert target.read_bytes() == b"0\n1\ntopic 0 9\n"
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


@pytest.mark.req("CKPT-12")
@pytest.mark.parametrize(
    ("lines", "loaded"),
    [
        # in order: kept as written
        (["0 0", "1 5", "3 9"], [(0, 0), (1, 5), (3, 9)]),
        # same epoch again with a start offset not below the kept one: skipped
        (["0 0", "1 5", "1 7"], [(0, 0), (1, 5)]),
        # same epoch with a lower start offset: replaces the kept entry
        (["0 0", "1 5", "1 3"], [(0, 0), (1, 3)]),
        # an older epoch later in the file removes every kept entry with epoch or offset >= it
        (["0 0", "2 5", "3 9", "1 6"], [(0, 0), (1, 6)]),
        # a start offset going backwards removes the entries at or after it
        (["0 0", "1 5", "2 4"], [(0, 0), (2, 4)]),
    ],
)
def test_leader_epoch_checkpoint_loads_in_file_order_through_assign(tmp_path, lines, loaded):
    """A file breaking CKPT-11's order is repaired by the assign rule, not rejected."""
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_text("0\n" + f"{len(lines)}\n" + "".join(f"{line}\n" for line in lines))
    before = path.read_bytes()
    cache = LeaderEpochFileCache(path)
    assert [(e.epoch, e.start_offset) for e in cache.epoch_entries()] == loaded
    assert all(isinstance(e, EpochEntry) for e in cache.epoch_entries())
    assert path.read_bytes() == before  # loading never rewrites the file
