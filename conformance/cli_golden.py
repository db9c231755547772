"""``klogspec golden``: regenerate or check the golden fixtures (DESIGN.md §4;
docs/conformance/results.md: the goldens). Registered as an entry point through cli.py.
"""

from __future__ import annotations

import click

from .cli_scenarios import echo_problems
from .options import EXIT_FAIL, EXIT_OK, EXIT_USAGE


@click.group()
def golden():
    """Regenerate or check the golden fixtures (conformance/goldens)."""


@golden.command("regenerate")
@click.option(
    "--out", type=click.Path(file_okay=False), help="Write here instead of conformance/goldens."
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def golden_regenerate(out, as_json):
    """Run every scenario on the reference and write its final directory, the corrupt
    fixtures and manifest.json. Deterministic: byte-identical on every run."""
    import json
    from pathlib import Path

    from .goldens import golden_dir, regenerate

    target = Path(out) if out else golden_dir()
    refused = _not_goldens(target)
    if refused:
        click.echo(f"error: --out {target}: {refused}", err=True)
        raise SystemExit(EXIT_USAGE)
    try:
        manifest = regenerate(target)
    except OSError as exc:
        click.echo(f"error: --out {target}: cannot be written: {exc.strerror or exc}", err=True)
        raise SystemExit(EXIT_USAGE) from None
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    scenarios, corrupt = len(manifest["scenarios"]), len(manifest["corrupt"])
    if as_json:
        click.echo(
            json.dumps(
                {"scenarios": scenarios, "corrupt": corrupt, "bytes": size, "out": str(target)}
            )
        )
    else:
        click.echo(f"{scenarios} scenarios, {corrupt} corrupt fixtures, {size} bytes in {target}")


def _not_goldens(target) -> str | None:
    """Why ``golden regenerate`` must not replace ``target`` (it deletes what is there):
    only a missing path, an empty directory or a directory of goldens (a manifest.json)."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        return "is not a directory"
    if target.is_dir() and any(target.iterdir()) and not (target / "manifest.json").is_file():
        return "is a directory that holds no goldens (no manifest.json): it is not replaced"
    return None


@golden.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print each difference as a JSON line.")
def golden_check(as_json):
    """Fail (exit 1) when the checked-in goldens differ from a fresh regeneration."""

    from .goldens import check

    problems = check()
    echo_problems(problems, as_json)
    if not as_json:
        if problems:
            click.echo("goldens are stale: run `klogspec golden regenerate`")
        else:
            click.echo("goldens are fresh")
    raise SystemExit(EXIT_FAIL if problems else EXIT_OK)
