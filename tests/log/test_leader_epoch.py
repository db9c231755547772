"""LeaderEpochFileCacheTest, restated: the rules the log relies on (spec facts §5.10)."""

from __future__ import annotations

import pytest

from reference_impl.formats.checkpoints import EpochEntry, read_leader_epoch_checkpoint
from reference_impl.log.leader_epoch import LeaderEpochFileCache


@pytest.fixture
def cache(tmp_path):
    return LeaderEpochFileCache(tmp_path / "leader-epoch-checkpoint")


def entries(*pairs):
    return [EpochEntry(e, o) for e, o in pairs]


def seeded(cache):
    for epoch, offset in ((2, 6), (3, 8), (4, 11)):
        cache.assign(epoch, offset)
    return cache


@pytest.mark.req("CKPT-B-1")
def test_checkpoint_is_created_empty(tmp_path):
    LeaderEpochFileCache(tmp_path / "leader-epoch-checkpoint")
    assert (tmp_path / "leader-epoch-checkpoint").read_bytes() == b""


@pytest.mark.req("LEPOCH-3")
def test_should_not_overwrite_log_end_offset_for_a_leader_epoch_once_it_has_been_assigned(cache):
    cache.assign(2, 9)
    cache.assign(2, 10)
    assert cache.epoch_entries() == entries((2, 9))


@pytest.mark.req("LEPOCH-1", "LEPOCH-4")
def test_should_enforce_monotonically_increasing_start_offsets(cache):
    cache.assign(2, 9)
    cache.assign(3, 9)
    assert cache.epoch_entries() == entries((3, 9))


@pytest.mark.req("LEPOCH-4")
def test_should_truncate_if_matching_epoch_but_earlier_starting_offset(cache):
    for epoch, offset in ((5, 11), (6, 12), (7, 13)):
        cache.assign(epoch, offset)
    cache.assign(7, 12)
    assert cache.epoch_entries() == entries((5, 11), (7, 12))


def test_should_persist_epochs_between_instances(tmp_path):
    LeaderEpochFileCache(tmp_path / "ckpt").assign(2, 6)
    assert LeaderEpochFileCache(tmp_path / "ckpt").epoch_entries() == entries((2, 6))


@pytest.mark.req("LEPOCH-1", "LEPOCH-4")
def test_should_enforce_monotonically_increasing_epochs(cache):
    cache.assign(1, 5)
    cache.assign(2, 6)
    cache.assign(1, 7)
    assert cache.latest_epoch() == 1
    assert cache.epoch_entries() == entries((1, 7))


@pytest.mark.req("LEPOCH-4")
def test_should_enforce_offsets_increase_monotonically(cache):
    cache.assign(2, 6)
    cache.assign(3, 5)
    assert cache.epoch_entries() == entries((3, 5))


@pytest.mark.req("LEPOCH-2")
def test_negative_values_are_refused(cache):
    for epoch, offset in ((-1, 0), (0, -1)):
        with pytest.raises(ValueError):
            cache.assign(epoch, offset)


@pytest.mark.req("LEPOCH-6")
def test_should_drop_entries_on_epoch_boundary_when_removing_latest_entries(cache):
    seeded(cache).truncate_from_end(8)
    assert cache.epoch_entries() == entries((2, 6))


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (8, ((3, 8), (4, 11))),  # shouldPreserveResetOffsetOnClearEarliestIfOneExists
        (9, ((3, 9), (4, 11))),  # shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs
        (1, ((2, 6), (3, 8), (4, 11))),  # shouldNotClearAnythingIfOffsetToEarly
        (6, ((2, 6), (3, 8), (4, 11))),  # shouldNotClearAnythingIfOffsetToFirstOffset
        (11, ((4, 11),)),  # shouldRetainLatestEpochOnClearAllEarliest
        (15, ((4, 15),)),  # shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset
        (-1, ((2, 6), (3, 8), (4, 11))),  # shouldNotResetEpochHistoryHeadIfUndefinedPassed
    ],
)
@pytest.mark.req("LEPOCH-7")
def test_truncate_from_start(cache, start, expected):
    seeded(cache).truncate_from_start(start)
    assert cache.epoch_entries() == entries(*expected)


@pytest.mark.req("LEPOCH-6")
def test_should_not_reset_epoch_history_tail_if_undefined_passed(cache):
    seeded(cache).truncate_from_end(-1)
    assert len(cache.epoch_entries()) == 3


def test_should_clear_all_entries(cache):
    seeded(cache).clear_and_flush()
    assert cache.epoch_entries() == []
    assert cache.checkpoint.read_text() == "0\n0\n"


def test_should_fetch_epoch_for_given_offset(cache):
    for epoch, offset in ((0, 10), (1, 20), (5, 30)):
        cache.assign(epoch, offset)
    assert [cache.epoch_for_offset(o) for o in (25, 20, 30, 50, 5)] == [1, 1, 5, 5, None]


@pytest.mark.req("CKPT-B-3", "CKPT-B-4")
def test_should_write_checkpoint_on_truncation(cache):
    seeded(cache)
    cache.truncate_from_end(11)
    cache.truncate_from_start(8)
    assert read_leader_epoch_checkpoint(cache.checkpoint.read_bytes()) == entries((3, 8))
