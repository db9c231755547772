"""The command line never answers with a traceback (issue 16 §2): a closed output pipe ends a
command quietly with status 0, a missing optional package names the extra to install (status
2), and no report shows a Python repr (``None``, ``[]``, ``{...}``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from klogspec.cli import missing_package_hint
from reference_impl.records import SimpleRecord, build_record_batch

REPO = Path(__file__).resolve().parent.parent
BLOCK = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = sys.argv[1]


class Missing(MetaPathFinder):  # as if the package were not installed
    def find_spec(self, name, path=None, target=None):
        if name == BLOCKED or name.startswith(BLOCKED + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Missing())
sys.argv = ["klogspec", *sys.argv[2:]]
from klogspec.cli import main
main()
"""


def klogspec(*args: str, blocked: str | None = None, **popen) -> subprocess.CompletedProcess:
    code = BLOCK if blocked else "import sys; from klogspec.cli import main; main()"
    argv = [sys.executable, "-c", code, *([blocked] if blocked else []), *args]
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    return subprocess.run(argv, text=True, timeout=300, **streams)


def a_log_dir(root: Path, batches: int = 3000) -> Path:
    """A log directory with one partition of ``batches`` one-record batches."""
    partition = root / "logs" / "orders-0"
    partition.mkdir(parents=True)
    raws = [
        build_record_batch([SimpleRecord(b"value %d" % i, b"key", 1_700_000_000_000 + i)],
                           base_offset=i)
        for i in range(batches)
    ]  # fmt: skip
    (partition / "00000000000000000000.log").write_bytes(b"".join(raws))
    (root / "logs" / "recovery-point-offset-checkpoint").write_text(f"0\n1\norders 0 {batches}\n")
    return root / "logs"


# --- missing optional packages ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command, package",
    [
        (["scan"], "pyarrow"),
        (["scan"], "pyspark"),
        (["extract", "--out", "OUT"], "pyspark"),
        (["extract", "--out", "OUT"], "pyarrow"),
    ],
)
def test_a_missing_extra_is_named(tmp_path, command, package):
    """``pip install -e .`` without the spark extra, then ``klogspec scan``: a traceback ended
    in ModuleNotFoundError (exit 1); now the extra to install, exit 2."""
    logs = a_log_dir(tmp_path, batches=3)
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    result = klogspec(*args, str(logs), blocked=package)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"klogspec {command[0]} needs the Python package {package}" in result.stderr
    assert "pip install 'kafka-log-spec[spark]'" in result.stderr


def test_the_hint_reads_the_extras_from_the_package_metadata():
    assert missing_package_hint("pandas").endswith("pip install 'kafka-log-spec[spark]'")
    assert missing_package_hint("snappy").startswith("the Python package python-snappy")
    assert missing_package_hint("nosuchpackage") == (
        "the Python package nosuchpackage, which is not installed"
    )


# --- closed pipes -----------------------------------------------------------------------------

PRINTING = [
    ["dump", "{logs}"],
    ["dump", "--json", "--deep", "{logs}"],
    ["verify", "{logs}"],
    ["verify", "--json", "{logs}"],
    ["recover", "--dry-run", "{logs}"],
    ["recover", "--dry-run", "--json", "{logs}"],
    ["conformance", "--only", "roll.size.*", "--table", "all"],
    ["conformance", "--only", "roll.size.*", "--json"],
    ["conformance", "list"],
]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    return a_log_dir(tmp_path_factory.mktemp("pipes"))


@pytest.mark.parametrize("command", PRINTING, ids=" ".join)
def test_a_closed_pipe_is_not_a_finding(logs, command):
    """``klogspec dump ... | head`` exited 1: a reader that stops reading is no finding. The
    pipe is closed before the command writes anything, so every write fails."""
    args = [a.format(logs=logs) for a in command]
    read, write = os.pipe()
    os.close(read)
    try:
        result = klogspec(*args, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.skipif(shutil.which("head") is None, reason="no head(1) here")
def test_dump_piped_into_head(logs):
    """The issue's own case, through a shell pipeline: the dump is far longer than a pipe
    holds, so it is writing when head leaves."""
    code = "from klogspec.cli import main; main()"
    script = f'"{sys.executable}" -c "{code}" dump {logs} | head -3; echo "${{PIPESTATUS[0]}}"'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    *lines, status = result.stdout.splitlines()
    assert len(lines) == 3 and status == "0", result.stderr
    assert result.stderr == ""


# --- no Python reprs ------------------------------------------------------------------------

# None, [] and {} (Kafka's own "headerKeys: []" aside), a quoted dict key, a repeated label
REPR = re.compile(r"\bNone\b|(?<!headerKeys: )\[\]|\{\}|'[A-Za-z_]+': |\b(\w+): \1:")


@pytest.mark.corpus
def test_reports_have_no_python_reprs(corpus, tmp_path):
    """Every text report of dump, verify and recover over copies of the corpus, damaged so
    that every kind of line is printed, holds no Python repr."""
    from recovery.test_recover_corpus import FLIP_AT, FLIPPED, MULTISEG, copy_log_dir, flip

    logs = copy_log_dir(corpus, MULTISEG, tmp_path)
    partition = logs / "invoice-0"
    flip(partition / FLIPPED, FLIP_AT)
    (partition / "00000000000000000000.index").write_bytes(b"\0" * 13)  # not whole entries
    (partition / "leader-epoch-checkpoint").write_text("0\n1\n5 80000\n")  # above the cut
    # no recovery point for the partition: recover's checkpoint line has no "before"
    (logs / "recovery-point-offset-checkpoint").write_text("0\n1\ninvoice 1 90748\n")
    outputs = [
        klogspec("recover", "--dry-run", "--from-offset", "0", str(partition)),
        klogspec("verify", str(logs)),
        klogspec("dump", "--deep", "--verify-index-only", str(logs)),
        klogspec("dump", "--index-sanity-check", str(logs)),
        klogspec("dump", "--max-bytes", "100", str(partition / FLIPPED)),
        klogspec("recover", "--from-offset", "0", "--yes", str(partition)),
        klogspec("dump", "--include-quarantine", str(partition)),
        klogspec("verify", "--include-quarantine", str(corpus)),
        klogspec("dump", str(corpus)),
    ]
    # the lines that once printed None and []
    assert "recovery-point-offset-checkpoint: no entry -> 75491" in outputs[0].stdout
    assert "leader-epoch-checkpoint: epoch 5 from offset 80000 -> no epochs" in outputs[0].stdout
    for result in outputs:
        assert result.returncode in (0, 1), (result.args, result.stderr)
        text = result.stdout + result.stderr
        assert "Traceback" not in text
        assert not [line for line in text.splitlines() if REPR.search(line)], result.args
