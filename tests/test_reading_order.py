"""The reference's reading order (docs/reading-order.md) and its modules' docstrings.

Every module of reference_impl is on the page, every file the page names exists, the
reading order goes bottom up as the page says, every module's docstring points at the
spec page it implements and at its Kafka counterpart, and no module of the log, the
tools or the conformance harness outgrows what one sitting reads (the guideline is about
400 lines, as h11's), nor any function of the harness one screen (60 lines).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reading-order.md"
MODULES = sorted(
    p.relative_to(ROOT).as_posix()
    for p in (ROOT / "reference_impl").rglob("*.py")
    if p.name != "__init__.py"
)
FILE = re.compile(r"`(reference_impl/[\w/]+\.py)`")
SPEC_PAGE = re.compile(r"spec/(?:formats|behaviour)/(?:[\w-]+/)?[\w-]+\.md|spec/README\.md")
KAFKA_SOURCE = re.compile(r"\b\w+\.(?:java|scala)\b")
MAX_MODULE_LINES = 420  # ~400: a little room before a module must be split
MAX_FUNCTION_LINES = 60  # one screen, its docstring included
SIZED_PACKAGES = ("reference_impl", "klogspec", "conformance")
# the packages held to MAX_FUNCTION_LINES; reference_impl and klogspec join once their
# longest functions are split (issue 24's targets)
SHORT_FUNCTION_PACKAGES = ("conformance",)


def page_text() -> str:
    return PAGE.read_text(encoding="utf-8")


def reading_order() -> list[str]:
    """The files of the first table, in order."""
    section = page_text().split("## The reading order", 1)[1].split("\n## ", 1)[0]
    return [FILE.search(line).group(1) for line in section.splitlines() if FILE.search(line)]


def test_every_file_on_the_page_exists():
    named = set(FILE.findall(page_text()))
    assert named, "the page names no file"
    assert sorted(n for n in named if not (ROOT / n).is_file()) == []


def test_every_module_is_on_the_page():
    assert sorted(set(MODULES) - set(FILE.findall(page_text()))) == []


def test_the_reading_order_goes_bottom_up():
    """records/batch -> files -> offset index -> segment -> roll -> log -> loader -> producer
    state, about ten files."""
    order = reading_order()
    assert 8 <= len(order) <= 12
    milestones = [
        "records/batch.py", "formats/file_naming.py", "log/offset_index.py", "log/segment.py",
        "log/roll.py", "log/unified_log.py", "log/loader.py", "log/producer_state.py",
    ]  # fmt: skip
    positions = [order.index(f"reference_impl/{m}") for m in milestones]
    assert positions == sorted(positions)


@pytest.mark.parametrize("module", MODULES)
def test_docstring_points_at_its_spec_page_and_kafka(module):
    doc = ast.get_docstring(ast.parse((ROOT / module).read_text(encoding="utf-8"))) or ""
    pages = SPEC_PAGE.findall(doc)
    assert pages, f"{module}: no spec/... page in its docstring"
    assert [p for p in pages if not (ROOT / p).is_file()] == []
    assert KAFKA_SOURCE.search(doc) or "kafka-log-spec addition" in doc, (
        f"{module}: its docstring names no Kafka source file"
    )


def test_no_module_outgrows_one_sitting():
    sizes = {
        p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for package in SIZED_PACKAGES
        for p in (ROOT / package).rglob("*.py")
    }
    assert {m: n for m, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def function_lengths(path: Path, root: Path = ROOT) -> dict[str, int]:
    """``module:line name`` -> the lines of each function and method of a module, nested
    ones too, from its ``def`` to its last line (a command's option decorators are
    declarations, not reading)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name}": node.end_lineno
        - node.lineno
        + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_no_function_outgrows_one_screen():
    lengths = {
        name: n
        for package in SHORT_FUNCTION_PACKAGES
        for p in sorted((ROOT / package).rglob("*.py"))
        for name, n in function_lengths(p).items()
    }
    assert len(lengths) > 100
    assert {f: n for f, n in lengths.items() if n > MAX_FUNCTION_LINES} == {}


def test_function_lengths_count_nested_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("@staticmethod\ndef f():\n    def g():\n        pass\n    return g\n")
    assert function_lengths(module, tmp_path) == {"m.py:2 f": 4, "m.py:3 g": 2}
