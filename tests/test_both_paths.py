"""The readable path, checked in every test run beside the compiled one (issue 14).

The test suite runs on whatever path the install has (compiled when a C compiler was
there). These tests run the whole conformance suite once more with
``KLOGSPEC_PURE_PYTHON=1``, through both transports (in process and the JSON-lines
subprocess testee), so the readable code stays conforming whichever path CI built.
The install without a compiler is checked by ``test_install_without_a_compiler`` (slow:
``--runslow``), in a throwaway virtual environment.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from reference_impl import kernels

REPO = Path(__file__).resolve().parent.parent
_CLI = "import sys; from klogspec.cli import main; sys.exit(main())"
PURE = {**os.environ, kernels.PURE_PYTHON_VARIABLE: "1"}
TESTEE = f"cmd:{shlex.join([sys.executable, '-m', 'conformance', 'testee'])}"


@pytest.mark.parametrize("impl", ["reference", TESTEE], ids=["in-process", "subprocess"])
def test_conformance_on_the_pure_python_path(tmp_path, impl):
    report = tmp_path / "report.json"
    argv = [sys.executable, "-c", _CLI, "conformance", "--impl", impl,
            "--report", str(report), "--table", "none"]  # fmt: skip
    result = subprocess.run(argv, cwd=REPO, env=PURE, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "warning" not in result.stderr.lower()  # the path was chosen, not fallen back to
    summary = json.loads(report.read_text())["summary"]
    assert summary["failed"] == 0 and summary["passed"] > 300, summary


@pytest.mark.slow
def test_install_without_a_compiler(tmp_path):
    """``pip install -e .`` with ``CC=false`` (every compile fails) in a throwaway venv that
    sees the machine's packages: the install succeeds without the extension, and the
    package runs pure Python with one clear warning."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    python = str(env_dir / "bin" / "python")
    source = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True)
    for name in files.stdout.decode().split("\0"):
        if name and (REPO / name).is_file():  # the tracked files as they are now
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    env = {**os.environ, "CC": "false", "CXX": "false"}
    env.pop(kernels.PURE_PYTHON_VARIABLE, None)
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "-e", str(source)],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    assert not list(source.glob("reference_impl/kernels/_*.so"))
    code = (
        "from reference_impl import kernels; "
        "from reference_impl.records import read_batch, build_record_batch, SimpleRecord; "
        "print(kernels.path(), len(read_batch(build_record_batch("
        "[SimpleRecord(b'v')])).records()))"
    )
    run = subprocess.run([python, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                         text=True)  # fmt: skip
    assert run.stdout.split() == ["pure", "1"], run.stderr
    warnings = [line for line in run.stderr.splitlines() if "Warning" in line]
    assert len(warnings) == 1 and "compiled kernels are not built" in warnings[0]
    assert "circular import" not in warnings[0]  # Python's own text for a missing module
