"""The CLI page's examples of ``scan`` and ``extract`` (docs/cli-examples.yaml) print what the
page shows; tests/test_cli_examples.py checks the other commands' (and says how to record)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "hooks"))

import cli_examples  # noqa: E402

pytestmark = pytest.mark.spark
EXAMPLES = cli_examples.load()


@pytest.mark.parametrize("name", ["scan", "extract", "extract-latest-per-key"])
def test_the_example_prints_what_the_page_shows(spark, tmp_path, name):
    example = EXAMPLES[name]
    output, status = cli_examples.run(example, cli_examples.make_partitions(tmp_path))
    if os.environ.get("KLOGSPEC_WRITE_CLI_EXAMPLES") == "1":
        example.output, example.exit_code = output, status
        cli_examples.save(EXAMPLES)
        return
    assert (status, output) == (example.exit_code, example.output)
