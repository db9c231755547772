"""docs/kafka-test-map.md is generated from the catalogue and the tests: fresh, and complete."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "kafka_test_map.py"


def test_kafka_test_map_is_fresh():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_applicable_kafka_test_has_a_restatement():
    """A catalogue row with requirements and no 'not applicable'/'later' note needs our test."""
    page = (REPO / "docs" / "kafka-test-map.md").read_text()
    missing = [line for line in page.splitlines() if "**missing**" in line]
    assert not missing, "Kafka tests without a restatement:\n" + "\n".join(missing)
