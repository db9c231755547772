"""The epilogue (issue 13 §2, conformance/epilogue.py): every scenario whose log is open or
closed at its end is closed, its files compared, reloaded, read back and closed again."""

from __future__ import annotations

import json

import pytest

from conformance import epilogue as epilogue_module
from conformance.goldens import MANIFEST, golden_dir, load_manifest_entries
from conformance.mutants import mutants
from conformance.protocol import schema_errors
from conformance.runner import Runner
from conformance.scenarios import by_id, load_all
from conformance.suite import run_suite, select
from conformance.transport import resolve_impl

# (mutant, a scenario that never closes its log itself, the rule the epilogue finds broken)
CLOSE_TIME_BUGS = [
    ("close-index-keyed-by-base-offset", "index.placement.follower-set", "INDEX-14"),
    ("close-time-entry-only-into-empty-index", "index.time.lags-until-close", "FLUSH-8"),
    ("close-time-entry-at-base-offset", "append.write.largest-timestamp", "INDEX-16"),
    ("load-leo-from-last-base-offset", "index.placement.follower-set", "LOAD-24"),
    ("close-without-leo-snapshot", "append.follower.overlap-passes", "SNAP-B-1"),
]


def _scenario_data(**extra) -> dict:
    return {
        "id": "x.epilogue.case",
        "title": "t",
        "requirements": ["INDEX-4"],
        "steps": [],
        **extra,
    }


def test_opting_out_needs_a_written_reason():
    def errors(data):
        return schema_errors(data, "scenario.schema.json", "/$defs/scenario")

    assert (
        errors(_scenario_data(epilogue={"skip": "the directory is removed on purpose here"})) == []
    )
    assert errors(_scenario_data(epilogue={})) != []
    assert errors(_scenario_data(epilogue={"skip": "no reason"})) != []
    assert errors(_scenario_data(epilogue={"skip": "a reason long enough", "x": 1})) != []


def test_every_scenario_that_leaves_a_log_has_its_epilogue_in_the_goldens():
    manifest = json.loads((golden_dir() / MANIFEST).read_text())
    assert schema_errors(manifest, "manifest.schema.json") == []
    entries = {e["id"]: e for e in manifest["scenarios"]}
    skipped = {s.id for s in load_all() if s.epilogue_skip is not None}
    for entry in entries.values():
        epilogue = entry.get("epilogue")
        if epilogue is None:
            # no log left: it never opened, or its last open was refused on purpose
            opens = [r["ok"] for r in entry["responses"] if r["op"] == "open"]
            assert not opens or not opens[-1], entry["id"]
            continue
        if entry["id"] in skipped:
            assert set(epilogue) == {"skipped"}
            continue
        assert {"state", "read"} <= set(epilogue), entry["id"]
        # files after the epilogue's own close: exactly when the steps left the log open
        assert ("files" in epilogue) == (not entry["closed"]), entry["id"]
    with_epilogue = [e for e in entries.values() if "epilogue" in e]
    assert len(with_epilogue) >= 0.95 * len(entries)


def test_the_epilogue_requests_are_not_recorded_as_responses():
    scenario = by_id()["index.placement.follower-set"]
    runner = Runner(resolve_impl("reference").driver(), None)
    try:
        result = runner.run(scenario)
    finally:
        runner.close()
    assert result.status == "passed"
    assert [r["op"] for r in result.responses] == ["open", "append", "append"]
    record = result.epilogue
    assert record.finished and record.files is not None
    assert record.state["log_end_offset"] == 8
    assert record.read.batches == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_a_scenario_with_no_log_left_has_no_epilogue():
    runner = Runner(resolve_impl("reference").driver(), None)
    try:
        for scenario_id in ("model.config.invalid.segment-ms-0", "recovery.files.no-offset-prefix"):
            assert runner.run(by_id()[scenario_id]).epilogue is None
    finally:
        runner.close()


def test_an_opted_out_scenario_is_not_closed_by_the_harness(monkeypatch):
    scenario = by_id()["index.placement.follower-set"]
    monkeypatch.setattr(scenario, "epilogue_skip", "a reason given in the scenario's YAML")
    runner = Runner(resolve_impl("reference").driver(), None)
    try:
        result = runner.run(scenario)
    finally:
        runner.close()
    assert result.epilogue.skipped == "a reason given in the scenario's YAML"
    assert result.epilogue.files is None and result.epilogue.state is None


@pytest.mark.parametrize("transport", ["inproc", "subprocess"])
@pytest.mark.parametrize(("name", "scenario_id", "rule"), CLOSE_TIME_BUGS)
def test_only_the_epilogue_sees_a_close_time_bug(name, scenario_id, rule, transport, monkeypatch):
    """The scenario passes the mutant while the epilogue is off, and fails it on ``rule``
    once the epilogue closes, compares and reloads the log."""
    mutant = mutants()[name]
    scenarios, _ = select([scenario_id])
    with monkeypatch.context() as patch:
        patch.setattr(epilogue_module.Epilogue, "run", lambda epilogue: None)
        assert run_suite(mutant.impl(transport), scenarios).count("passed") == 1
    suite = run_suite(mutant.impl(transport), scenarios)
    (outcome,) = suite.outcomes
    assert outcome.status == "failed"
    assert rule in outcome.result.failed_requirements
    assert all(f.message.startswith("epilogue") for f in outcome.result.failures)


def test_goldens_hold_the_epilogue_of_the_reference():
    entries = load_manifest_entries()
    follower = entries["index.placement.follower-set"]["epilogue"]
    # INDEX-7 (Kafka 4.0 on): the follower's set indexed batch by batch
    assert follower["files"]["topic-0/00000000000000000000.index"]["decoded"]["entries"] == [
        [3, 83],
        [5, 166],
        [7, 249],
    ]
    assert follower["read"]["batches"] == 4 and follower["read"]["last_offset"] == 7


class _CrashesOnItsSecondClose:
    """The reference, except that its second close raises (a crash of the testee)."""

    def __init__(self) -> None:
        from conformance.reference import ReferenceAdapter

        self._inner, self._closes = ReferenceAdapter(), 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def close(self, *, now_ms):
        self._closes += 1
        if self._closes == 2:
            raise RuntimeError("the second close fell over")
        return self._inner.close(now_ms=now_ms)


def crashes_on_its_second_close():
    return _CrashesOnItsSecondClose()


def test_a_testee_crash_in_the_epilogue_fails_the_scenario_saying_where():
    from conformance.transport import ImplSpec

    spec = ImplSpec("crashes", "inproc", factory=f"{__name__}:crashes_on_its_second_close")
    suite = run_suite(spec, select(["index.placement.follower-set"])[0])
    (outcome,) = suite.outcomes
    assert outcome.result.category == "crashed"
    assert outcome.result.failures[0].message.startswith(
        "epilogue: close raised RuntimeError: the second close fell over"
    )
