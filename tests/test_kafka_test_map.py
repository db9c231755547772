"""The map from Kafka's tests to ours (scripts/kafka_test_map.py), which the site shows as a
column of the catalogue (spec/behaviour/kafka-tests.md): complete, and found in the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "kafka_test_map.py"
sys.path.insert(0, str(REPO / "scripts"))

import kafka_test_map  # noqa: E402


def test_every_applicable_kafka_test_has_a_restatement():
    """A catalogue row with requirements and no 'not applicable'/'later' note needs our test."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_restatements_are_found_by_name_and_by_docstring():
    found = dict(
        (kafka, ours)
        for kafka, ours, _ in kafka_test_map.row_tests(
            "ULT `testSizeBasedLogRoll`; LLocT `testDeleteSegmentFilesAsync`", "ROLL-1", ""
        )
    )
    assert found["ULT `testSizeBasedLogRoll`"] == [
        "tests/log/test_unified_log_append_roll.py::test_size_based_log_roll"
    ]
    # named in a docstring ({Sync,Async}), not by the function's name
    assert found["LLocT `testDeleteSegmentFilesAsync`"] == [
        "tests/log/test_local_log.py::test_remove_and_delete_segments"
    ]
    ((_, ours, why),) = kafka_test_map.row_tests("ULT `testNoSuchThingAnywhere`", "ROLL-1", "")
    assert ours == [] and why == "**missing**"
