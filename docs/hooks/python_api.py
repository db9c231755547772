"""Parts of docs/conformance/python.md made from the code when the site is built, so they
cannot drift from it:

* ``<!-- klogspec:adapter-methods -->``: the in-process contract's methods, with their
  signatures (``conformance.adapter.Implementation``) and result fields (the protocol's
  JSON Schema);
* ``<!-- klogspec:plugin-options -->``: the options the pytest plugin adds
  (``conformance.plugin.pytest_addoption``);
* ``<!-- klogspec:conformance-list -->``: the start of ``klogspec conformance list`` and the
  fields of one ``--json`` line, from the command itself.
"""

from __future__ import annotations

import html
import inspect
import json
import re
from pathlib import Path

MARKERS = {
    "<!-- klogspec:adapter-methods -->": "adapter_methods",
    "<!-- klogspec:plugin-options -->": "plugin_options",
    "<!-- klogspec:conformance-list -->": "conformance_list",
}


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _signature(name: str, function) -> str:
    sig = inspect.signature(function, eval_str=True)
    params = [p for p in sig.parameters.values() if p.name != "self"]
    text = str(sig.replace(parameters=params))
    return f"{name}{text}".replace("NoneType", "None")


def adapter_methods(repo: Path) -> str:
    """One row per method of ``Implementation``, in the protocol's order of operations."""
    from conformance.adapter import Implementation

    schema = json.loads(
        (repo / "conformance" / "schemas" / "protocol.schema.json").read_text(encoding="utf-8")
    )
    import generated

    rows = ["| Method | Returns (the protocol's result fields) |", "| --- | --- |"]
    for name, function in Implementation.__dict__.items():
        if name.startswith("_") or not callable(function):
            continue
        result = schema["$defs"].get(f"{name}_result")
        fields = generated._schema_fields(schema, result) if result else "nothing (`None`)"
        code = html.escape(_signature(name, function)).replace("|", "&#124;")
        rows.append(f"| <code>{code}</code> | {fields} |")
    rows += ["", "`?` marks a field that may be left out."]
    return "\n".join(rows)


class _Group:
    def __init__(self) -> None:
        self.options: list[tuple[list[str], dict]] = []

    def addoption(self, *names: str, **kwargs) -> None:
        self.options.append((list(names), kwargs))


class _Parser:
    """What ``pytest_addoption`` needs of pytest's parser, to list the options it adds."""

    def __init__(self) -> None:
        self.group = _Group()

    def getgroup(self, *args, **kwargs) -> _Group:
        return self.group

    def addoption(self, *names: str, **kwargs) -> None:
        self.group.addoption(*names, **kwargs)


def plugin_options(repo: Path) -> str:
    from conformance import plugin

    parser = _Parser()
    plugin.pytest_addoption(parser)
    rows = ["| Option | Meaning | Default |", "| --- | --- | --- |"]
    for names, kw in parser.group.options:
        metavar = kw.get("metavar") or (
            "{" + ",".join(kw["choices"]) + "}" if kw.get("choices") else ""
        )
        shown = ", ".join(f"`{n}{' ' + metavar if metavar else ''}`" for n in names)
        meaning = kw.get("help") or ""
        if kw.get("action") == "append" and "repeatable" not in meaning:
            meaning += " (repeatable)"
        default = kw.get("default")
        shown_default = "" if default in (None, [], "") else f"`{default}`"
        rows.append(f"| {shown} | {_cell(html.escape(meaning, quote=False))} | {shown_default} |")
    return "\n".join(rows)


def conformance_list(repo: Path, lines: int = 6) -> str:
    """The first lines of ``klogspec conformance list`` and the keys of a ``--json`` line,
    from the command itself."""
    from click.testing import CliRunner

    from conformance.cli import conformance

    runner = CliRunner()
    plain = runner.invoke(conformance, ["list"])
    as_json = runner.invoke(conformance, ["list", "--json"])
    if plain.exit_code or as_json.exit_code:
        raise RuntimeError(f"klogspec conformance list failed: {plain.output}{as_json.output}")
    listed = plain.output.splitlines()
    first = json.loads(as_json.output.splitlines()[0])
    keys = ", ".join(f"`{k}`" for k in first)
    return "\n".join(
        [
            "```text",
            "$ klogspec conformance list",
            *[line.replace("\t", "    ") for line in listed[:lines]],
            f"... ({len(listed)} tests)",
            "```",
            "",
            f"With `--json`, each line is one expanded scenario, with the keys {keys}: what a "
            "harness written in another language needs to run it.",
        ]
    )


def replace_markers(markdown: str, repo: Path) -> str:
    for marker, name in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, globals()[name](repo))
    return markdown


def has_marker(markdown: str) -> bool:
    return bool(
        re.search(r"<!-- klogspec:(adapter-methods|plugin-options|conformance-list) -->", markdown)
    )
