"""The testee skeletons of conformance/skeletons pass milestones 1 and 2 (issue 20 §5): every
scenario of them, through the real subprocess protocol, in JavaScript (node, no packages)
and Java (javac, the JDK only). Skipped with the reason when node or javac is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.milestones import up_to
from conformance.report import exit_status
from conformance.suite import run_suite, select
from conformance.transport import ImplSpec

SKELETONS = Path(__file__).resolve().parents[2] / "conformance" / "skeletons"


def passes_milestone_2(command: list[str]) -> None:
    scenarios, unknown = select(["milestone:2"])
    assert not unknown and [s.id for s in scenarios] == [s.id for s in up_to(2)]
    suite = run_suite(ImplSpec(command[0], "subprocess", command=command), scenarios)
    assert len(suite.outcomes) == len(scenarios) == 87
    assert suite.hello["features"] == []
    failed = {o.id: [f.render() for f in o.result.failures] for o in suite.outcomes if o.status != "passed"}  # fmt: skip
    assert failed == {}
    assert exit_status(suite) == 0


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_skeleton_passes_milestone_2():
    passes_milestone_2(["node", str(SKELETONS / "testee.mjs")])


@pytest.mark.skipif(
    shutil.which("javac") is None or shutil.which("java") is None,
    reason="javac and java (JDK 17+) are not installed",
)
def test_the_java_skeleton_passes_milestone_2(tmp_path):
    subprocess.run(
        ["javac", "-d", str(tmp_path), str(SKELETONS / "Testee.java")], check=True, timeout=120
    )
    passes_milestone_2(["java", "-cp", str(tmp_path), "Testee"])


def test_a_skeleton_that_gets_a_byte_wrong_fails(tmp_path):
    """The check above can fail: the JavaScript skeleton with its CRC left as the client
    sent it breaks MUST rules of milestone 1 (the .log differs from the reference's)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    broken = tmp_path / "testee.mjs"
    source = (SKELETONS / "testee.mjs").read_text(encoding="utf-8")
    marker = "batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES)), CRC);"
    assert marker in source
    broken.write_text(source.replace(marker, ""), encoding="utf-8")
    with pytest.raises(AssertionError):
        passes_milestone_2(["node", str(broken)])
