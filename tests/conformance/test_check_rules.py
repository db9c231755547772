"""The rules behind the harness's checks that accept more than one answer (check_rules.py):
each accepts what its rule allows and nothing else."""

from __future__ import annotations

import pytest

from conformance.check_rules import (
    CLOSE_INDEXES,
    DELETED_FILES,
    LAZY_INDEXES,
    PREALLOCATION,
    REPLACED_INDEXES,
    UNTRIMMED_PART_SLOT,
    epochs_a_refusal_may_add,
    files_check_choice,
    index_size_choice,
    open_choice,
)
from conformance.index_invariants import _size_problems

BEFORE = [[1, 0], [2, 5]]


@pytest.mark.req("APPEND-27")
@pytest.mark.parametrize(
    ("before", "after"),
    [
        (BEFORE, [[1, 0], [2, 5], [3, 8]]),  # Kafka's leader: (epoch, LEO) before step 6
        (BEFORE, [[1, 0], [2, 5], [3, 8], [4, 9]]),  # a follower's batches after the LEO
        ([[1, 0], [5, 8]], [[1, 0], [3, 8]]),  # LEPOCH-4 removes the later epoch at the LEO
        ([], [[0, 8]]),  # an empty cache (CKPT-B-1's 0-byte file)
    ],
)
def test_append_27_accepts_entries_at_or_above_the_leo(before, after):
    assert epochs_a_refusal_may_add(before, after, log_end_offset=8)


@pytest.mark.req("APPEND-27")
@pytest.mark.parametrize(
    "after",
    [
        BEFORE,  # nothing added: then nothing changed, and this is no APPEND-27 change
        [[1, 0], [2, 5], [3, 7]],  # an entry below the LEO claims offsets the log holds
        [[1, 0]],  # an entry lost
        [[1, 0], [3, 8]],  # (2, 5) removed though neither its epoch nor its offset is reached
        [[1, 0], [2, 8]],  # the same epoch at a later start changes nothing (LEPOCH-3)
        [[0, 0], [1, 0], [2, 5], [3, 8]],  # a change before the kept entries
    ],
)
def test_append_27_refuses_any_other_change(after):
    assert not epochs_a_refusal_may_add(BEFORE, after, log_end_offset=8)


# The MAYs of issue 21 (spec README §1.6): where Kafka's releases disagree, or an artefact is an
# accident of Kafka's code, a check accepts both answers unless the implementation claims
# kafka_exact; every neighbouring case keeps its SHOULD or MUST.


@pytest.mark.req("ROLL-22")
def test_roll_22_a_replaced_segments_deleted_index_may_exist():
    choice = files_check_choice("absent", "index", ".deleted", recovered=False, trimmed=True,
                                log_renamed=True)  # fmt: skip
    assert choice == [REPLACED_INDEXES] and open_choice(choice, set())
    assert not open_choice(choice, {"kafka_exact"})
    # a segment whose .log was not renamed: whether its files were is RET-14's, a SHOULD
    other = files_check_choice("absent", "index", ".deleted", recovered=False, trimmed=True)
    assert other == [DELETED_FILES] and not open_choice(other, set())


@pytest.mark.req("ROLL-23")
def test_roll_23_the_active_segments_indexes_may_appear_at_close():
    choice = files_check_choice("absent", "timeindex", "", recovered=False, trimmed=True,
                                closed_active=True)  # fmt: skip
    assert choice == [CLOSE_INDEXES] and open_choice(choice, set())
    assert not open_choice(choice, {"kafka_exact"})
    # before the close a file nothing used is judged by the step's own rules (ROLL-20)
    early = files_check_choice("absent", "timeindex", "", recovered=False, trimmed=False)
    assert early == [] and not open_choice(early, set())
    made = files_check_choice("exist", "timeindex", "", recovered=False, trimmed=False)
    assert made == [LAZY_INDEXES] and not open_choice(made, set())


@pytest.mark.req("INDEX-23", "INDEX-4")
def test_index_23_a_part_slot_may_stay_at_close_and_nothing_else():
    assert index_size_choice("index", 9, 8) == [UNTRIMMED_PART_SLOT]
    assert open_choice(index_size_choice("timeindex", 13, 12), set())
    assert index_size_choice("index", 16, 8) == [PREALLOCATION]  # a whole zero slot: an entry
    entries = [(1, 100)]
    part = bytes.fromhex("000000010000006400")
    assert not _size_problems("0.index", part, entries, 8, 4096, closed=True)
    assert _size_problems("0.index", part, entries, 8, 4096, closed=False)  # INDEX-17 then
    assert _size_problems("0.index", part + bytes(8), entries, 8, 4096, closed=True)
