"""``klogspec conformance``, ``klogspec testee`` and ``klogspec golden`` (DESIGN.md §4).

Registered under the ``klogspec.commands`` entry points (pyproject.toml), so
``reference_impl`` never imports this package. ``python -m conformance <command>``
runs the same commands without the ``klogspec`` script.

Exit statuses: 0 success; 1 a MUST failed (conformance), an expected-failure file was
contradicted, or goldens/scenarios are not what they should be; 2 the command could not
run (bad usage, unknown implementation or test ID).
"""

from __future__ import annotations

import click

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


@click.command()
@click.option(
    "--factory",
    default="conformance.reference:factory",
    show_default=True,
    help="Serve the object this module:attr factory returns instead of the reference.",
)
def testee(factory):
    """Serve an implementation over the conformance JSON-lines protocol on stdin/stdout.

    One request per line in, one response per line out (DESIGN.md §2); logs go to
    stderr. With no option this serves the reference implementation, so
    `klogspec conformance --impl cmd:"klogspec testee"` drives it as a subprocess.
    """
    from .testee import main

    main(["--factory", factory])
