"""The CLI page's examples (docs/cli-examples.yaml, docs/hooks/cli_examples.py) are real: every
command has one, and each, run again, prints what the page shows. Run with
KLOGSPEC_WRITE_CLI_EXAMPLES=1 to record new output instead (then review the diff)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "hooks"))

import cli_examples  # noqa: E402
from generated import cli_commands  # noqa: E402

WRITE = os.environ.get("KLOGSPEC_WRITE_CLI_EXAMPLES") == "1"
EXAMPLES = cli_examples.load()
# run in tests/pipeline/test_pipeline_cli_examples.py
SPARK = {name for name, e in EXAMPLES.items() if e.command in ("scan", "extract")}


@pytest.fixture(scope="module")
def partitions(tmp_path_factory):
    return cli_examples.make_partitions(tmp_path_factory.mktemp("examples"))


def test_every_command_has_an_example():
    _, commands = cli_commands(REPO)
    assert sorted({e.command for e in EXAMPLES.values()}) == sorted(commands)
    assert set(commands) <= set(EXAMPLES)  # each command's own example, under its name


def check(name: str, root: Path) -> None:
    example = EXAMPLES[name]
    output, status = cli_examples.run(example, root)
    if WRITE:
        example.output, example.exit_code = output, status
        cli_examples.save(EXAMPLES)
        return
    assert (status, output) == (example.exit_code, example.output), name


@pytest.mark.parametrize("name", sorted(set(EXAMPLES) - SPARK))
def test_the_example_prints_what_the_page_shows(name, partitions):
    if name == "kafka-testee":  # builds the testee from Kafka's jars: Java 17+ and Maven
        from conformance import kafka_jars

        try:
            kafka_jars.find_java(), kafka_jars.find_maven()
        except kafka_jars.KafkaJarsError as exc:
            pytest.skip(str(exc))
    check(name, partitions)
