"""``klogspec kafka-testee``: the Kafka testee built from a release's jars (DESIGN.md §7).

The Maven module ``conformance/kafka_testee/`` adapts the conformance protocol
(docs/conformance/protocol.md) to Apache Kafka's own ``UnifiedLog`` of the release named;
:mod:`conformance.kafka_jars` builds it once per release into the cache.
``klogspec kafka-testee command --kafka-version 4.4.0`` prints the ``cmd:`` to pass to
``klogspec conformance --impl``; ``--impl kafka:4.4.0`` is the short form
(:func:`testee_command`, called by ``conformance.transport.resolve_impl``).
docs/conformance/kafka-testee.md says which Kafka methods each operation calls.

Exit statuses: 0 printed; 2 the testee cannot be built (no Java 17+, no Maven, a version that
does not resolve on Maven Central).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from .kafka_jars import KafkaJarsError, build, java_command

MODULE_DIR = Path(__file__).resolve().parent / "kafka_testee"
MAIN_CLASS = "kafkatestee.KafkaTestee"
CHECKPOINT_MODES = ("kafka", "reference")
EXIT_USAGE = 2


def testee_command(version: str, flags: list[str] = ()) -> list[str]:
    """The command line of the Kafka testee of ``version`` (built on first use), with the
    testee's ``flags`` (``--checkpoints=reference``...)."""
    return java_command(build(MODULE_DIR, version), MAIN_CLASS, list(flags))


def parse_kafka_impl(spec: str) -> tuple[str, list[str]]:
    """``kafka:4.4.0`` or ``kafka:4.4.0 --checkpoints=reference``: the version and the flags."""
    words = shlex.split(spec.removeprefix("kafka:"))
    if not words:
        raise ValueError("kafka: needs a version, for example kafka:4.4.0")
    return words[0], words[1:]


@click.group(name="kafka-testee", context_settings={"help_option_names": ["-h", "--help"]})
def kafka_testee():
    """The conformance testee backed by Apache Kafka's release jars (Maven Central)."""


@kafka_testee.command()
@click.option(
    "--kafka-version", required=True, metavar="X.Y.Z", help="A Kafka release, e.g. 4.4.0."
)
@click.option(
    "--checkpoints",
    type=click.Choice(CHECKPOINT_MODES),
    default="kafka",
    show_default=True,
    help="When the root offset checkpoints are written: LogManager's timing or the reference's.",
)
def command(kafka_version, checkpoints):
    """Build the testee for a release (once; later runs are instant) and print the cmd: string
    for `klogspec conformance --impl`."""
    try:
        words = testee_command(kafka_version, [f"--checkpoints={checkpoints}"])
    except KafkaJarsError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    click.echo("cmd:" + shlex.join(words))
