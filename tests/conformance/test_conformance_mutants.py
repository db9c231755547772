"""The suite's power: every mutant (a realistic bug in the reference) is killed, with the
requirement IDs it breaks, through both transports."""

from __future__ import annotations

import pytest

from conformance.mutants import mutants
from conformance.suite import run_suite, select

MUTANTS = mutants()


def test_there_are_at_least_thirty_mutants():
    assert len(MUTANTS) >= 30


@pytest.mark.parametrize("transport", ["inproc", "subprocess"])
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_killed(name, transport):
    mutant = MUTANTS[name]
    scenarios, unknown = select(mutant.scenarios)
    assert scenarios and not unknown
    suite = run_suite(mutant.impl(transport), scenarios)
    failed = {
        req for o in suite.outcomes if o.status == "failed" for req in o.result.failed_requirements
    }
    assert mutant.expected <= failed, (
        f"{name} survived: failed {sorted(failed)}, expected {sorted(mutant.expected)}"
    )
    assert not [
        o for o in suite.outcomes if o.result.category in ("crashed", "protocol", "timeout")
    ]
