"""Hostile testees and hostile option values (issue 20 §1-§3): the harness never reaches
outside the scenario's directory, never passes by accident, echoes nothing raw or unbounded,
bounds what it reads from a testee, and answers every bad option or unwritable path with one
clear line and exit status 2, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance import scratch, subprocess_driver, transport
from conformance.cli import conformance
from conformance.report import to_json
from conformance.suite import run_suite, select
from conformance.transport import TesteeFailure, resolve_impl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness_testees  # noqa: E402
from test_conformance_harness import PYTHON_REPRS, impl_of  # noqa: E402

BAD_TESTEE = HERE / "bad_testee.py"
APPEND = {"batches": [], "assign_offsets": True, "leader_epoch": 0}
DAMAGED = "recovery.files.clean-keeps-bytes"  # close, then append_zeros to 0.log, then open
CONTROL = [chr(c) for c in (*range(0x20), 0x7F, 0x9B)] + ["\u202e"]


@pytest.fixture(autouse=True)
def on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def no_control(text: str) -> bool:
    return not any(c in text for c in CONTROL if c != "\n")


# --- §1 a: nothing outside the scenario's directory is read or written ---------------------


@pytest.mark.req("PROTO-6")
@pytest.mark.parametrize("transport_name", ["inproc", "subprocess"])
def test_a_link_out_of_the_directory_is_never_followed(transport_name):
    """The testee replaces its .log with a link to an outside file: the damage step after
    close (append_zeros) wrote into that file, and the golden comparison showed its text."""
    outside = harness_testees.outside_file()
    scenarios, _ = select([DAMAGED, "read.range.*"])
    suite = run_suite(impl_of("links_outside", transport_name), scenarios)
    assert outside.read_text() == harness_testees.OUTSIDE_TEXT  # nothing written into it
    assert len(suite.outcomes) == len(scenarios)  # the run went on
    failure = suite.outcomes[0].result.failures[0]
    assert (failure.category, failure.step) == ("harness_step", 3)
    assert (
        "00000000000000000000.log is a symbolic link (the harness follows none), not a regular "
        "file: the harness does not open it"
    ) in failure.message
    report = json.dumps(to_json(suite))
    assert harness_testees.OUTSIDE_TEXT.strip() not in report
    assert not PYTHON_REPRS.search(failure.render())


def test_no_outside_byte_reaches_the_output():
    outside = harness_testees.outside_file()
    for args in (["--json"], ["--table", "all"]):
        result = klogspec_conformance(
            "--impl", "harness_testees:links_outside", "--only", DAMAGED, *args
        )
        assert result.returncode == 1, result.stderr
        assert harness_testees.OUTSIDE_TEXT.strip() not in result.stdout + result.stderr
        assert "symbolic link" in result.stdout
    assert outside.read_text() == harness_testees.OUTSIDE_TEXT


@pytest.mark.req("PROTO-6")
def test_a_linked_partition_directory_is_not_written_through():
    """The testee moves its partition directory out and leaves a link in its place."""
    scenarios, _ = select([DAMAGED])
    factory = harness_testees.MovesItsDirectoryOutside
    made: list = []
    spec = impl_of("moves_its_directory_outside")
    original = factory.after

    def after(self, pdir, op):
        original(self, pdir, op)
        if getattr(self, "moved_to", None) is not None and self.moved_to not in made:
            made.append(self.moved_to)

    factory.after = after
    try:
        suite = run_suite(spec, scenarios)
    finally:
        factory.after = original
    (moved,) = made
    size = (moved / "00000000000000000000.log").stat().st_size
    shutil.rmtree(moved.parent)  # the testee's own mkdtemp
    assert size == 300  # no 40 zeros appended
    failure = suite.outcomes[0].result.failures[0]
    assert failure.category == "harness_step" and failure.step == 3
    assert "is a symbolic link" in failure.message


@pytest.mark.parametrize(
    ("factory", "what"),
    [("fifo_for_log", "is a FIFO (named pipe)"), ("links_to_dev_zero", "is a symbolic link")],
)
def test_a_special_file_fails_its_test_without_blocking(factory, what):
    """Each test whose directory holds one fails, naming it; none blocks on it."""
    scenarios, _ = select([DAMAGED, "model.create.defaults"])
    suite = run_suite(impl_of(factory), scenarios, timeout=5)
    assert [o.status for o in suite.outcomes] == ["failed", "failed"]
    for outcome in suite.outcomes:
        failure = outcome.result.failures[0]
        assert failure.category == "harness_step" and what in failure.message


@pytest.mark.req("PROTO-6")
def test_scratch_opens_regular_files_inside_the_anchor_only(tmp_path, monkeypatch):
    anchor, outside = tmp_path / "scenario", tmp_path / "outside"
    (anchor / "logs" / "t-0").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_text("secret")
    pdir = anchor / "logs" / "t-0"
    (pdir / "a.log").write_bytes(b"abc")
    (pdir / "link").symlink_to(outside / "secret")
    (anchor / "logs" / "linked-0").symlink_to(outside, target_is_directory=True)
    assert scratch.read_bytes(pdir / "a.log", anchor) == b"abc"
    for path in (pdir / "link", anchor / "logs" / "linked-0" / "secret"):
        with pytest.raises(scratch.UnsafeFile, match="symbolic link"):
            scratch.read_bytes(path, anchor)
        with pytest.raises(scratch.UnsafeFile, match="symbolic link"):
            scratch.write_bytes(path, anchor, b"x")
    with pytest.raises(scratch.UnsafeFile, match="outside the scenario's directory"):
        scratch.read_bytes(outside / "secret", anchor)
    with pytest.raises(scratch.UnsafeFile, match="symbolic link"):
        scratch.snapshot(anchor / "logs", anchor)
    scratch.unlink(pdir / "link", anchor)  # the link goes, never its target
    scratch.unlink(anchor / "logs" / "linked-0", anchor)
    assert (outside / "secret").read_text() == "secret"
    assert scratch.snapshot(anchor / "logs", anchor) == {"t-0/a.log": b"abc"}
    monkeypatch.setattr(scratch, "MAX_FILE_BYTES", 2)  # a sparse giant is not read whole
    with pytest.raises(scratch.UnsafeFile, match="3 bytes long"):
        scratch.read_bytes(pdir / "a.log", anchor)


# --- §1 b: an implementation cannot end the run, and an unjudged run never exits 0 ---------


@pytest.mark.parametrize(
    ("factory", "raised"),
    [("exits_the_process", "SystemExit (exit status 0)"), ("interrupts", "KeyboardInterrupt")],
)
def test_system_exit_and_keyboard_interrupt_are_the_implementations_failures(factory, raised):
    scenarios, _ = select(["append.*"])
    scenarios = scenarios[:3]
    suite = run_suite(impl_of(factory), scenarios)
    assert len(suite.outcomes) == 3
    failures = [o.result.failures[0] for o in suite.outcomes]
    assert {f.category for f in failures} == {"crashed"}
    assert raised in failures[0].message


@pytest.mark.parametrize(
    ("impl", "status", "text"),
    [
        ("harness_testees:exits_the_process", 1, "SystemExit (exit status 0)"),
        ("sys:exit", 2, "cannot start the implementation sys:exit"),
    ],
)
def test_an_exiting_implementation_never_passes_the_run(impl, status, text):
    result = klogspec_conformance("--impl", impl, "--only", "append.split.*")
    assert result.returncode == status, result.stdout + result.stderr
    assert text in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


# --- §1 c, d: what a testee writes is escaped, capped and bounded ---------------------------


def _failure_of(mode: str, tmp_path, timeout: float = 5) -> TesteeFailure:
    driver = resolve_impl(f"cmd:{sys.executable} {BAD_TESTEE} {mode}").driver(timeout=timeout)
    try:
        assert driver.request("open", {"dir": str(tmp_path), "config": {}}, 0).ok
        with pytest.raises(TesteeFailure) as failure:
            driver.request("append", APPEND, 0)
        return failure.value
    finally:
        driver.shutdown()


@pytest.mark.parametrize("mode", ["escapes", "escapes-exit", "long-code"])
def test_what_a_testee_writes_is_escaped_and_capped(mode, tmp_path):
    failure = _failure_of(mode, tmp_path)
    for text in (failure.message, failure.detail):
        assert no_control(text), text[:300]
        assert len(text) < 1000
    if mode == "escapes":
        assert "\\x1b[2J" in failure.message and "the last line" in failure.detail


def test_the_echo_is_escaped_in_the_runner_too(tmp_path):
    scenarios, _ = select(["append.split.*"])
    spec = resolve_impl(f"cmd:{sys.executable} {BAD_TESTEE} escapes")
    suite = run_suite(spec, scenarios[:1], goldens=False)
    rendered = suite.outcomes[0].result.failures[0].render()
    assert no_control(rendered) and len(rendered) < 1500


@pytest.mark.req("PROTO-5")
@pytest.mark.parametrize(
    ("mode", "text"),
    [
        ("deep", "nests deeper than 32 levels"),
        ("deep-but-parses", "nests deeper than 32 levels"),
        ("endless", "longer than 65536 bytes without a newline"),
    ],
)
def test_protocol_input_is_bounded(mode, text, tmp_path, monkeypatch):
    monkeypatch.setattr(subprocess_driver, "MAX_LINE_BYTES", 1 << 16)  # the same code at 64 KiB
    failure = _failure_of(mode, tmp_path, timeout=30)
    assert failure.kind == "protocol"
    assert text in failure.message


def test_a_deep_hello_cannot_start_without_a_traceback():
    result = klogspec_conformance(
        "--impl", f"cmd:{sys.executable} {BAD_TESTEE} deep-hello", "--only", "model.*"
    )
    assert result.returncode == 2
    assert "nests deeper than 32 levels" in result.stderr
    assert "Traceback" not in result.stderr and "harness error" not in result.stderr


@pytest.mark.req("PROTO-5")
def test_in_process_results_are_bounded_as_well():
    class Deep:
        def hello(self, *, now_ms, **_):
            value: list = []
            for _ in range(5000):
                value = [value]
            return {"name": "deep", "version": "0", "features": value}

    driver = transport.InProcessDriver.__new__(transport.InProcessDriver)
    transport.Driver.__init__(driver, transport.ImplSpec("deep", "inproc"), 5)
    driver._factory, driver._adapter, driver._pool = Deep, None, None
    with pytest.raises(TesteeFailure, match="nests deeper than 32 levels"):
        driver.hello()
    driver.shutdown()


def test_a_killed_testee_leaves_no_thread_traceback(tmp_path):
    """Killing a testee closed its stdout under the reader thread: 'ValueError: readline of
    closed file' on stderr, once a test."""
    errors: list = []
    hook, threading.excepthook = threading.excepthook, errors.append
    try:
        spec = resolve_impl("reference", "subprocess")
        for _ in range(3):
            driver = spec.driver(5)
            driver.hello()
            driver.crash(0)
            driver.shutdown()
        threading.Event().wait(0.5)  # the readers notice their closed pipes
    finally:
        threading.excepthook = hook
    assert errors == []


# --- §2, §3: every option bounded and checked; unwritable outputs; no traceback -------------


def klogspec(*args: str, stdout=subprocess.PIPE, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    command = [sys.executable, "-c", "from klogspec.cli import main; main()"]
    return subprocess.run(
        [*command, *args], input=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
        env=env, timeout=300,
    )  # fmt: skip


def klogspec_conformance(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return klogspec("conformance", *args, stdout=stdout)


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    os.mkfifo(root / "fifo")
    (root / "latin1.txt").write_bytes(b"# caf\xe9\nmodel.create.defaults\n")
    (root / "big.txt").write_bytes(b"#" * (2 << 20))
    return root


ONE = ("--only", "model.create.defaults")
OPTION_CASES = [
    (["--timeout", "inf"], "'--timeout': inf is not a number of seconds"),
    (["--timeout", "nan"], "'--timeout': nan is not a number of seconds"),
    (["--timeout", "-1"], "'--timeout': -1 is not a number of seconds"),
    (["--timeout", "1e400"], "'--timeout': 1e400 is not a number of seconds"),
    (["--expected-failures", "{dir}/fifo"], "fifo: is a FIFO (named pipe), not a regular file"),
    (["--expected-failures", "/dev/zero"], "/dev/zero: is a character device"),
    (["--expected-failures", "{dir}/big.txt"], "2097152 bytes, more than the 1048576"),
    (["--expected-failures", "{dir}/latin1.txt"], "latin1.txt: not UTF-8 text: byte 5 (line 1) is 0xe9"),
    (["--expected-failures", "{dir}"], "is a directory"),
    (["--trace", "/proc/version"], "--trace /proc/version: cannot be written"),
    (["--trace", "/dev/full"], "--trace /dev/full: cannot be written: No space left on device"),
    (["--report", "/dev/full"], "--report /dev/full: cannot be written: No space left on device"),
    (["--junit", "/dev/full"], "--junit /dev/full: cannot be written: No space left on device"),
    (["--write-expected-failures", "/dev/full"], "--write-expected-failures /dev/full: cannot be written"),
    (["--report", "/proc/version"], "--report /proc/version: cannot be written"),
    (["--junit", "{dir}/missing/junit.xml"], "junit.xml: cannot be written: No such file or directory"),
    (["--report", "{dir}"], "is a directory"),
    (["--write-expected-failures", "{dir}"], "is a directory"),
    (["--trace", "{dir}/fifo"], "fifo: cannot be written: a FIFO or socket that no process reads"),
    (["--workdir", "{dir}/missing"], "does not exist"),
    (["--only", ""], "--only: an empty test ID or glob"),
    (["--only", "no.such\x1b[2J"], "no test matches no.such\\x1b[2J"),
    (["--impl", "cmd:'unclosed"], "No closing quotation"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "text"), OPTION_CASES)
def test_a_bad_option_is_one_clear_line_and_exit_2(args, text, hostile_files):
    """In process, for speed (the subprocess cases below run the real command line)."""
    args = [a.replace("{dir}", str(hostile_files)) for a in args]
    result = CliRunner().invoke(conformance, [*ONE, *args])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert isinstance(result.exception, SystemExit), result.exception  # not a traceback
    assert text in said
    assert "Traceback" not in said and not PYTHON_REPRS.search(said.replace("[2J", ""))


@pytest.mark.parametrize(
    "args",
    [
        ["--timeout", "nan"],
        ["--expected-failures", "{dir}/fifo"],
        ["--expected-failures", "{dir}/latin1.txt"],
        ["--report", "/dev/full"],
        ["--trace", "/proc/version"],
    ],
)
def test_the_command_line_prints_no_traceback(args, hostile_files):
    args = [a.replace("{dir}", str(hostile_files)) for a in args]
    result = klogspec_conformance(*ONE, *args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert result.stderr.count("\n") <= 4 and not PYTHON_REPRS.search(result.stderr)


def test_json_to_a_full_disk_is_exit_2(tmp_path):
    with open("/dev/full", "w") as full:
        result = klogspec_conformance(*ONE, "--json", stdout=full)
    assert result.returncode == 2
    assert "cannot write to stdout: No space left on device" in result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr


OTHER_COMMANDS = [
    (["conformance", "show", "no.such\x1b[2J"], "no test no.such\\x1b[2J"),
    (["golden", "regenerate", "--out", "/dev/full"], "--out /dev/full: is not a directory"),
    (["golden", "regenerate", "--out", "{dir}/kept"], "holds no goldens (no manifest.json): it is not replaced"),
    (["testee", "--factory", "sys:exit"], "the factory sys:exit made no implementation: SystemExit"),
    (["conformance", "requirements", "--write", "--out", "/proc/version"], "/proc/version: cannot be written"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "text"), OTHER_COMMANDS)
def test_the_other_conformance_commands_check_their_options(args, text, tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "precious").write_text("not goldens")
    args = [a.replace("{dir}", str(tmp_path)) for a in args]
    result = klogspec(*args, stdin='{"id": 1, "op": "hello", "args": {}}\n')
    said = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 2, said
    assert text in said and no_control(result.stdout + result.stderr)
    assert "Traceback" not in said and not PYTHON_REPRS.search(result.stderr)
    assert (kept / "precious").read_text() == "not goldens"  # never deleted


@pytest.mark.req("PROTO-5")
def test_the_limits_are_the_documented_ones():
    from conformance.protocol import MAX_DEPTH, MAX_LINE_BYTES, schema_text

    repo = HERE.parents[1]
    assert (MAX_LINE_BYTES, MAX_DEPTH) == (16 << 20, 32)
    for text in (
        (repo / "docs" / "conformance" / "protocol.md").read_text(encoding="utf-8"),
        (repo / "spec" / "behaviour" / "model.md").read_text(encoding="utf-8"),
        schema_text("protocol.schema.json"),
    ):
        assert "16 MiB" in text and "32 levels" in text


def test_a_run_that_judged_fewer_tests_than_selected_never_exits_0(monkeypatch):
    from conformance import suite as suite_module

    real = suite_module.run_suite

    def loses_one(*args, **kwargs):
        suite = real(*args, **kwargs)
        suite.outcomes.pop()
        return suite

    monkeypatch.setattr(suite_module, "run_suite", loses_one)
    result = CliRunner().invoke(conformance, ["--only", "model.create.*"])
    assert result.exit_code == 2
    assert "the run judged 1 of the 2 selected tests" in result.output


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (
            ["--klogspec-timeout", "nan"],
            "argument --klogspec-timeout: nan is not a number of seconds",
        ),
        (["--klogspec-only", "milestone:0"], "milestones are numbered 1 to"),
        (["--klogspec-expected-failures", "/dev/zero"], "/dev/zero: is a character device"),
    ],
)
def test_the_pytest_plugin_checks_its_options_the_same_way(args, text):
    repo = HERE.parents[1]
    command = [sys.executable, "-m", "pytest", "-q", "-c", str(repo / "pyproject.toml"),
               "--rootdir", str(repo), "--pyargs", "conformance.pytest_suite"]  # fmt: skip
    result = subprocess.run(
        [*command, *args], cwd=repo, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    said = " ".join((result.stdout + result.stderr).split())
    assert result.returncode in (2, 4), said  # pytest's interrupted / usage error
    assert text in said and "Traceback" not in said
