"""Pages made from the project itself when the site is built: the CLI reference (from the
click commands), the requirement table (from spec/requirements.yaml and the sources that
cite each ID), the benchmarks page (from benchmarks/results/*.json) and the protocol
transcript (a real session with ``klogspec testee``)."""

from __future__ import annotations

import base64
import html
import json
import re
import tempfile
import tomllib
from pathlib import Path

import click
from spec_pages import Requirement

# --- CLI reference ------------------------------------------------------------------------------


def plugin_commands(repo: Path) -> dict[str, str]:
    """``klogspec.commands`` entry points as pyproject.toml declares them (the installed
    metadata may lag behind a checkout)."""
    data = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    return data.get("project", {}).get("entry-points", {}).get("klogspec.commands", {})


def _load(target: str):
    import importlib

    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def cli_commands(repo: Path) -> tuple[click.Group, dict[str, click.Command]]:
    from reference_impl.cli import main

    ctx = click.Context(main, info_name="klogspec")
    commands = {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}
    for name, target in plugin_commands(repo).items():
        if commands.get(name) is None:
            commands[name] = _load(target)
    return main, {k: v for k, v in sorted(commands.items()) if v is not None}


def _param_row(param: click.Parameter, ctx: click.Context) -> str:
    if isinstance(param, click.Argument):
        name = f"`{param.human_readable_name}`"
        kind = "argument" + (", repeatable" if param.nargs == -1 else "")
        kind += ", required" if param.required else ", optional"
        return f"| {name} | {kind} | {_type_name(param)} | |"
    record = param.get_help_record(ctx)
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    help_text = record[1] if record else ""
    default = ""
    if (
        isinstance(param, click.Option)
        and param.default not in (None, False, ())
        and not param.is_flag
    ):
        default = f"`{param.default}`"
    help_text = re.sub(r"\s*\[[^\]]*default[^\]]*\]\s*$", "", help_text)
    return f"| {names} | {_cell(help_text)} | {_type_name(param)} | {default} |"


def _type_name(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and param.is_flag:
        return "flag"
    name = param.type.name if hasattr(param.type, "name") else str(param.type)
    if isinstance(param.type, click.Choice):
        return " \\| ".join(f"`{c}`" for c in param.type.choices)
    return name.lower()


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _help_markdown(text: str) -> str:
    """Click help text to markdown: paragraphs kept; ``\\b`` blocks as preformatted text."""
    out: list[str] = []
    for block in (text or "").strip().split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].strip() == "\b":
            out.append("```text\n" + "\n".join(lines[1:]) + "\n```")
        else:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def _command_section(
    name: str, command: click.Command, parent: click.Context, level: int
) -> list[str]:
    ctx = click.Context(command, info_name=name, parent=parent)
    usage = " ".join(command.collect_usage_pieces(ctx))
    path = ctx.command_path
    anchor = path.replace(" ", "-")
    out = [
        f"{'#' * level} `{path}` {{ #{anchor} }}",
        "",
        _help_markdown(command.help or command.short_help or ""),
        "",
        "```text",
        f"{path} {usage}".rstrip(),
        "```",
        "",
    ]
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    if params:
        out += [
            "| Argument or option | Meaning | Type | Default |",
            "| --- | --- | --- | --- |",
            *[_param_row(p, ctx) for p in params],
            "",
        ]
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            out += _command_section(sub, command.get_command(ctx, sub), ctx, level + 1)
    return out


def cli_page(repo: Path) -> str:
    main, commands = cli_commands(repo)
    ctx = click.Context(main, info_name="klogspec")
    out = [
        "# CLI reference",
        "",
        "Generated from the `klogspec` command itself when the site was built: the click "
        "group `reference_impl.cli:main` and the commands other packages register under the "
        "entry-point group `klogspec.commands` (declared in `pyproject.toml`).",
        "",
        _help_markdown(main.help or ""),
        "",
        "```text",
        "klogspec " + " ".join(main.collect_usage_pieces(ctx)),
        "```",
        "",
        "| Command | What it does |",
        "| --- | --- |",
    ]
    for name, command in commands.items():
        out.append(f"| [`{name}`](#klogspec-{name}) | {_cell(command.get_short_help_str(90))} |")
    out += [
        "",
        "Every command exits with 0 when all is well, 1 when it found problems (findings, "
        "failed requirements) and 2 when it could not run (bad usage, a missing path); each "
        "command's own text below says what counts.",
        "",
    ]
    for name, command in commands.items():
        out += _command_section(name, command, ctx, 2)
    return "\n".join(out)


# --- requirement table --------------------------------------------------------------------------


def citations(repo: Path, ids: set[str], folder: str) -> dict[str, list[str]]:
    """For each ID, the files under ``folder`` that name it."""
    found: dict[str, list[str]] = {}
    pattern = re.compile(r"(?<![\w-])([A-Z]+(?:-[A-Z]+)?-\d+)(?![\w-])")
    root = repo / folder
    if not root.is_dir():
        return found
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for rid in set(pattern.findall(text)) & ids:
            found.setdefault(rid, []).append(path.relative_to(repo).as_posix())
    return found


def requirement_table_page(repo: Path, requirements: list[Requirement]) -> str:
    ids = {r.id for r in requirements}
    code = citations(repo, ids, "reference_impl")
    tests = citations(repo, ids, "tests")
    scenarios = citations(repo, ids, "conformance")
    counts = {
        level: sum(r.level == level for r in requirements) for level in ("MUST", "SHOULD", "MAY")
    }
    out = [
        "---",
        "hide: [navigation]",
        "---",
        "",
        "# Requirements",
        "",
        f"All {len(requirements)} requirements of the spec ({counts['MUST']} MUST, "
        f"{counts['SHOULD']} SHOULD, {counts['MAY']} MAY), generated from "
        "`spec/requirements.yaml` when the site was built. Each ID links to its definition; "
        "*Reference code* lists the modules of `reference_impl` that cite it, *Conformance* the "
        "files of `conformance/` that do, and *Tests* how many test files of the project name it.",
        "",
        '<div class="klog-scroll" markdown="1">',
        "",
        "| ID | Level | Rule | Reference code | Conformance | Tests |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for r in requirements:
        modules = ", ".join(
            f"`{Path(p).with_suffix('').as_posix().replace('/', '.')}`" for p in code.get(r.id, [])
        )
        conf = ", ".join(f"`{Path(p).name}`" for p in scenarios.get(r.id, []))
        out.append(
            f"| [{r.id}]({r.site_page}#{r.id}) | {r.level} | {_cell(r.rule)} | {modules} | "
            f"{conf} | {len(tests.get(r.id, []))} |"
        )
    out += ["", "</div>", ""]
    return "\n".join(out)


# --- benchmarks -----------------------------------------------------------------------------------


def _rows(data) -> list[dict]:
    """Rows of a results file: pytest-benchmark's ``benchmarks`` or any list of flat objects."""
    if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
        rows = []
        for b in data["benchmarks"]:
            row = {"name": b.get("name") or b.get("fullname")}
            stats = b.get("stats", {})
            for key in ("mean", "median", "stddev", "min", "max", "rounds"):
                if key in stats:
                    row[key] = stats[key]
            row.update({k: v for k, v in (b.get("extra_info") or {}).items() if _scalar(v)})
            rows.append(row)
        return rows
    if isinstance(data, dict):
        for key in ("results", "rows", "cases"):
            if isinstance(data.get(key), list):
                return _rows(data[key])
        return [{k: v for k, v in data.items() if _scalar(v)}]
    if isinstance(data, list):
        return [
            {k: v for k, v in row.items() if _scalar(v)} for row in data if isinstance(row, dict)
        ]
    return []


def _scalar(value) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _meta(data) -> dict:
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if _scalar(v) and k not in ("benchmarks", "results", "rows", "cases")
    }


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return _cell("" if value is None else value)


def bar_chart_svg(labels: list[str], values: list[float], metric: str) -> str:
    bar_h, gap, label_w, chart_w = 22, 8, 260, 420
    top = 28
    height = top + len(values) * (bar_h + gap) + 8
    width = label_w + chart_w + 90
    peak = max((abs(v) for v in values), default=1) or 1
    parts = [
        f'<svg class="klog-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" role="img" aria-label="{html.escape(metric)} by benchmark">',
        f'<text class="klog-tick" x="{label_w}" y="16">{html.escape(metric)}</text>',
    ]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + i * (bar_h + gap)
        w = max(1.0, abs(value) / peak * chart_w)
        short = label if len(label) <= 38 else label[:36] + "…"
        parts += [
            f"<g><title>{html.escape(label)}: {value:.6g}</title>",
            f'<text class="klog-tick" x="{label_w - 8}" y="{y + bar_h / 2 + 4}" '
            f'text-anchor="end">{html.escape(short)}</text>',
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="3" fill="#8ecae6" '
            'stroke="#37474f"/>',
            f'<text class="klog-tick" x="{label_w + w + 6:.1f}" y="{y + bar_h / 2 + 4}">'
            f"{value:.4g}</text></g>",
        ]
    parts.append("</svg>")
    return "".join(parts)


def benchmarks_page(repo: Path) -> str:
    results = sorted((repo / "benchmarks" / "results").glob("*.json"))
    out = [
        "# Benchmarks",
        "",
        "Generated from `benchmarks/results/*.json` when the site was built. The benchmarks "
        "measure their baselines in the same run and report ratios against them, so figures "
        "from different machines are comparable only as ratios.",
        "",
    ]
    if not results:
        out += [
            '!!! note "Not yet measured"',
            "",
            "    No results are checked in yet (`benchmarks/results/` has no `.json` file). "
            "This page fills itself in, with a table and a chart per results file, the next "
            "time the site is built after they land.",
            "",
        ]
        return "\n".join(out)
    for path in results:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            out += [f"## `{path.name}`", "", f"Not readable as JSON: {exc}.", ""]
            continue
        rows = _rows(data)
        out += [f"## `{path.name}`", ""]
        meta = _meta(data)
        if meta:
            out += ["| | |", "| --- | --- |"]
            out += [f"| {_cell(k)} | {_fmt(v)} |" for k, v in meta.items()]
            out.append("")
        if not rows:
            out += ["No rows in this file.", ""]
            continue
        columns: list[str] = []
        for row in rows:
            columns += [k for k in row if k not in columns]
        out += [
            '<div class="klog-scroll" markdown="1">',
            "",
            "| " + " | ".join(_cell(c) for c in columns) + " |",
            "| "
            + " | ".join(
                "---:" if all(_number(r.get(c)) for r in rows if c in r) else "---" for c in columns
            )
            + " |",
        ]
        out += ["| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |" for r in rows]
        out += ["", "</div>", ""]
        numeric = [c for c in columns if all(_number(r.get(c)) for r in rows)]
        preferred = [
            c for c in ("ratio", "speedup", "throughput_mb_s", "mb_per_s", "mean") if c in numeric
        ]
        metric = (preferred or numeric or [None])[0]
        if metric:
            label_key = next((c for c in columns if c not in numeric), None)
            labels = (
                [str(r.get(label_key, i)) for i, r in enumerate(rows)]
                if label_key
                else [str(i) for i in range(len(rows))]
            )
            chart = bar_chart_svg(labels, [float(r[metric]) for r in rows], metric)
            out += [f'<div class="klog-diagram" markdown="0">{chart}</div>', ""]
    return "\n".join(out)


# --- the protocol transcript ------------------------------------------------------------------


def _example_requests(log_dir: str) -> list[tuple[str, str, dict, int]]:
    from reference_impl.records import SimpleRecord, build_record_batch

    t0 = 1_700_000_000_000

    def batch(base_offset: int, epoch: int) -> str:
        records = [
            SimpleRecord(key=b"k", value=b"hello", timestamp=t0),
            SimpleRecord(value=b"world", timestamp=t0 + 1),
        ]
        raw = build_record_batch(records, base_offset=base_offset, partition_leader_epoch=epoch)
        return base64.b64encode(raw).decode("ascii")

    config = {"segment_bytes": 1048576, "segment_ms": 604800000}
    return [
        (
            "open an empty directory: one empty segment",
            "open",
            {"dir": log_dir, "config": config},
            t0,
        ),
        (
            "a leader append of a two-record batch: offsets assigned from the log end offset",
            "append",
            {"batches": [batch(0, -1)], "assign_offsets": True, "leader_epoch": 5},
            t0 + 10,
        ),
        (
            "read it back: the batch as stored, leader epoch 5 stamped in its header",
            "read",
            {"start_offset": 0, "max_bytes": 4096, "max_offset": None, "min_one_message": True},
            t0 + 20,
        ),
        (
            "a follower append keeps the offsets and the epoch it is given (2 and 3, epoch 5)",
            "append",
            {"batches": [batch(2, 5)], "assign_offsets": False, "leader_epoch": 5},
            t0 + 30,
        ),
        (
            "a refusal: reading past the log end offset",
            "read",
            {"start_offset": 99, "max_bytes": 4096, "max_offset": None, "min_one_message": True},
            t0 + 40,
        ),
        (
            "roll a new segment at the log end offset",
            "roll",
            {"expected_next_offset": None},
            t0 + 50,
        ),
        (
            "the first offset with a timestamp at or after t0 + 1",
            "fetch_offset_by_timestamp",
            {"timestamp": t0 + 1},
            t0 + 60,
        ),
        (
            "truncate to offset 2: the second batch and its segment go",
            "truncate_to",
            {"offset": 2},
            t0 + 70,
        ),
        ("flush: the recovery point moves to the log end offset", "flush", {}, t0 + 80),
        ("the state the harness compares", "state", {}, t0 + 90),
        ("close: indexes trimmed, checkpoints written", "close", {}, t0 + 100),
    ]


def capture_transcript() -> list[str]:
    """Drive ``python -m conformance.testee`` (what ``klogspec testee`` runs) through the
    subprocess driver of the harness; the exchanged lines, each exchange after a comment."""
    from conformance.transport import resolve_impl

    spec = resolve_impl("reference", transport="subprocess")
    with tempfile.TemporaryDirectory(prefix="klogspec-docs-") as tmp:
        steps = _example_requests(str(Path(tmp) / "logs" / "orders-0"))
        driver = spec.driver(timeout=30)
        try:
            driver.hello(0)
            for _, op, args, now in steps:
                driver.request(op, args, now)
            transcript = list(driver.transcript)
        finally:
            driver.shutdown()
    comments = ["hello first: the testee names itself and claims its optional features"]
    comments += [comment for comment, *_ in steps]
    if len(transcript) != len(comments):
        raise RuntimeError(
            f"the transcript has {len(transcript)} exchanges, expected {len(comments)}"
        )
    lines = []
    for comment, (request, response) in zip(comments, transcript, strict=True):
        lines.append(f"# {comment}")
        for direction, message in (("→", request), ("←", response)):
            text = json.dumps(message, separators=(",", ":")).replace(tmp, "/tmp/klogspec-demo")
            lines.append(f"{direction} {text}")
    return lines


def _schema_fields(schema: dict, node: dict) -> str:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    props = node.get("properties", {})
    if not props:
        return "(none)"
    required = set(node.get("required", []))
    return ", ".join(f"`{k}`" if k in required else f"`{k}`?" for k in props)


def operations_table(repo: Path) -> str:
    """One row per operation of the protocol, from conformance/schemas/protocol.schema.json."""
    path = repo / "conformance" / "schemas" / "protocol.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    out = ["| Operation | Arguments | Result |", "| --- | --- | --- |"]
    for op in defs["op"]["enum"]:
        args = _schema_fields(schema, defs.get(f"{op}_args", {}))
        result = _schema_fields(schema, defs.get(f"{op}_result", {}))
        out.append(f"| `{op}` | {args} | {result} |")
    out += ["", "`?` marks an optional field."]
    return "\n".join(out)


def features_table() -> str:
    """The optional features a testee may claim (conformance.protocol.FEATURES)."""
    from conformance.protocol import FEATURES

    out = ["| Feature | Claim it when your implementation supports ... |", "| --- | --- |"]
    out += [f"| `{name}` | {_cell(text)} |" for name, text in FEATURES.items()]
    return "\n".join(out)
