"""``python -m conformance conformance|testee|golden|kafka-testee ...``: the klogspec commands of this
package without the installed ``klogspec`` script."""

import click

from .cli import conformance, golden, testee
from .kafka_testee_cli import kafka_testee


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """The conformance commands of klogspec."""


main.add_command(testee)
main.add_command(conformance)
main.add_command(golden)
main.add_command(kafka_testee)

if __name__ == "__main__":
    main()
