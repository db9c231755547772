"""The order in which a new implementation makes scenarios pass: the milestones.

Each scenario belongs to the first milestone whose operations cover every step it takes,
whose features cover every feature it needs, that allows more than one segment if the
reference's run of it (its golden) ever held more than one, and that allows refusals if a
step expects an error code. The milestones add what an implementer writes in that order:
a log of one segment that opens, appends, reads and closes (and loads what it closed);
refusals; rolls; truncation; retention; lookups by time; loading a directory the harness
damaged; crashes; then the optional features. ``files`` and ``snapshot`` steps inspect the directory and
``clock`` moves the harness's clock: every milestone has them, as every log writes files.

The table is generated from the scenarios (docs/conformance/index.md shows it), and
``klogspec conformance --only milestone:N`` runs milestones 1 to N: ``milestone:1`` is the
smoke subset of a new testee, the testee skeletons' target (docs/conformance/testee.md).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import NamedTuple

from .goldens import load_manifest_entries
from .scenarios import Scenario, load_all

INSPECTIONS = frozenset({"files", "snapshot", "clock"})  # steps that are not operations


class Milestone(NamedTuple):
    number: int
    adds: str  # what an implementer adds, in words
    steps: frozenset[str]  # the step keys it adds (operations or harness actions)
    features: frozenset[str]  # the features it adds
    rolls: bool  # whether its scenarios may hold more than one segment
    refusals: bool  # whether its scenarios may expect an error code
    inspects: bool  # whether its scenarios may inspect files (``files``, ``snapshot``)


_ADDED = (
    ("one segment: open, append, read, state, flush and close, no refusal",
     {"open", "append", "read", "state", "flush", "close"}, set(), False, False, False),
    ("the files beside the `.log`: offset and time indexes, checkpoints, as `files` steps "
     "inspect them", set(), set(), False, False, True),
    ("refusals: the error codes of append and read (model.md §5)", set(), set(), False, True, True),
    ("several segments: rolls by size, time, index space and offset range, and `roll`",
     {"roll"}, set(), True, True, True),
    ("`truncate_to`, `truncate_fully_and_start_at`",
     {"truncate_to", "truncate_fully_and_start_at"}, set(), True, True, True),
    ("retention: `delete_segments_before`, `delete_old_segments`",
     {"delete_segments_before", "delete_old_segments"}, set(), True, True, True),
    ("`fetch_offset_by_timestamp`", {"fetch_offset_by_timestamp"}, set(), True, True, True),
    ("loading files the harness damaged or dated after a clean close",
     {"damage", "set_mtime"}, set(), True, True, True),
    ("`crash` and recovery (feature `crash_recovery`)", {"crash"}, {"crash_recovery"}, True, True,
     True),
)  # fmt: skip
MILESTONES = tuple(Milestone(i, *row) for i, row in enumerate(_ADDED, 1))
OPTIONAL = len(MILESTONES) + 1  # the milestone of every scenario needing another feature
_ALL_STEPS = frozenset().union(*(m.steps for m in MILESTONES))
_SEGMENT_LOG = re.compile(r"/\d{20}\.log(\.deleted)?$")


class Needs(NamedTuple):
    steps: frozenset[str]  # operations and harness actions, inspections left out
    features: frozenset[str]
    rolls: bool  # the reference's run holds more than one segment at some point
    refusals: bool  # a step expects an error code
    inspects: bool  # a step inspects files


def needs_of(scenario: Scenario) -> Needs:
    """What a scenario needs of an implementation to pass: its steps and features from
    the scenario, whether it rolls from the reference's run of it (the goldens)."""
    keys: set[str] = {"open"} if scenario.open else set()
    refusals = False
    for step in scenario.steps:
        keys |= set(step) & (_ALL_STEPS | INSPECTIONS)
        refusals |= "error" in (step.get("expect") or {})
    golden = _goldens().get(scenario.id, {})
    return Needs(
        frozenset(keys - INSPECTIONS),
        frozenset(scenario.needs),
        _segments(golden) > 1,
        refusals,
        bool(keys & {"files", "snapshot"}),
    )


@cache
def _goldens() -> dict:
    return load_manifest_entries()


def _segments(golden: dict) -> int:
    """The most segments the reference's run held: in a state it answered, or its files."""
    counts = [sum(1 for name in golden.get("files", {}) if _SEGMENT_LOG.search(name))]
    for response in golden.get("responses", []):
        result = response.get("result") or {}
        if isinstance(result.get("segments"), list):
            counts.append(len(result["segments"]))
    return max(counts)


def milestone_of(scenario: Scenario) -> int:
    """The first milestone that covers the scenario (OPTIONAL past the last)."""
    needs = needs_of(scenario)
    have_steps: set[str] = set()
    have_features: set[str] = set()
    for milestone in MILESTONES:
        have_steps |= milestone.steps
        have_features |= milestone.features
        if (
            needs.steps <= have_steps
            and needs.features <= have_features
            and (milestone.rolls or not needs.rolls)
            and (milestone.refusals or not needs.refusals)
            and (milestone.inspects or not needs.inspects)
        ):
            return milestone.number
    return OPTIONAL


def up_to(number: int) -> list[Scenario]:
    """The scenarios of milestones 1 to ``number`` (``--only milestone:N``)."""
    return [s for s in load_all() if milestone_of(s) <= number]


def milestone_table() -> str:
    """The milestone table of docs/conformance/index.md, as markdown."""
    scenarios = list(load_all())
    counts = Counter(milestone_of(s) for s in scenarios)
    lines = [
        "| Milestone | Adds | Scenarios | With the earlier ones | Run them |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    total = 0
    for milestone in MILESTONES:
        total += counts[milestone.number]
        lines.append(
            f"| {milestone.number} | {milestone.adds} | {counts[milestone.number]} | {total} "
            f"| `--only milestone:{milestone.number}` |"
        )
    optional = Counter(
        ", ".join(sorted(needs_of(s).features - {"crash_recovery"}))
        for s in scenarios
        if milestone_of(s) == OPTIONAL
    )
    total += counts[OPTIONAL]
    shown = "; ".join(f"`{features}` {n}" for features, n in sorted(optional.items()))
    lines.append(
        f"| {OPTIONAL} | the optional features you claim: {shown} | {counts[OPTIONAL]} "
        f"| {total} | `--only milestone:{OPTIONAL}` (all) |"
    )
    return "\n".join(lines) + "\n"


def parse(pattern: str) -> int | None:
    """N for ``milestone:N`` (1 to OPTIONAL), None for any other pattern; ValueError for
    a ``milestone:`` that names no milestone."""
    if not pattern.startswith("milestone:"):
        return None
    number = pattern.partition(":")[2]
    if not number.isdigit() or not 1 <= int(number) <= OPTIONAL:
        raise ValueError(f"{pattern}: milestones are numbered 1 to {OPTIONAL}")
    return int(number)
