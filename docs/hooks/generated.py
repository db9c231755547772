"""Pages made from the project itself when the site is built: the CLI reference (from the
click commands), the requirement table (from spec/requirements.yaml and the sources that
cite each ID), the benchmarks page (from benchmarks/results/*.json) and the protocol
transcript (a real session with ``klogspec testee``)."""

from __future__ import annotations

import base64
import html
import json
import math
import re
import tempfile
import tomllib
from pathlib import Path

import cli_examples
import click
from decoded_examples import decoded_dumps_section
from kafka_baselines import kafka_first, kafka_rows, kafka_section, misses_section
from spec_pages import Requirement

# --- CLI reference ------------------------------------------------------------------------------


def plugin_commands(repo: Path) -> dict[str, str]:
    """``klogspec.commands`` entry points as the checkout's pyproject.toml declares them."""
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
    """The commands of ``klogspec`` in this checkout: the group's own, then the plugins its
    pyproject.toml registers (the installed entry-point metadata may be older or newer than
    the checkout, so it is not asked)."""
    from klogspec.cli import main

    ctx = click.Context(main, info_name="klogspec")
    commands = {
        name: click.Group.get_command(main, ctx, name)
        for name in click.Group.list_commands(main, ctx)
    }
    for name, target in plugin_commands(repo).items():
        commands.setdefault(name, _load(target))
    return main, {k: v for k, v in sorted(commands.items()) if v is not None}


def _param_row(param: click.Parameter, ctx: click.Context) -> str:
    if isinstance(param, click.Argument):
        name = f"`{param.human_readable_name}`"
        kind = "argument" + (", repeatable" if param.nargs == -1 else "")
        kind += ", required" if param.required else ", optional"
        return f"| {name} | {kind} | {_type_name(param)} | |"
    record = param.get_help_record(ctx)
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    help_text = re.sub(r"\s*\[[^\]]*default[^\]]*\]\s*$", "", record[1] if record else "")
    default = ""
    value = param.get_default(ctx, call=False)
    is_flag = isinstance(param, click.Option) and param.is_flag
    # click 8.2+ marks "no default" with a sentinel object of its own
    scalar = isinstance(value, str | int | float) and not isinstance(value, bool)
    if not is_flag and scalar and value != "":
        default = f"`{value}`"
    return f"| {names} | {_cell(html.escape(help_text, quote=False))} | {_type_name(param)} | {default} |"


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
    text = html.escape(text or "", quote=False)  # help text is plain text: <command> is not a tag
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].strip() == "\b":
            out.append("```text\n" + "\n".join(lines[1:]) + "\n```")
        else:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def _command_section(
    name: str, command: click.Command, parent: click.Context, level: int, examples=()
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
            '<div class="klog-options" markdown="1">',
            "",
            "| Argument or option | Meaning | Type | Default |",
            "| --- | --- | --- | --- |",
            *[_param_row(p, ctx) for p in params],
            "",
            "</div>",
            "",
        ]
    for one in examples:  # real runs, checked by tests/test_cli_examples.py
        out += cli_examples.markdown(one)
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
        "group `klogspec.cli:main` and the commands other packages register under the "
        "entry-point group `klogspec.commands` (declared in `pyproject.toml`). Each command "
        "has a real example, run on small partitions (`orders-0`, closed cleanly, "
        "`orders-1`, crashed mid-append, and the compacted `prices-0`) and checked by the tests "
        "to print what it shows.",
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
    examples = cli_examples.load()
    for name, command in commands.items():
        out += _command_section(name, command, ctx, 2, cli_examples.of_command(examples, name))
    out += decoded_dumps_section()
    return "\n".join(out + _dump_vs_kafka(repo))


def _dump_vs_kafka(repo: Path) -> list[str]:
    """One file dumped by Kafka's kafka-dump-log and by ``klogspec dump`` (real output, kept in
    docs/hooks/cli-dump-vs-kafka.md), then the dump differential's list of format differences
    (conformance/dump_differential.py's FORMAT_DIFFERENCES)."""
    from conformance.dump_differential import FORMAT_DIFFERENCES

    text = (repo / "docs" / "hooks" / "cli-dump-vs-kafka.md").read_text(encoding="utf-8")
    rows = [f"| {what} | {_cell(why)} |" for what, why in FORMAT_DIFFERENCES.items()]
    return ["", text, "| What | How it differs |", "| --- | --- |", *rows, ""]


def decode_differences_table() -> str:
    """The ``--decode`` differential's list of format differences, for docs/internal-topics.md
    (conformance/decode_differential.py's DECODE_FORMAT_DIFFERENCES)."""
    from conformance.decode_differential import DECODE_FORMAT_DIFFERENCES

    rows = [f"| {what} | {_cell(why)} |" for what, why in DECODE_FORMAT_DIFFERENCES.items()]
    return "\n".join(["| What | How it differs, and how it is compared |", "| --- | --- |", *rows])


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


def scenario_citations(repo: Path, ids: set[str]) -> dict[str, list[str]]:
    """For each ID, the conformance scenarios and families (conformance/scenarios/*.yaml)
    that name it."""
    import yaml

    pattern = re.compile(r"(?<![\w-])([A-Z]+(?:-[A-Z]+)?-\d+)(?![\w-])")
    found: dict[str, list[str]] = {}
    for path in sorted((repo / "conformance" / "scenarios").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key in ("scenarios", "families"):
            for entry in data.get(key) or []:
                if not isinstance(entry, dict) or "id" not in entry:
                    continue
                name = str(entry["id"]) + (".*" if key == "families" else "")
                for rid in sorted(set(pattern.findall(yaml.safe_dump(entry))) & ids):
                    found.setdefault(rid, []).append(name)
    return found


def _names(items: list[str], limit: int = 3) -> str:
    """Names one a line (they never break mid-word), at most ``limit`` of them."""
    shown = "<br>".join(
        "<code>" + html.escape(item).replace(".", ".<wbr>") + "</code>" for item in items[:limit]
    )
    return shown + (f"<br>and {len(items) - limit} more" if len(items) > limit else "")


def requirement_table_page(repo: Path, requirements: list[Requirement]) -> str:
    ids = {r.id for r in requirements}
    code = citations(repo, ids, "reference_impl")
    tests = citations(repo, ids, "tests")
    scenarios = scenario_citations(repo, ids)
    counts = {
        level: sum(r.level == level for r in requirements) for level in ("MUST", "SHOULD", "MAY")
    }
    out = [
        "---",
        "hide: [navigation, toc]",
        "---",
        "",
        "# Requirements",
        "",
        f"All {len(requirements)} requirements of the spec ({counts['MUST']} MUST, "
        f"{counts['SHOULD']} SHOULD, {counts['MAY']} MAY), generated from "
        "`spec/requirements.yaml` when the site was built. Each ID links to its definition. "
        "*Scenarios* are the conformance scenarios (`.*`: families of them) that check it, "
        "*Reference code* the modules of `reference_impl` that cite it, and *Tests* the number "
        "of the project's test files that name it.",
        "",
        '<div class="klog-scroll klog-wide" markdown="1">',
        "",
        "| ID | Level | Rule | Scenarios | Reference code | Tests |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for r in requirements:
        modules = [
            Path(p).relative_to("reference_impl").with_suffix("").as_posix()
            for p in code.get(r.id, [])
        ]
        out.append(
            f"| [{r.id}]({r.site_page}#{r.id}) | {r.level} | {_cell(r.rule)} | "
            f"{_names(scenarios.get(r.id, []))} | {_names(modules, 4)} | "
            f"{len(tests.get(r.id, []))} |"
        )
    out += ["", "</div>", ""]
    return "\n".join(out)


# --- benchmarks -----------------------------------------------------------------------------------

STATUS_COLORS = {"PASS": "#a7c957", "MISS": "#f4a261", "ERROR": "#e76f51"}
NEUTRAL = "#8ecae6"


def load_figures(results: Path) -> tuple[dict, list[dict]]:
    """The run and its figures: ``latest.json`` when present, else every figure file
    (``<name>.json``, schema 1 of benchmarks/harness.py)."""
    latest = results / "latest.json"
    if latest.is_file():
        data = json.loads(latest.read_text(encoding="utf-8"))
        return data.get("run") or {}, list(data.get("figures") or [])
    figures = []
    for path in sorted(results.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "name" in data and "ours" in data:
            figures.append(data)
    run = max(
        (f.get("run") or {} for f in figures), key=lambda r: r.get("timestamp", ""), default={}
    )
    return run, figures


def _value(value, unit: str) -> str:
    if value is None:
        return "–"
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"
    return f"{text}\u00a0{unit}" if unit else text


def _run_text(run: dict) -> str:
    if not run:
        return "unknown run"
    commit = (run.get("commit") or "")[:10] or "unknown commit"
    parts = [
        f"{run.get('timestamp', '?')}",
        f"commit `{commit}`" + (" (with local changes)" if run.get("dirty") else ""),
        f"{run.get('mode', '?')} mode",
    ]
    machine = []
    if run.get("cpus"):
        machine.append(f"{run['cpus']} CPUs")
    if run.get("memory_bytes"):
        machine.append(f"{run['memory_bytes'] / 2**30:.0f} GiB RAM")
    if run.get("python"):
        machine.append(f"Python {run['python']}")
    if run.get("platform"):
        machine.append(f"`{run['platform']}`")
    return ", ".join(parts) + (f"; {', '.join(machine)}" if machine else "")


CHART_CHAR_W = 6.7  # px per character of the charts' 11 px monospace labels (generous)
CHART_W = 360  # the charts' width: 1:1 on a 390 px phone, so 11 px text stays 11 px
LEGEND = [
    (STATUS_COLORS["PASS"], "meets its target"), (STATUS_COLORS["MISS"], "misses it"),
    (NEUTRAL, "no target: reported only"),
]  # fmt: skip


def _decades(values: list[float]) -> tuple[float, float]:
    """The powers of ten around ``values`` (and 1): the log axis's ends."""
    positive = [v for v in values if v > 0] + [1.0]
    return 10 ** math.floor(math.log10(min(positive))), 10 ** math.ceil(math.log10(max(positive)))


def _legend(parity: str) -> tuple[list[str], int]:
    """The legend's SVG and its height: the bar colours, the target tick, the parity line."""
    parts, x, y = [], 8.0, 14
    items = [(f'<rect x="{{x}}" y="{{y}}" width="12" height="10" rx="2" fill="{c}" '
              'stroke="#37474f"/>', text) for c, text in LEGEND]  # fmt: skip
    items += [
        ('<line x1="{x6}" x2="{x6}" y1="{y}" y2="{y10}" stroke="#d62828" stroke-width="2"/>',
         "target"),
        ('<line x1="{x6}" x2="{x6}" y1="{y}" y2="{y10}" stroke="#37474f" stroke-dasharray="3 2"/>',
         parity),
    ]  # fmt: skip
    for shape, text in items:
        width = 18 + CHART_CHAR_W * len(text)
        if x + width > CHART_W:
            x, y = 8.0, y + 16
        parts.append(shape.format(x=x, y=y - 9, x6=x + 6, y10=y + 1))
        parts.append(f'<text class="klog-tick" x="{x + 16}" y="{y}">{html.escape(text)}</text>')
        x += width + 10
    return parts, y + 8


def bar_chart_svg(
    rows: list[tuple[str, float, float | None, str, str]], title: str, parity: str = "1"
) -> str:
    """Bars on a log scale from the parity line (a ratio of 1), one row per figure: its
    label on a line of its own, then the bar; (label, value, marker or None, colour, value
    text) per row, the marker (a target) a red tick. Drawn CHART_W wide, so on a phone the
    text keeps its size; a legend on top, the decades marked."""
    legend, top = _legend(parity)
    lo, hi = _decades([v for _, v, *_ in rows] + [m for _, _, m, *_ in rows if m])
    left, scale = 18.0, (CHART_W - 70.0) / math.log10(hi / lo)  # room for "0.01" at the left

    def at(value: float) -> float:
        return left + math.log10(max(value, lo) / lo) * scale

    height = top + 22 + len(rows) * 34
    parts = [
        f'<svg class="klog-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CHART_W} '
        f'{height}" width="{CHART_W}" role="img" aria-label="{html.escape(title)}, log scale">',
        f"<title>{html.escape(title)}, log scale</title>", *legend,
    ]  # fmt: skip
    for power in range(round(math.log10(lo)), round(math.log10(hi)) + 1):
        x = at(10.0**power)
        line = ' stroke-width="1.2" stroke-dasharray="3 2"' if power == 0 else ' stroke-width="0.5"'
        parts += [
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top + 6}" y2="{height}" stroke="#90a4ae"{line}/>',
            f'<text class="klog-tick" x="{x:.1f}" y="{top + 2}" text-anchor="middle">'
            f"{10.0**power:g}</text>",
        ]
    for i, (label, value, marker, color, text) in enumerate(rows):
        y = top + 22 + i * 34
        start, end = sorted((at(1.0), at(value)))
        text_x = max(end, at(1.0)) + 5
        if marker:
            tick = at(marker)
            if text_x - 4 <= tick <= text_x + CHART_CHAR_W * len(text) + 4:
                text_x = tick + 6  # the value after the target tick, never under it
        parts += [
            f"<g><title>{html.escape(label)}: {html.escape(text)}</title>",
            f'<text class="klog-tick" x="8" y="{y + 10}">{html.escape(label)}</text>',
            f'<rect x="{start:.1f}" y="{y + 15}" width="{max(1.0, end - start):.1f}" '
            f'height="12" rx="2" fill="{color}" stroke="#37474f"/>',
            f'<text class="klog-tick klog-value" x="{text_x:.1f}" y="{y + 25}">'
            f"{html.escape(text)}</text>",
        ]
        if marker:
            parts.append(f'<line x1="{at(marker):.1f}" x2="{at(marker):.1f}" y1="{y + 12}" '
                         f'y2="{y + 30}" stroke="#d62828" stroke-width="2"/>')  # fmt: skip
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _label(figure: dict) -> str:
    """A chart row's label: the figure, and its path when it is the readable one."""
    pure = figure.get("path", "compiled") != "compiled"
    return f"{figure['name']} (pure)" if pure else figure["name"]


def _target_text(figure: dict) -> str:
    """The target, and the second way to meet it when the figure has one."""
    text = (figure.get("target") or {}).get("text", "")
    alternative = figure.get("alternative")
    if alternative:
        other = (figure.get("details") or {}).get(alternative["on"])
        text += f" or {alternative['text']}" + ("" if other is None else f" ({other:.2f})")
    return text.replace(">=", "≥").replace("<=", "≤").replace(" ", "\u00a0")


def _corpus_before_after(figures: list[dict]) -> list[str]:
    """Issue 14's corpus figure: verify on the real-broker corpus, readable path (before
    the compiled kernels) and compiled (after)."""
    corpus = {f.get("path", "compiled"): f for f in figures if f["name"] == "verify-corpus"}
    before, after = corpus.get("pure"), corpus.get("compiled")
    if not (before and after and before.get("ours") and after.get("ours")):
        return []
    return [
        f"**Real-broker corpus** (small KRaft and consumer-offsets batches): `klogspec verify` "
        f"runs at {_value(before['ours'], 'MiB/s')} on the readable path and "
        f"{_value(after['ours'], 'MiB/s')} on the compiled kernels "
        f"({after['ours'] / before['ours']:.1f}x).",
        "",
    ]


def benchmarks_page(repo: Path) -> str:
    results = repo / "benchmarks" / "results"
    out = [
        "---",
        "hide: [navigation]",
        "---",
        "",
        "# Benchmarks",
        "",
        "Generated from `benchmarks/results/*.json` when the site was built (`benchmarks/run` "
        "writes them). Each figure compares *ours* with a *baseline* measured in the same run "
        "on the same bytes, and is judged against its target either on the ratio "
        "(ours / baseline) or on our own value, so figures from different machines compare "
        "as ratios.",
        "",
    ]
    run, figures = load_figures(results) if results.is_dir() else ({}, [])
    # Apache Kafka's own code first: the comparison users care about (issue 25)
    figures.sort(key=kafka_first)
    if not figures:
        out += [
            '!!! note "Not yet measured"',
            "",
            "    No results are checked in yet (`benchmarks/results/` has no figure). This page "
            "fills itself in, with the figures and their charts, the next time the site is "
            "built after they land.",
            "",
        ]
        return "\n".join(out)
    counts: dict[str, int] = {}
    for f in figures:
        counts[f.get("status") or "?"] = counts.get(f.get("status") or "?", 0) + 1
    out += [
        f"**Latest run**: {_run_text(run)}. "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        + ".",
        "",
    ]
    kafka_chart_rows = kafka_rows(figures, _value, STATUS_COLORS, NEUTRAL)
    kafka_chart = (
        bar_chart_svg(kafka_chart_rows, "ours / Kafka warm", "1: as fast as Kafka")
        if kafka_chart_rows
        else ""
    )
    out += kafka_section(figures, _value, _cell, kafka_chart)
    out += [
        "## Every figure",
        "",
        '<div class="klog-scroll" markdown="1">',
        "",
        "| Figure | What | Path | Ours | Baseline | Ratio | Target | Status |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for f in figures:
        unit = f.get("unit", "")
        ratio = f.get("ratio")
        target = _target_text(f)
        status = f.get("status", "")
        note = f" ({_cell(f['note'])})" if f.get("note") else ""
        out.append(
            f"| [`{f['name']}`](#{f['name']}) | {_cell(f.get('title', ''))} "
            f"| {f.get('path', 'compiled')} "
            f"| {_value(f.get('ours'), unit)} "
            f"| {_value(f.get('baseline'), unit)} | {'–' if ratio is None else f'{ratio:.2f}'} "
            f"| {_cell(target)} | **{status}**{note} |"
        )
    out += ["", "</div>", ""]
    out += _corpus_before_after(figures)
    ratio_rows = [
        (
            _label(f),
            f["ratio"],
            (f.get("target") or {}).get("value")
            if (f.get("target") or {}).get("on") == "ratio"
            else None,
            STATUS_COLORS.get(f.get("status"), NEUTRAL),
            f"{f['ratio']:.2f}",
        )
        for f in figures
        if f.get("ratio") is not None and (f.get("target") or {}).get("on", "ratio") == "ratio"
    ]
    own_rows = [
        (
            _label(f),
            f["ours"] / f["target"]["value"],
            1.0,
            STATUS_COLORS.get(f.get("status"), NEUTRAL),
            f"{_value(f['ours'], f.get('unit', ''))} of {_value(f['target']['value'], f['target'].get('unit') or f.get('unit', ''))}",
        )
        for f in figures
        if f.get("ours") is not None
        and (f.get("target") or {}).get("on") == "ours"
        and f["target"].get("value")
    ]
    if ratio_rows:
        out += [
            "## Ratios",
            "",
            "Ours / baseline for the figures judged on their ratio, labelled with the table's "
            "names, on a log scale: a bar goes right of the dashed line (1, as fast as the "
            "baseline) when ours is faster, left when slower; the red tick is the target.",
            "",
            f'<div class="klog-diagram" markdown="0">{bar_chart_svg(ratio_rows, "ours / baseline", "1: as fast as the baseline")}</div>',
            "",
        ]
    if own_rows:
        out += [
            "## Limits",
            "",
            "Our own value as a share of its limit, for the figures judged on it (a wall time, "
            "a peak RSS), on a log scale: left of the red tick (the limit) meets the target.",
            "",
            f'<div class="klog-diagram" markdown="0">{bar_chart_svg(own_rows, "ours / limit", "1: the limit")}</div>',
            "",
        ]
    out += misses_section(repo)
    out += ["## What each figure measures", ""]
    for f in figures:
        if f.get("path", "compiled") != "compiled":
            continue  # the same figure on the readable path: described once
        out += [
            f"### {f.get('title', f['name'])} {{ #{f['name']} }}",
            "",
            f"- **ours**: {_cell(f.get('ours_label', ''))}: {_value(f.get('ours'), f.get('unit', ''))}",
            f"- **baseline**: {_cell(f.get('baseline_label', ''))}: "
            f"{_value(f.get('baseline'), f.get('unit', ''))}",
        ]
        if f.get("note"):
            out.append(f"- **note**: {_cell(f['note'])}")
        frun = f.get("run") or {}
        if frun and frun.get("timestamp") != run.get("timestamp"):
            out.append(f"- **measured**: {_run_text(frun)}")
        out.append("")
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
