"""The benchmarks page's first sections (generated.py's ``benchmarks_page``): the figures
against Apache Kafka's own code (``benchmarks/bench_kafka_jvm.py``, the ``kafka-*``
figures), warm and JIT-cold, with their chart; and the analysis of the misses, taken from
``benchmarks/README.md``'s "What bounds the misses" so that it is written once."""

from __future__ import annotations

import re
from pathlib import Path

KAFKA_PREFIX = "kafka-"
MISSES_HEADING = "## What bounds the misses"
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def kafka_first(figure: dict) -> int:
    """A sort key: the Kafka baselines, then the other figures that compare with Kafka (the
    conformance testee's fresh-JVM recovery), then the rest."""
    name = figure["name"]
    return 0 if name.startswith(KAFKA_PREFIX) else 1 if "kafka" in name else 2


def kafka_figures(figures: list[dict]) -> list[dict]:
    """The Kafka baselines, in report order (compiled, then pure, per figure)."""
    return [f for f in figures if f["name"].startswith(KAFKA_PREFIX)]


def kafka_rows(figures: list[dict], value, status_colors: dict, neutral: str) -> list[tuple]:
    """The chart's rows: each Kafka figure's warm ratio, coloured by its status."""
    rows = []
    for f in kafka_figures(figures):
        if f.get("ratio") is None:
            continue
        label = f["name"] if f.get("path", "compiled") == "compiled" else f"{f['name']} (pure)"
        target = (f.get("target") or {}).get("value")
        color = status_colors.get(f.get("status"), neutral)
        rows.append((label, f["ratio"], target, color, f"{f['ratio']:.2f}"))
    return rows


def kafka_section(figures: list[dict], value, cell, chart: str) -> list[str]:
    """The section's Markdown: what is compared, a table with Kafka warm and cold, the chart."""
    found = kafka_figures(figures)
    if not found:
        return []
    out = [
        "## Against Apache Kafka",
        "",
        "Apache Kafka 4.4.0's own classes (`UnifiedLog`, `LogLoader`, `Cleaner`, "
        "`kafka-dump-log`) from the release jars, on the same files in the same run "
        "(`benchmarks/kafka_bench/`). Kafka runs **warm**: its JVM does the job untimed "
        "first, as a broker that has been up a while does; its first, JIT-cold run is "
        "beside it. Both sides are CPU seconds of their process (the JVM's JIT and GC "
        "threads included); `kafka-dump` is two whole processes, as a user runs them, a "
        "JVM's start included (so it has no warm figure). A ratio above 1 is faster than "
        "Kafka.",
        "",
        '<div class="klog-scroll" markdown="1">',
        "",
        "| Figure | Path | Ours | Kafka warm | Ratio | Kafka JIT-cold | Cold ratio | Target "
        "| Status |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for f in found:
        details = f.get("details") or {}
        cold = details.get("kafka_cold_mib_s")
        cold_ratio = details.get("cold_ratio")
        target = (f.get("target") or {}).get("text", "").replace(">=", "≥")
        note = f" ({cell(f['note'])})" if f.get("note") else ""
        ratio = f.get("ratio")
        out.append(
            f"| [`{f['name']}`](#{f['name']}) | {f.get('path', 'compiled')} "
            f"| {value(f.get('ours'), f.get('unit', ''))} "
            f"| {value(f.get('baseline'), f.get('unit', ''))} "
            f"| {'–' if ratio is None else f'{ratio:.2f}'} "
            f"| {value(cold, f.get('unit', '')) if cold else '–'} "
            f"| {'–' if cold_ratio is None else f'{cold_ratio:.2f}'} "
            f"| {cell(target)} | **{f.get('status', '')}**{note} |"
        )
    out += ["", "</div>", ""]
    if chart:
        out += [
            "Ours / Kafka warm, on a log scale: right of the dashed line (1) is faster than "
            "Kafka; the red tick is the target.",
            "",
            f'<div class="klog-diagram" markdown="0">{chart}</div>',
            "",
        ]
    return out


def misses_section(repo: Path) -> list[str]:
    """benchmarks/README.md's "What bounds the misses", links reduced to their text (the
    README's anchors are not this page's), headings one level down."""
    readme = repo / "benchmarks" / "README.md"
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8")
    if MISSES_HEADING not in text:
        return []
    body = text.split(MISSES_HEADING, 1)[1].split("\n## ", 1)[0]
    body = _LINK.sub(r"\1", body).replace("\n### ", "\n#### ")
    return ["## What bounds the misses", "", body.strip(), ""]
