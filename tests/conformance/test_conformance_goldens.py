"""Goldens: deterministic, checked in fresh, small, described by their schema."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from conformance.cli import golden
from conformance.goldens import MANIFEST, compare, golden_dir, regenerate
from conformance.protocol import schema_errors
from conformance.scenarios import load_all


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("goldens") / "goldens"
    regenerate(out)
    return out


def test_checked_in_goldens_are_fresh(fresh):
    """`klogspec golden check`: byte-identical to a regeneration made now."""
    assert compare(fresh, golden_dir()) == []


def test_a_changed_golden_is_found(fresh, tmp_path):
    copy = tmp_path / "goldens"
    shutil.copytree(fresh, copy)
    victim = next(p for p in sorted((copy / "final").rglob("*.log")) if p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[:-1])
    (copy / "final" / "stray.txt").write_text("x")
    problems = compare(fresh, copy)
    assert any("differs" in p for p in problems)
    assert any("no longer generated" in p for p in problems)


def test_manifest_follows_its_schema_and_covers_every_scenario():
    manifest = json.loads((golden_dir() / MANIFEST).read_text())
    assert schema_errors(manifest, "manifest.schema.json") == []
    assert [e["id"] for e in manifest["scenarios"]] == [s.id for s in load_all()]
    for entry in manifest["scenarios"]:
        for name, file in entry["files"].items():
            assert (golden_dir() / "final" / entry["id"] / name).stat().st_size == file["size"]


def test_corrupt_fixtures_live_apart_named_by_failure_mode():
    manifest = json.loads((golden_dir() / MANIFEST).read_text())
    damaged = {s.id: s for s in load_all() if s.has_damage}
    assert {c["scenario"] for c in manifest["corrupt"]} == set(damaged)
    for fixture in manifest["corrupt"]:
        assert fixture["failure_mode"] == (
            damaged[fixture["scenario"]].failure_mode or fixture["scenario"]
        )
        assert (golden_dir() / "corrupt" / fixture["failure_mode"]).is_dir()


def test_goldens_stay_small():
    total = sum(p.stat().st_size for p in golden_dir().rglob("*") if p.is_file())
    assert total < 5 * 1024 * 1024, total


def test_golden_check_command_reports_staleness(monkeypatch):
    monkeypatch.setattr(
        "conformance.goldens.check", lambda: ["final/x: differs from a fresh regeneration"]
    )
    result = CliRunner().invoke(golden, ["check"])
    assert result.exit_code == 1
    assert "stale" in result.output
