"""The scenario files check themselves: schema, unique stable IDs, known requirement IDs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from conformance.cli import conformance
from conformance.scenarios import check, load_all


def test_every_scenario_file_is_valid():
    assert check() == []


def test_ids_are_unique_and_stable_looking():
    ids = [s.id for s in load_all()]
    assert len(ids) == len(set(ids))
    assert all(i == i.lower() and " " not in i for i in ids)


def test_check_command():
    result = CliRunner().invoke(conformance, ["check"])
    assert result.exit_code == 0, result.output
    assert "all valid" in result.output


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "scenarios: [{id: a.b, title: t, requirements: [NOPE-1], steps: []}]",
            "unknown requirement ID NOPE-1",
        ),
        (
            "scenarios: [{id: a.b, title: t, requirements: [READ-1], steps: []}, {id: a.b, title: u, requirements: [READ-2], steps: []}]",
            "duplicate ID",
        ),
        (
            "scenarios: [{id: a.b, title: t, requirements: [READ-1], steps: [{explode: {}}]}]",
            "steps/0",
        ),
        ("scenarios: [{id: A, title: t, requirements: [READ-1], steps: []}]", "id"),
        (
            "scenarios: [{id: a.b, title: t, requirements: [READ-1], steps: [{damage: [{file: 0.log, delete: true}]}]}]",
            "damage while the log is open",
        ),
        (
            "families: [{family: a.b, generator: nope, requirements: [READ-1], rows: [{row: x}]}]",
            "no generator",
        ),
        (
            "scenarios: [{id: a.b, title: t, requirements: [READ-1], features: [teleport], steps: []}]",
            "unknown feature",
        ),
        ("scenarios: [{id: a.b: c}]", "not YAML"),
    ],
)
def test_check_finds_problems(tmp_path, text, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    problems = check([path])
    assert any(problem in p for p in problems), problems
