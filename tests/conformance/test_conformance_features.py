"""Optional features and the protocol's optional fields: a testee written before producer
state (old_testee.py) passes every scenario it passed then and skips the new ones; files
of an unclaimed feature never count; the error codes match the spec's table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance import disk
from conformance.protocol import (
    ERROR_CODES,
    FEATURES,
    expand_features,
    request_errors,
    response_errors,
)
from conformance.reference import FEATURES as REFERENCE_FEATURES
from conformance.scenarios import load_all
from conformance.suite import run_suite, select
from conformance.transport import ImplSpec, python_env

HERE = Path(__file__).resolve().parent
NEW_FEATURES = {"idempotence", "transaction_index", "producer_snapshots", "compaction"}
MODEL = HERE.parent.parent / "spec" / "behaviour" / "model.md"


@pytest.fixture
def on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _old(factory: str, transport: str = "inproc") -> ImplSpec:
    if transport == "inproc":
        return ImplSpec(f"old testee {factory}", "inproc", factory=f"old_testee:{factory}")
    env = python_env()
    env["PYTHONPATH"] = f"{HERE}:{env['PYTHONPATH']}"
    command = ["python", "-P", "-m", "conformance.testee", "--factory", f"old_testee:{factory}"]
    return ImplSpec("old testee (subprocess)", "subprocess", command=command, env=env)


def _judged(suite) -> dict[str, list[str]]:
    statuses: dict[str, list[str]] = {}
    for outcome in suite.outcomes:
        statuses.setdefault(outcome.status, []).append(outcome.id)
    return statuses


@pytest.mark.parametrize("factory", ["factory", "factory_with_snapshots"])
def test_an_old_testee_passes_every_scenario_without_the_new_features(on_path, factory):
    """With or without .snapshot files on disk, a testee that claims none of the new
    features passes every scenario that needs none of them, and skips the others."""
    suite = run_suite(_old(factory))
    statuses = _judged(suite)
    failed = [
        (o.id, [f.message for f in o.result.failures])
        for o in suite.outcomes
        if o.status != "passed" and o.status != "skipped"
    ]
    assert not failed
    needing = {s.id for s in load_all() if s.needs & NEW_FEATURES}
    assert set(statuses.get("skipped", ())) == needing
    assert needing and len(statuses["passed"]) == len(load_all()) - len(needing)


def test_an_old_testee_over_the_wire(on_path):
    """The same through the subprocess transport: the requests carry no new field."""
    scenarios, unknown = select(["model.*", "roll.lazy-indexes*", "producer.*", "transactions.*"])
    assert not unknown
    suite = run_suite(_old("factory", "subprocess"), scenarios)
    statuses = _judged(suite)
    assert set(statuses) <= {"passed", "skipped"}, [
        (o.id, [f.message for f in o.result.failures]) for o in suite.outcomes if o.result.failures
    ]
    assert statuses["passed"] and statuses["skipped"]


def test_a_testee_without_the_epoch_file_passes_every_scenario_not_about_it(on_path):
    """leader_epoch_checkpoint is optional: a testee that never writes the file and does not
    claim the feature passes every scenario that does not need it (no `exactly` list or
    size check asks for the file), and skips those about the cache's contents."""
    suite = run_suite(ImplSpec("no epoch file", "inproc", factory="no_epoch_testee:factory"))
    failed = [
        (o.id, [f.message for f in o.result.failures])
        for o in suite.outcomes
        if o.status not in ("passed", "skipped")
    ]
    assert not failed
    needing = {s.id for s in load_all() if "leader_epoch_checkpoint" in s.needs}
    assert {o.id for o in suite.outcomes if o.status == "skipped"} == needing
    assert "epoch.reopen" in needing and "model.create.empty-dir" not in needing


def test_the_reference_claims_every_feature():
    """Every feature but ``kafka_exact``: the reference takes the other answer of some MAY
    rules (spec README §1.6), so it is not Kafka byte for byte."""
    assert expand_features(REFERENCE_FEATURES) == set(FEATURES) - {"compression", "kafka_exact"}


def test_snapshot_files_belong_to_their_feature():
    files = {
        "t-0/00000000000000000005.snapshot": b"",
        "t-0/00000000000000000005.snapshot.deleted": b"",
        "t-0/00000000000000000005.txnindex": b"",
        "t-0/00000000000000000005.log": b"",
    }
    assert set(disk.visible(files, set())) == {
        "t-0/00000000000000000005.txnindex",
        "t-0/00000000000000000005.log",
    }
    assert disk.visible(files, {"producer_snapshots"}) == files
    assert disk.visible(files, None) == files
    epochs = {"t-0/leader-epoch-checkpoint": b"", "t-0/00000000000000000005.log": b""}
    assert set(disk.visible(epochs, set())) == {"t-0/00000000000000000005.log"}
    assert disk.visible(epochs, {"leader_epoch_checkpoint"}) == epochs


def test_new_fields_are_optional_and_checked():
    base = {"batches": [], "assign_offsets": True, "leader_epoch": 0}
    append = {"id": 1, "op": "append", "now_ms": 0}
    assert request_errors({**append, "args": base}) == []
    assert request_errors({**append, "args": {**base, "origin": "coordinator"}}) == []
    assert request_errors({**append, "args": {**base, "origin": "broker"}})
    assert request_errors(
        {**append, "args": {**base, "assign_offsets": False, "origin": "coordinator"}}
    )
    read = {"start_offset": 0, "max_bytes": 1, "min_one_message": False}
    assert request_errors({"id": 1, "op": "read", "now_ms": 0, "args": read}) == []
    assert (
        request_errors(
            {"id": 1, "op": "read", "now_ms": 0, "args": {**read, "isolation": "txn_committed"}}
        )
        == []
    )
    result = {
        "data": "",
        "fetch_offset_metadata": {
            "message_offset": 0,
            "segment_base_offset": 0,
            "relative_position_in_segment": 0,
        },
        "first_entry_incomplete": False,
    }
    ok = {"id": 1, "ok": True}
    assert response_errors({**ok, "result": result}, "read") == []
    aborted = [{"producer_id": 7, "first_offset": 3}]
    assert (
        response_errors({**ok, "result": {**result, "aborted_transactions": aborted}}, "read") == []
    )
    assert response_errors(
        {**ok, "result": {**result, "aborted_transactions": [{"producer_id": 7}]}}, "read"
    )
    state = {"log_start_offset": 0, "log_end_offset": 0, "recovery_point": 0, "segments": []}
    assert response_errors({**ok, "result": state}, "state") == []
    assert response_errors({**ok, "result": {**state, "last_stable_offset": 0}}, "state") == []


def test_error_codes_are_the_spec_table():
    """conformance.protocol.ERROR_CODES is spec/behaviour/model.md Table 2."""
    text = MODEL.read_text(encoding="utf-8")
    table = text.split("\nTable 2:", 1)[1].split("\n\n", 2)[1]
    codes = re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.MULTILINE)
    assert len(codes) >= 14
    assert sorted(codes) == sorted(ERROR_CODES)
