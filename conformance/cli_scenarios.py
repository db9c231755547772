"""``klogspec conformance check``, ``list``, ``show`` and ``requirements`` (DESIGN.md §4;
docs/conformance/scenarios.md): the commands that read the scenarios and the requirement
table rather than run a testee. cli.py adds them to the ``conformance`` group.
"""

from __future__ import annotations

import click

from .options import EXIT_FAIL, EXIT_OK, EXIT_USAGE


@click.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON lines.")
def check_command(as_json):
    """Validate every scenario file: the schema, generated scenarios, unique stable IDs,
    requirement IDs that exist in spec/requirements.yaml, known features.

    Exit status: 0 clean, 1 problems found.
    """

    from .scenarios import check, load_all

    problems = check()
    echo_problems(problems, as_json)
    if not as_json and not problems:
        click.echo(f"{len(load_all())} scenarios: all valid")
    raise SystemExit(EXIT_FAIL if problems else EXIT_OK)


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the expanded scenarios as JSON lines.")
def list_command(as_json):
    """List every test: ID, level, requirements (with --json: the whole expanded scenario,
    what a harness in another language would run)."""
    import json

    from .scenarios import load_all

    for s in load_all():
        if as_json:
            click.echo(json.dumps({**s.to_data(), "level": s.level}, sort_keys=True))
        else:
            click.echo(f"{s.id}\t{s.level}\t{' '.join(s.requirements)}")


@click.command("show")
@click.argument("test_id")
@click.option("--json", "as_json", is_flag=True, help="Print the expanded scenario as JSON.")
def show_command(test_id, as_json):
    """Print one scenario, its families expanded: requirements with their levels, the
    config, the features it needs, and every step numbered as failures name them (step 0
    is the scenario's implicit open)."""
    import json

    from .diagnostics import describe_step, show
    from .scenarios import by_id, load_requirements

    scenario = by_id().get(test_id)
    if scenario is None:
        from .diagnostics import printable

        shown = printable(test_id)
        click.echo(f"error: no test {shown} (`klogspec conformance list` lists them)", err=True)
        raise SystemExit(EXIT_USAGE)
    if as_json:
        click.echo(json.dumps({**scenario.to_data(), "level": scenario.level}, indent=1))
        return
    levels = load_requirements()
    click.echo(f"{scenario.id}: {scenario.title}")
    click.echo(f"  level: {scenario.level}; from {scenario.source}")
    for req in scenario.requirements:
        entry = levels.get(req, {})
        click.echo(f"  {req} {entry.get('level', '?')}: {entry.get('rule', '')}")
    click.echo(f"  partition: {scenario.partition}; start_ms: {scenario.start_ms}")
    click.echo(f"  config: {show(scenario.config)}")
    if scenario.needs:
        click.echo(f"  needs: {', '.join(sorted(scenario.needs))}")
    if scenario.open:
        click.echo("  step 0  open (the scenario's own)")
    for number, step in enumerate(scenario.steps, 1):
        click.echo(f"  step {number}  {describe_step(step)}")
        for key, value in step.items():
            click.echo(f"          {key}: {show(value)}")


@click.command("requirements")
@click.option(
    "--write",
    "write",
    is_flag=True,
    help="Write the table to docs/requirements.md of this checkout (or --out) instead of printing it.",
)
@click.option(
    "--out", type=click.Path(dir_okay=False), help="With --write or --check: this file instead."
)
@click.option("--check", is_flag=True, help="Exit 1 when the file differs from a fresh generation.")
def requirements_command(write, out, check):
    """Print the requirement table: rule, level, scenarios, reference code (markdown).

    Nothing is written unless asked: --write writes docs/requirements.md (what the project's
    docs are built from), --check compares it with a fresh generation."""
    from pathlib import Path

    from .traceability import requirement_table, requirements_doc_path

    text = requirement_table()
    path = Path(out) if out else requirements_doc_path()
    if check:
        fresh = path.is_file() and path.read_text(encoding="utf-8") == text
        click.echo(
            f"{path}: "
            + ("fresh" if fresh else "stale: run `klogspec conformance requirements --write`")
        )
        raise SystemExit(EXIT_OK if fresh else EXIT_FAIL)
    if not write:
        if out:
            raise click.UsageError("--out needs --write or --check")
        click.echo(text, nl=False)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        click.echo(f"error: {path}: cannot be written: {exc.strerror or exc}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    click.echo(f"wrote {path}")


def echo_problems(problems: list[str], as_json: bool) -> None:
    """A check's problems on stdout: one line each, or one JSON object a line."""
    import json

    for problem in problems:
        click.echo(json.dumps({"problem": problem}) if as_json else problem)
