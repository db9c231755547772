"""``klogspec conformance``, ``klogspec testee`` and ``klogspec golden`` (DESIGN.md §4).

Registered under the ``klogspec.commands`` entry points (pyproject.toml), so
``reference_impl`` never imports this package. ``python -m conformance <command>``
runs the same commands without the ``klogspec`` script.

Exit statuses: 0 success; 1 a MUST failed (conformance), an expected-failure file was
contradicted, or goldens/scenarios are not what they should be; 2 the command could not
run (bad usage, a bad option value or an output that cannot be written, an implementation
that cannot be started, an unknown test ID, a malformed expected-failure file, a run that
did not judge every selected test, or an error of the harness itself).
"""

from __future__ import annotations

import click

from .cli_golden import golden
from .cli_scenarios import check_command, list_command, requirements_command, show_command
from .options import EXIT_USAGE, Seconds

__all__ = ["conformance", "golden", "testee"]


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


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--impl",
    default="reference",
    show_default=True,
    help="The implementation: reference, module:attr (an in-process factory), an entry point of "
    'klogspec.implementations, or cmd:"<command line>" (a JSON-lines testee).',
)
@click.option(
    "--transport",
    type=click.Choice(["inproc", "subprocess"]),
    help="Drive an in-process implementation through the subprocess protocol (or insist on inproc).",
)
@click.option(
    "--only",
    multiple=True,
    metavar="ID",
    help="Run only these tests (IDs or globs; repeatable, comma-separated); milestone:N runs "
    "milestones 1 to N (milestone:1 is the smoke subset of a new testee).",
)
@click.option(
    "--expected-failures",
    type=click.Path(dir_okay=False),
    help="Your expected-failure file: one '[category:] test-id' per line (UTF-8, at most 1 MiB).",
)
@click.option("--report", type=click.Path(dir_okay=False), help="Write the JSON report here.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
@click.option(
    "--timeout",
    type=Seconds(),
    default=10.0,
    show_default=True,
    help="Seconds per request: above 0, at most 86400.",
)
@click.option("--no-goldens", is_flag=True, help="Do not compare with the reference's goldens.")
@click.option(
    "--table",
    type=click.Choice(["all", "failing", "none"]),
    default="failing",
    show_default=True,
    help="Which rows of the per-requirement table to print: the rules that failed, all, none.",
)
@click.option(
    "--trace",
    type=click.Path(dir_okay=False),
    help="Write every request and response of the run to this file, one JSON line each.",
)
@click.option(
    "--write-expected-failures",
    type=click.Path(dir_okay=False),
    help="Write the tests that failed as an expected-failure file (a starting point).",
)
@click.option(
    "--workdir",
    type=click.Path(exists=True, file_okay=False, writable=True),
    help="Scratch space, an existing directory (default: /dev/shm or the temp dir).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the JSON report on stdout instead of the table."
)
@click.option(
    "--cross-load",
    metavar="IMPL",
    help="A second implementation (as --impl) that opens each directory the first leaves, once "
    "closed, and must load the same log start/end offsets, segments and read bytes.",
)
@click.pass_context
def conformance(ctx, impl, transport, only, expected_failures, report, junit, timeout, no_goldens, table,
                trace, write_expected_failures, workdir, as_json, cross_load):  # fmt: skip
    """Run the conformance suite against an implementation (the main job).

    Each scenario of conformance/scenarios is one test with a stable ID. At the end:
    a per-requirement table, then one line `N passed, N failed, N skipped, N expected
    failures`. SHOULD-only failures are reported as recommended and do not fail the run.

    Exit status: 0 no MUST failed; 1 a MUST failed, or the expected-failure file was
    contradicted (a listed test passed, failed differently, was skipped or does not
    exist); 2 the command could not run: bad usage, an implementation that cannot be
    started, a malformed expected-failure file, or an error of the harness itself.
    `klogspec conformance check` validates the scenario files instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    import sys

    from rich.markup import escape

    from klogspec.cli import stderr_console, stdout_console

    from .options import OptionError

    # klogspec's consoles: a closed pipe (`| head`) ends the run with status 0, not rich's 1
    err = stderr_console(emoji=False)
    out = stdout_console(emoji=False)
    try:
        status = _run_conformance(
            err, out, impl=impl, transport=transport, only=only,
            expected_failures=expected_failures, report=report, junit=junit, timeout=timeout,
            no_goldens=no_goldens, table=table, trace=trace,
            write_expected_failures=write_expected_failures, workdir=workdir,
            as_json=as_json, cross_load=cross_load,
        )  # fmt: skip
    except OptionError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        status = EXIT_USAGE
    sys.exit(status)


def _stdout_failed(err, exc: OSError) -> int:
    """stdout cannot be written (``> /dev/full``): one line on stderr, exit 2."""
    from klogspec.cli import silence_stdout

    silence_stdout()  # the interpreter's last flush has nowhere to fail
    err.print(f"[red]error:[/] cannot write to stdout: {exc.strerror or type(exc).__name__}")
    return EXIT_USAGE


def _check_options(options: dict):
    """Everything a run needs, checked before it starts: the implementations, the tests,
    the expected-failure file, every output path. Raises OptionError."""
    from . import expected as xf
    from .diagnostics import printable
    from .options import OptionError, check_output, read_input
    from .suite import select
    from .transport import CannotStart, resolve_impl

    try:
        spec = resolve_impl(options["impl"], options["transport"])
        cross = options["cross_load"]
        cross_spec = None if cross is None else resolve_impl(cross)
    except (ValueError, CannotStart) as exc:
        raise OptionError(str(exc)) from None
    if any(not pattern.strip() for pattern in options["only"]):
        raise OptionError("--only: an empty test ID or glob")
    try:
        scenarios, unknown = select(options["only"])
    except ValueError as exc:
        raise OptionError(f"--only {exc}") from None
    if unknown:
        raise OptionError(f"no test matches {', '.join(printable(u) for u in unknown)}")
    expectations, path = {}, options["expected_failures"]
    if path is not None:
        expectations, problems = xf.parse(read_input(path, "--expected-failures"))
        if problems:
            raise OptionError(f"{path}: " + "; ".join(problems))
    for option in ("report", "junit", "trace", "write_expected_failures"):
        if options[option]:
            check_output(options[option], "--" + option.replace("_", "-"))
    return spec, cross_spec, scenarios, expectations


def _run_conformance(err, out, **options) -> int:
    """The run itself (``klogspec conformance``): its exit status."""
    from .options import OptionError, TraceFile
    from .report import exit_status
    from .results import HarnessError
    from .suite import run_suite
    from .transport import CannotStart

    spec, cross_spec, scenarios, expectations = _check_options(options)
    trace = TraceFile(options["trace"]) if options["trace"] else None
    try:
        with _progress(err, spec, len(scenarios)) as on_result:
            suite = run_suite(
                spec, scenarios, expectations, timeout=options["timeout"],
                goldens=not options["no_goldens"], workdir=options["workdir"],
                on_result=on_result, trace=trace, cross_load=cross_spec,
            )  # fmt: skip
    except (CannotStart, HarnessError, OSError) as exc:
        raise OptionError(str(exc)) from None
    finally:
        if trace is not None:
            trace.close()
    if len(suite.outcomes) != len(scenarios):  # never a pass with tests left unjudged
        raise OptionError(
            f"the run judged {len(suite.outcomes)} of the {len(scenarios)} selected tests"
        )
    try:
        _print_run(suite, out, spec, cross_spec, options)
        out.file.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        return _stdout_failed(err, exc)
    _write_outputs(suite, options)  # after the summary, which a failed write must not cost
    return exit_status(suite)


def _progress(err, spec, total: int):
    """A progress bar on a terminal, and each failure as it happens; yields on_result."""
    import contextlib

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .diagnostics import printable

    @contextlib.contextmanager
    def bar():
        with Progress(
            TextColumn("[bold]conformance[/] {task.description}"), BarColumn(),
            MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True,
            disable=not err.is_terminal,
        ) as progress:  # fmt: skip
            task = progress.add_task(printable(spec.label), total=total)

            def on_result(outcome):
                progress.advance(task)
                if outcome.status in ("failed", "xpass", "xfail-mismatch", "xskip"):
                    label = "recommended" if outcome.failure_level == "SHOULD" else "FAIL"
                    progress.console.print(
                        f"[red]{label}[/] {outcome.id} ({outcome.result.category or outcome.status})",
                        markup=True, highlight=False,
                    )  # fmt: skip

            yield on_result

    return bar()


def _write_outputs(suite, options: dict) -> None:
    """--report, --junit, --write-expected-failures; OptionError naming a file that fails."""
    from . import expected as xf
    from .options import write_output
    from .report import json_bytes, junit_bytes, to_json

    if options["report"]:
        data = json_bytes(to_json(suite, options["expected_failures"]))
        write_output(options["report"], "--report", data)
    if options["junit"]:
        write_output(options["junit"], "--junit", junit_bytes(suite))
    if options["write_expected_failures"]:
        failed = [
            (o.id, o.result.category) for o in suite.outcomes if o.status in ("failed", "xfail")
        ]
        text = xf.render(failed).encode("utf-8")
        write_output(options["write_expected_failures"], "--write-expected-failures", text)


def _print_run(suite, out, spec, cross_spec, options: dict) -> None:
    """The run's output on stdout: the JSON report, or the table and the failures."""
    import json

    from .diagnostics import printable
    from .report import print_causes, print_failures, print_table, to_json

    if options["as_json"]:
        data = to_json(suite, options["expected_failures"])
        out.print(json.dumps(data, indent=1), markup=False)
        return
    hello = suite.hello or {}
    features = ", ".join(sorted(hello.get("features", []))) or "none"
    out.print(
        printable(f"implementation: {hello.get('name', '?')} {hello.get('version', '')} via "
                  f"{spec.transport} (features: {features})", 400),
        markup=False,
    )  # fmt: skip
    print_causes(suite, out)
    if cross_spec is not None:
        out.print(f"cross-loaded by: {printable(cross_spec.label)}", markup=False)
    if options["table"] != "none":
        print_table(suite, out, only_failing=options["table"] == "failing")
    print_failures(suite, out)
    for problem in suite.list_problems:
        out.print(f"expected-failure file: {problem}", markup=False)
    if suite.should_failures:
        out.print(f"{len(suite.should_failures)} recommended (SHOULD) failures do not fail the run")
    out.print(suite.summary_line, markup=False, highlight=False)


for _command in (check_command, list_command, show_command, requirements_command):
    conformance.add_command(_command)
