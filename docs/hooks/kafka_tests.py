"""The one page of Kafka's tests: the catalogue (spec/behaviour/kafka-tests.md) with a column
*Our tests* added when the site is built, from the test sources (scripts/kafka_test_map.py
finds them), so the map cannot drift from the code."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

PAGE = "spec/behaviour/kafka-tests.md"
HEADER = "| # | Kafka test | Requirements | Note |"
NOTE = (
    "On this site each table has a column *Our tests*: the tests of this project that restate "
    "each Kafka test, found in the test sources when the site was built "
    "(`scripts/kafka_test_map.py`)."
)


def _map(repo: Path):
    scripts = str(repo / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    import kafka_test_map

    return kafka_test_map


def _cell(found: list[tuple[str, list[str], str]]) -> str:
    names: list[str] = []
    for _kafka, ours, why in found:
        if not ours and why == "**missing**":
            names.append("**missing**")
        for test in ours:
            if test not in names:
                names.append(test)
    if not names:
        return "–"
    return "<br>".join(
        n
        if n.startswith("**")
        else "<code>" + re.sub(r"(/|::|_)", r"\1<wbr>", html.escape(n)) + "</code>"
        for n in names
    )


def add_our_tests(markdown: str, repo: Path) -> str:
    """Every catalogue table gets the column *Our tests* after *Requirements*."""
    ktm = _map(repo)
    out: list[str] = []
    noted = in_table = False
    for line in markdown.splitlines():
        if line.startswith("## ") and not noted:
            out += [NOTE, ""]
            noted = True
        if in_table and not line.startswith("|"):
            out += ["", "</div>"]
            in_table = False
        if line.strip() == HEADER:
            out += ['<div class="klog-scroll klog-tests" markdown="1">', ""]
            out.append("| # | Kafka test | Requirements | Our tests | Note |")
            in_table = True
            continue
        if re.fullmatch(r"\| --- \| --- \| --- \| --- \|", line.strip()):
            out.append("| --- | --- | --- | --- | --- |")
            continue
        row = ktm.ROW.match(line)
        if row and ktm.KAFKA_NAME.search(row["tests"]):
            found = ktm.row_tests(row["tests"], row["reqs"], row["note"])
            out.append(
                f"| {row['num']}| {row['tests']}| {row['reqs']}| {_cell(found)} | {row['note']}|"
            )
            continue
        out.append(line)
    if in_table:
        out += ["", "</div>"]
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")
