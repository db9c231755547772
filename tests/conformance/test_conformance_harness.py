"""The harness never crashes, and every failure it reports can be trusted and acted on
(issue 13 §1, §3 B5, §5; issue 16 §2): a step it cannot do on the testee's files fails that
test only, naming the step, the operation and the file; a harness bug or an
implementation that cannot start is one clear error with exit status 2; each check carries
the level of the rule it checks; differences show both sides faithfully."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance import diagnostics, expected, file_checks
from conformance.cli import conformance
from conformance.mutants import mutants
from conformance.suite import common_causes, run_suite, select
from conformance.testee import handle
from conformance.transport import ImplSpec, TesteeFailure, python_env, resolve_impl

HERE = Path(__file__).resolve().parent
BAD_TESTEE = HERE / "bad_testee.py"
MUTANTS = mutants()
PYTHON_REPRS = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|b'|\['|files: files:")


@pytest.fixture(autouse=True)
def on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def impl_of(factory: str, transport: str = "inproc") -> ImplSpec:
    """A factory of harness_testees.py (or a mutant's name), through either transport."""
    if factory in MUTANTS:
        return MUTANTS[factory].impl(transport)
    if transport == "inproc":
        return ImplSpec(factory, "inproc", factory=f"harness_testees:{factory}")
    env = python_env()
    env["PYTHONPATH"] = f"{HERE}:{env['PYTHONPATH']}"
    command = [sys.executable, "-P", "-m", "conformance.testee", "--factory", f"harness_testees:{factory}"]  # fmt: skip
    return ImplSpec(f"{factory} (subprocess)", "subprocess", command=command, env=env)


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(conformance, list(args), env=env)


# --- 1. a step the harness cannot do fails that test, and the run goes on ------------------

MISSING_3_LOG = (
    "copies 00000000000000000003.log to 00000000000000000003.log.cleaned, but "
    "00000000000000000003.log does not exist: the testee did not write it "
    "(the reference's run has it)"
)
STEP_CASES = [
    # ROLL-2 with >=: segment 3 is not where the scenario copies it from (it used to abort the run)
    ("roll-one-batch-early", "recovery.temp.cleaned-and-split-swaps", 3, MISSING_3_LOG),
    # no .snapshot at roll: the damage copies one that is not there (it used to abort the run)
    ("no-snapshot-at-roll", "producer.snapshot.stray-kept-largest", 5,
     "copies 00000000000000000003.snapshot to 00000000000000000002.snapshot, but "
     "00000000000000000003.snapshot does not exist: the testee did not write it"),
    ("no_snapshots", "producer.snapshot.stray-kept-largest", 5,
     "00000000000000000003.snapshot does not exist: the testee did not write it"),
    ("renames_segments", "recovery.temp.cleaned-and-split-swaps", 3, MISSING_3_LOG),
    ("writes_nothing", "recovery.temp.cleaned-and-split-swaps", 3,
     "00000000000000000003.log does not exist, nor does the testee's partition directory"),
    ("segment_as_directory", "recovery.temp.cleaned-and-split-swaps", 3,
     "copies 00000000000000000003.log to 00000000000000000003.log.cleaned, but "
     "00000000000000000003.log is a directory"),
    ("removes_its_directory", "recovery.temp.cleaned-and-split-swaps", 3,
     "00000000000000000003.log does not exist, nor does the testee's partition directory"),
]  # fmt: skip


@pytest.mark.parametrize("transport", ["inproc", "subprocess"])
@pytest.mark.parametrize(("factory", "test_id", "step", "text"), STEP_CASES)
def test_a_step_the_harness_cannot_do_fails_only_that_test(factory, test_id, step, text, transport):
    scenarios, _ = select([test_id, "read.range.*"])
    suite = run_suite(impl_of(factory, transport), scenarios)
    assert len(suite.outcomes) == len(scenarios)  # the run went on
    outcome = suite.outcomes[0]
    assert outcome.status == "failed"
    failure = next(f for f in outcome.result.failures if f.category == "harness_step")
    assert text in failure.message
    assert (failure.step, failure.where) == (step, f"step {step} damage")
    assert failure.to_data()["step"] == step
    assert not PYTHON_REPRS.search(failure.render())


def test_a_fifo_is_never_read(tmp_path):
    """A testee that leaves a named pipe where a segment was cannot hang the harness."""
    from conformance.damage import StepError, apply_damage
    from conformance.scratch import UnsafeFile

    pdir = tmp_path / "t-0"
    pdir.mkdir()
    import os

    os.mkfifo(pdir / "00000000000000000003.log")
    with pytest.raises(UnsafeFile, match="is a FIFO"):
        apply_damage(tmp_path, pdir, {"file": "3.log.cleaned", "copy_from": "3.log"})
    with pytest.raises(StepError, match="holds only 0 bytes"):
        (pdir / "00000000000000000000.log").write_bytes(b"")
        apply_damage(tmp_path, pdir, {"file": "0.log", "flip_bit": {"at": 5}})


def test_an_unreadable_file_fails_the_step(monkeypatch):
    """A file the harness cannot read (here: every read of a .log refused) fails the test
    with the file and the reason; the run goes on."""
    from conformance import scratch

    original = scratch._open

    def refuse(path, anchor, flags):
        if path.name.endswith(".log"):
            raise PermissionError(13, "Permission denied", str(path))
        return original(path, anchor, flags)

    monkeypatch.setattr(scratch, "_open", refuse)
    scenarios, _ = select(["recovery.temp.cleaned-and-split-swaps", "read.range.*"])
    suite = run_suite(resolve_impl("reference"), scenarios)
    assert len(suite.outcomes) == len(scenarios)
    failure = suite.outcomes[0].result.failures[0]
    assert failure.category == "harness_step" and failure.step == 3
    assert "00000000000000000003.log cannot be read or written (permission denied)" in (
        failure.message
    )


def test_a_harness_bug_exits_2(monkeypatch):
    from conformance.runner import Run

    def broken(self):
        raise KeyError("oops")

    monkeypatch.setattr(Run, "final_checks", broken)
    result = run("--only", "read.range.*")
    assert result.exit_code == 2, result.output
    assert "harness error in read.range." in result.output
    assert "a bug in klogspec, not in the implementation under test" in result.output
    assert "Traceback" not in result.output


# --- issue 16 §2: an implementation that cannot start -----------------------------------


@pytest.mark.parametrize(
    ("impl", "extra", "reason"),
    [
        ("nosuchmod:factory", [], "no Python module named nosuchmod"),
        ("cmd:./nonexistent", [], "cannot run ./nonexistent: No such file or directory"),
        ("harness_testees:factory_that_fails", [], "RuntimeError: no log today"),
        ("harness_testees:no_such_factory", [], "AttributeError"),
        (
            f"cmd:{sys.executable} -c 'import sys; sys.exit(3)'",
            [],
            "exited (status 3) during hello",
        ),
        ("harness_testees:factory_that_fails", ["--transport", "subprocess"], "during hello"),
        # issue 20 §1: an exiting factory, an answer too deep for the harness's recursion
        ("sys:exit", [], "the factory sys:exit raised SystemExit (exit status None)"),
        (f"cmd:{sys.executable} {BAD_TESTEE} deep-hello", [], "nests deeper than 32 levels"),
    ],
)
def test_an_implementation_that_cannot_start_is_one_error_with_exit_2(impl, extra, reason):
    env = {"PYTHONPATH": f"{HERE}:{python_env()['PYTHONPATH']}"}
    result = run("--impl", impl, *extra, "--only", "read.range.*", env=env)
    assert result.exit_code == 2, result.output
    assert f"cannot start the implementation {impl}" in " ".join(result.output.split())
    assert reason in " ".join(result.output.split())
    assert "Traceback" not in result.output and "passed" not in result.output


# --- PROTO-1 to PROTO-4: the protocol's own errors, ids across restarts -------------------


@pytest.mark.req("PROTO-2", "PROTO-3")
@pytest.mark.parametrize(
    ("mode", "kind", "text"),
    [
        ("invalid-request", "protocol", "refused append as INVALID_REQUEST"),
        ("internal-error", "crashed", "append failed inside the testee (INTERNAL_ERROR"),
    ],
)
def test_the_protocol_errors_are_not_refusals(mode, kind, text, tmp_path):
    driver = resolve_impl(f"cmd:{sys.executable} {BAD_TESTEE} {mode}").driver(timeout=5)
    try:
        assert driver.request("open", {"dir": str(tmp_path), "config": {}}, 0).ok
        with pytest.raises(TesteeFailure) as failure:
            driver.request("append", {"batches": [], "assign_offsets": True, "leader_epoch": 0}, 0)
        assert (failure.value.kind, text in failure.value.message) == (kind, True)
    finally:
        driver.shutdown()


@pytest.mark.req("PROTO-2", "PROTO-3")
def test_the_reference_testee_answers_the_protocol_errors():
    class Adapter:
        def state(self, *, now_ms):
            raise RuntimeError("bug")

    assert handle(Adapter(), {"id": 3, "op": "explode", "args": {}})["error"]["code"] == (
        "INVALID_REQUEST"
    )
    assert handle(Adapter(), {"id": 3, "op": "roll", "args": {}})["error"]["code"] == (
        "INVALID_REQUEST"
    )
    assert handle(Adapter(), "not an object")["error"]["code"] == "INVALID_REQUEST"
    assert handle(Adapter(), {"id": 3, "op": "state", "args": {}})["error"]["code"] == (
        "INTERNAL_ERROR"
    )


@pytest.mark.parametrize("transport", ["inproc", "subprocess"])
def test_a_crash_inside_the_testee_is_crashed_through_both_transports(transport):
    suite = run_suite(impl_of("raises", transport), select(["read.range.*"])[0])
    assert {o.result.category for o in suite.outcomes} == {"crashed"}


@pytest.mark.req("PROTO-4")
@pytest.mark.parametrize("transport", ["inproc", "subprocess"])
def test_request_ids_increase_across_restarts(transport, tmp_path):
    """PROTO-4: a restarted testee gets hello first, with the next id, then the request
    that needed it (it used to get hello 5 and then open 4)."""
    trace = tmp_path / "trace.jsonl"
    with trace.open("w") as out:
        suite = run_suite(
            resolve_impl("reference", transport), select(["recovery.damage.*"])[0], trace=out
        )
    assert suite.ok
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    ids = [line["request"]["id"] for line in lines if "request" in line]
    assert ids == sorted(set(ids)) and len(ids) > 20
    crashes = [i for i, line in enumerate(lines) if line.get("crash")]
    assert crashes
    for i in crashes:
        following = next(line for line in lines[i + 1 :] if "request" in line)
        assert following["request"]["op"] == "hello"


# --- B5: each check at the level of the rule it checks -------------------------------------


def test_index_placement_is_checked_at_should_level():
    """index.files.full-capacity checks exact entries: placement is SHOULD (INDEX-7), so a
    testee that places them otherwise fails it as recommended, and the run passes."""
    suite = run_suite(
        MUTANTS["index-interval-inclusive"].impl("inproc"), select(["index.files.*"])[0]
    )
    outcome = next(o for o in suite.outcomes if o.id == "index.files.full-capacity")
    assert outcome.status == "failed" and outcome.failure_level == "SHOULD"
    assert {f.level for f in outcome.result.failures} == {"SHOULD"}
    assert any(f.choice == ["INDEX-7"] for f in outcome.result.failures)
    assert suite.ok and not suite.must_failures


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("time-index-accepts-equal-timestamps", "INDEX-15"),
        ("close-without-final-time-entry", "FLUSH-8"),
    ],
)
def test_must_index_rules_are_still_must(name, rule):
    """Entries checks are SHOULD; the index invariants keep MUST rules at MUST."""
    mutant = MUTANTS[name]
    suite = run_suite(mutant.impl("inproc"), select(mutant.scenarios)[0])
    assert any(
        rule in f.requirements and f.level == "MUST"
        for o in suite.outcomes
        for f in o.result.failures
    )
    assert not suite.ok


@pytest.mark.req("COMPACT-30")
@pytest.mark.parametrize(
    ("factory", "levels"),
    [
        ("cleans_with_no_progress", set()),  # COMPACT-30's answer: passes, goldens included
        ("cleans_with_no_progress_kafka_exact", {"SHOULD"}),  # held to the refusal
        ("cleans_past_the_dirty_offset", {"MUST"}),  # neither answer
    ],
)
def test_a_step_accepts_the_answer_its_may_rule_allows(factory, levels):
    """compaction.offset-map.refused names COMPACT-30's answer (``may``): the pass with no
    progress passes it, golden differences and all, unless the testee claims kafka_exact;
    an answer that is neither fails at MUST."""
    suite = run_suite(impl_of(factory), select(["compaction.offset-map.refused"])[0])
    failures = suite.outcomes[0].result.failures
    assert {f.level for f in failures} == levels, failures
    if factory.endswith("kafka_exact"):
        assert "missing_error" in {f.category for f in failures}
        assert all(f.choice == ["COMPACT-30"] for f in failures)
    if levels == {"MUST"}:
        assert failures[0].category == "missing_error" and not failures[0].choice


def test_a_golden_difference_names_the_rule_of_its_field():
    suite = run_suite(impl_of("offset_of_max_timestamp_off_by_one"), select(["append.*"])[0])
    golden = [
        f
        for o in suite.outcomes
        for f in o.result.failures
        if f.category == "golden_response" and "offset_of_max_timestamp" in f.message
    ]
    assert golden and {tuple(f.requirements) for f in golden} == {("APPEND-28",)}
    assert {f.level for f in golden} == {"SHOULD"}  # an optional field of no release
    assert golden[0].cause == "append: offset_of_max_timestamp differs from the reference's"


@pytest.mark.req("APPEND-28")
@pytest.mark.parametrize("transport", ["inproc", "subprocess"])
def test_an_append_may_leave_out_the_offset_of_its_largest_timestamp(transport):
    """offset_of_max_timestamp is optional (APPEND-28): a testee without it passes every
    scenario that expects it, through the protocol's schema too."""
    ids = ["append.leader.*", "append.log-append-time.*", "producer.*"]
    suite = run_suite(impl_of("no_offset_of_max_timestamp", transport), select(ids)[0])
    assert suite.outcomes and not [o.id for o in suite.outcomes if o.status != "passed"]


# --- §5: diagnostics -------------------------------------------------------------------------


def test_a_text_difference_keeps_both_final_newlines():
    text = diagnostics.text_difference(b"0\n1\ntopic 0 4\n", b"0\n1\ntopic 0 3\n")
    assert text.startswith('"0\\n1\\ntopic 0 4\\n", the reference\'s "0\\n1\\ntopic 0 3\\n"')
    assert 'line 3 differs: "topic 0 4\\n" vs "topic 0 3\\n"' in text
    assert "line 1 differs" in diagnostics.text_difference(b"0\n", b"0")


def test_a_bytes_difference_has_lengths_position_and_hex_window():
    have, want = bytes(range(40)), bytes(range(20)) + b"\xff" + bytes(range(21, 30))
    text = diagnostics.bytes_difference(have, want)
    assert text.startswith("40 bytes, the reference's 30; first difference at byte 20: ")
    assert "@12: 0c 0d 0e 0f 10 11 12 13 [14] 15" in text
    assert "[ff]" in text
    assert "the reference's 3 bytes" not in diagnostics.bytes_difference(b"abc", b"abcd")
    assert "[end]" in diagnostics.bytes_difference(b"abc", b"abcd")


def test_steps_are_described_as_operations():
    assert diagnostics.describe_step({"delete_segments_before": {"offset": 2}}) == (
        "delete_segments_before(2)"
    )
    assert diagnostics.describe_step({"append": {"batch": {}, "times": 3}}) == (
        "append ×3 of 1 batch"
    )
    assert diagnostics.describe_step({"damage": [{"file": "3.log", "delete": True}]}) == (
        "damage: deletes 00000000000000000003.log"
    )
    assert diagnostics.show(None) == "null" and diagnostics.show([True]) == "[true]"


def test_one_root_cause_is_summarised_once():
    """A double space in every leader-epoch-checkpoint fails many tests with one cause."""
    suite = run_suite(impl_of("double_spaced_epochs"), select(["epoch.*"])[0])
    top = common_causes(suite)[0]
    assert top["cause"] == "leader-epoch-checkpoint: format (the same entries)"
    assert top["requirements"] == ["CKPT-B-4"] and len(top["tests"]) >= 3
    failure = next(f for o in suite.outcomes for f in o.result.failures if f.cause == top["cause"])
    # the reference's side keeps its final newline
    assert re.search(r'the reference\'s "0\\n\d+\\n(\d+ \d+\\n)+"', failure.message), (
        failure.message
    )


def test_failure_messages_and_reports_show_no_python_reprs(tmp_path):
    report = tmp_path / "r.json"
    run("--impl", "conformance.mutants:no_snapshot_at_roll", "--only", "producer.snapshot.*",
        "--report", str(report))  # fmt: skip
    run("--impl", "harness_testees:writes_nothing", "--only", "recovery.temp.*,model.create.*",
        "--report", str(tmp_path / "w.json"))  # fmt: skip
    for path in (report, tmp_path / "w.json"):
        data = json.loads(path.read_text())
        messages = [f["message"] for t in data["tests"] for f in t["failures"]]
        assert messages
        bad = [m for m in messages if PYTHON_REPRS.search(m)]
        assert not bad, bad[:5]


def test_text_output_names_step_operation_and_causes(tmp_path):
    result = run("--impl", "harness_testees:double_spaced_epochs", "--only", "epoch.*")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    first_table = next(i for i, line in enumerate(lines) if "Requirements" in line)
    shared = next(i for i, line in enumerate(lines) if "share: leader-epoch-checkpoint" in line)
    assert shared < first_table  # the common cause comes first
    assert re.search(r"\] golden_files at the end of the scenario: ", result.output)
    steps = run(
        "--impl", "conformance.mutants:no_snapshot_at_roll", "--only", "producer.snapshot.stray-*"
    )
    assert (
        "[MUST SNAP-B-4] files at step 4 close then files: snapshots at offsets [8], "
        "expected [3, 6, 8]" in steps.output
    )
    assert "[MUST SNAP-B-4] harness_step at step 5 damage: copies " in steps.output


def test_default_table_lists_failing_rules_and_fits_100_columns():
    mutant = "conformance.mutants:read_ignores_max_bytes"
    failing = run("--impl", mutant, "--only", "read.size.plain.*,read.range.*")
    everything = run("--impl", mutant, "--only", "read.size.plain.*,read.range.*", "--table", "all")
    table = [
        line for line in failing.output.splitlines() if re.match(r"^ [A-Z]+(-[A-Z]+)?-\d+ ", line)
    ]
    rows = [
        line
        for line in everything.output.splitlines()
        if re.match(r"^ [A-Z]+(-[A-Z]+)?-\d+ ", line)
    ]
    assert table and all(" fail" in line or "recommended" in line for line in table)
    assert len(rows) > len(table)
    lines = everything.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line == "Requirements")
    end = next(i for i, line in enumerate(lines) if i > start + 2 and not line.strip())
    assert end - start > 4 and max(len(line) for line in lines[start:end]) <= 100


def test_a_scenario_counts_under_every_rule_it_failed():
    from conformance.suite import requirement_rows

    suite = run_suite(impl_of("double_spaced_epochs"), select(["epoch.*"])[0])
    for row in requirement_rows(suite):
        assert (
            row["passed"] + row["failed"] + row["skipped"] + row["expected_failures"]
            == (row["scenarios"])
        ), row


def test_trace_writes_every_request_and_response(tmp_path):
    trace = tmp_path / "trace.jsonl"
    result = run("--only", "read.range.*", "--trace", str(trace))
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert lines[0]["request"]["op"] == "hello"
    assert all(line["response"]["id"] == line["request"]["id"] for line in lines)
    assert {line["test"] for line in lines[1:]} == {s.id for s in select(["read.range.*"])[0]}


def test_show_prints_the_expanded_steps():
    result = run("show", "recovery.temp.cleaned-and-split-swaps")
    assert result.exit_code == 0
    assert "step 0  open (the scenario's own)" in result.output
    assert (
        "step 3  damage: copies 00000000000000000003.log to 00000000000000000003.log.cleaned"
        in result.output
    )
    assert "LOAD-7 MUST" in result.output
    assert run("show", "no.such.test").exit_code == 2


def test_compression_is_claimed_per_codec():
    """A gzip-only testee runs the gzip scenarios and skips the others with the codec."""
    scenarios, _ = select(["append.leader.compressed-*", "read.find.batch-start"])
    suite = run_suite(impl_of("gzip_only"), scenarios)
    status = {o.id: o for o in suite.outcomes}
    assert status["append.leader.compressed-garbage"].status == "passed"
    assert status["append.leader.compressed-kept"].status == "skipped"
    assert "compression.zstd" in status["append.leader.compressed-kept"].result.skip_reason
    assert "compression.lz4" in status["read.find.batch-start"].result.skip_reason


def test_malformed_expected_failure_lines_exit_2(tmp_path):
    found, problems = expected.parse("garbage: : :\nfiles: a.b\n")
    assert list(found) == ["a.b"]
    assert problems == ["line 1: expected '[category:] test-id', got \"garbage: : :\""]
    path = tmp_path / "x.txt"
    path.write_text("read.range.below\n: : :\n")
    result = run("--only", "read.range.*", "--expected-failures", str(path))
    assert result.exit_code == 2 and "line 2" in result.output


def test_files_problems_name_their_check_and_file(tmp_path):
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "00000000000000000000.log").write_bytes(b"")
    problems = file_checks.check_files(
        {"exactly": ["0.log", "0.index"], "size": {"0.index": 8}, "log": {"3.log": [[3, 3]]}},
        tmp_path, "t-0", "t", 0,
    )  # fmt: skip
    assert [(p.key, p.file) for p in problems] == [
        ("exactly-missing", "00000000000000000000.index"),
        ("size", "00000000000000000000.index"),
        ("log", "00000000000000000003.log"),
    ]
    assert problems[2].message == "00000000000000000003.log: missing, expected batches [[3, 3]]"


def test_set_mtime_of_a_file_the_testee_did_not_write():
    suite = run_suite(impl_of("writes_nothing"), select(["retention.time.mtime"])[0])
    failure = suite.outcomes[0].result.failures[0]
    assert failure.category == "harness_step"
    assert failure.where == "step 3 set_mtime of 00000000000000000000.log"
    assert failure.message.startswith(
        "sets the modification time of 00000000000000000000.log, but it does not exist"
    )
