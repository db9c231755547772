"""What an implementer is given (issue 20 §5): a requirement table that counts only what
was judged, the milestones (generated from the scenarios, shown in the conformance guide,
selectable with --only milestone:N), and `klogspec conformance requirements`, which prints
unless asked to write."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance import milestones, traceability
from conformance.cli import conformance
from conformance.scenarios import by_id, load_all
from conformance.suite import requirement_rows, run_suite, select

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from test_conformance_harness import impl_of  # noqa: E402

REPO = HERE.parents[1]
STEP_REQS = "roll.explicit.existing-segment"  # ROLL-14; step 1 cites APPEND-23, step 4 ROLL-13


@pytest.fixture(autouse=True)
def on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def rows_of(factory: str) -> dict[str, dict]:
    scenarios, _ = select([STEP_REQS])
    suite = run_suite(impl_of(factory), scenarios)
    return {row["id"]: row for row in requirement_rows(suite)}


def test_a_scenario_stopped_at_step_0_judges_none_of_its_steps():
    """APPEND-23 and ROLL-13 showed 1 pass with 0 tests passing."""
    rows = rows_of("crashes_at_open")
    assert (rows["ROLL-14"]["failed"], rows["ROLL-14"]["status"]) == (1, "fail")
    for req in ("APPEND-23", "ROLL-13"):
        assert (rows[req]["passed"], rows[req]["not_judged"]) == (0, 1), rows[req]
        assert rows[req]["status"] == "not judged"


def test_a_scenario_stopped_later_judges_the_steps_it_reached():
    rows = rows_of("raises")  # fails at step 1, the first append (APPEND-23's step)
    assert rows["APPEND-23"]["failed"] == 1
    assert (rows["ROLL-13"]["passed"], rows["ROLL-13"]["not_judged"]) == (0, 1)
    rows = rows_of("gzip_only")  # the reference: every step judged, every rule passed
    assert {r["status"] for r in rows.values()} == {"pass"}
    assert sum(r["not_judged"] for r in rows.values()) == 0


def test_the_table_shows_what_was_not_judged():
    result = CliRunner().invoke(
        conformance,
        ["--impl", "harness_testees:crashes_at_open", "--only", STEP_REQS, "--table", "all"],
    )
    assert result.exit_code == 1
    lines = [line.split() for line in result.output.splitlines()]
    row = next(cells for cells in lines if cells[:1] == ["ROLL-13"])
    assert row[-3:] == ["1", "not", "judged"], row


# --- milestones ----------------------------------------------------------------------------


def test_every_scenario_is_in_one_milestone_in_order():
    numbers = {s.id: milestones.milestone_of(s) for s in load_all()}
    assert set(numbers.values()) == set(range(1, milestones.OPTIONAL + 1))
    scenario = by_id()
    assert numbers["read.size.plain.1-below"] == 1  # one segment, append and read
    assert numbers["append.split.size-below-14"] == 3  # a refusal
    assert numbers[STEP_REQS] == 4  # an explicit roll
    assert numbers["recovery.files.clean-keeps-bytes"] == 8  # damage after a clean close
    crash = next(s for s in load_all() if any("crash" in st for st in s.steps) and not s.needs - {"crash_recovery"})  # fmt: skip
    assert numbers[crash.id] == 9
    for s in load_all():
        assert (numbers[s.id] == milestones.OPTIONAL) == bool(s.needs - {"crash_recovery"})
    assert all(numbers[s.id] <= 7 for s in milestones.up_to(7)) and scenario


@pytest.mark.parametrize("number", [1, 4, milestones.OPTIONAL])
def test_only_milestone_selects_milestones_1_to_n(number):
    chosen, unknown = select([f"milestone:{number}"])
    assert unknown == []
    assert {s.id for s in chosen} == {
        s.id for s in load_all() if milestones.milestone_of(s) <= number
    }


@pytest.mark.parametrize(
    "pattern", ["milestone:0", f"milestone:{milestones.OPTIONAL + 1}", "milestone:x"]
)
def test_a_milestone_that_is_not_one_is_exit_2(pattern):
    result = CliRunner().invoke(conformance, ["--only", pattern])
    assert result.exit_code == 2
    assert f"milestones are numbered 1 to {milestones.OPTIONAL}" in result.output


def test_the_guide_shows_the_milestone_table_and_the_smoke_subset():
    guide = (REPO / "docs" / "conformance" / "index.md").read_text(encoding="utf-8")
    assert milestones.milestone_table().strip() in guide
    assert "--only milestone:1" in guide
    testee = (REPO / "docs" / "conformance" / "testee.md").read_text(encoding="utf-8")
    assert (
        "conformance/skeletons/testee.mjs" in testee
        and "conformance/skeletons/Testee.java" in testee
    )


# --- klogspec conformance requirements -----------------------------------------------------


def test_requirements_prints_and_writes_only_when_asked(tmp_path, monkeypatch):
    target = tmp_path / "docs" / "requirements.md"
    monkeypatch.setattr(traceability, "requirements_doc_path", lambda: target)
    printed = CliRunner().invoke(conformance, ["requirements"])
    assert printed.exit_code == 0
    assert printed.output == traceability.requirement_table()
    assert not target.exists()  # printing never writes
    written = CliRunner().invoke(conformance, ["requirements", "--write"])
    assert written.exit_code == 0 and target.read_text() == printed.output
    other = tmp_path / "other.md"
    assert CliRunner().invoke(conformance, ["requirements", "--out", str(other)]).exit_code == 2
    assert not other.exists()
    refused = CliRunner().invoke(conformance, ["requirements", "--write", "--out", str(tmp_path)])
    assert refused.exit_code == 2
