"""The rules behind the harness's checks that accept more than one answer (check_rules.py):
each accepts what its rule allows and nothing else."""

from __future__ import annotations

import pytest

from conformance.check_rules import epochs_a_refusal_may_add

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
