"""``python -m conformance conformance|testee|golden ...``: the klogspec commands of this
package without the installed ``klogspec`` script."""

import click

from .cli import conformance, golden, testee


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """The conformance commands of klogspec."""


main.add_command(testee)
main.add_command(conformance)
main.add_command(golden)

if __name__ == "__main__":
    main()
