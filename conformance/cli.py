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


class _ConformanceGroup(click.Group):
    """``klogspec conformance [OPTIONS]`` runs the suite; ``klogspec conformance check``
    checks the scenario files."""

    def parse_args(self, ctx, args):
        # a subcommand name is only recognised as the first argument
        if args and args[0] in self.commands:
            ctx.meta["klogspec_subcommand"] = True
        return super().parse_args(ctx, args)


@click.group(cls=_ConformanceGroup, invoke_without_command=True)
@click.pass_context
def conformance(ctx):
    """Run the conformance suite against an implementation (see `run` options)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@conformance.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON lines.")
def check_command(as_json):
    """Validate every scenario file: the schema, generated scenarios, unique stable IDs,
    requirement IDs that exist in spec/requirements.yaml, known features.

    Exit status: 0 clean, 1 problems found.
    """
    import json

    from .scenarios import check, load_all

    problems = check()
    if as_json:
        for problem in problems:
            click.echo(json.dumps({"problem": problem}))
    else:
        for problem in problems:
            click.echo(problem)
        if not problems:
            click.echo(f"{len(load_all())} scenarios: all valid")
    raise SystemExit(EXIT_FAIL if problems else EXIT_OK)
