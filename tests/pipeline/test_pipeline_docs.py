"""docs/pipeline.md documents every column the data source and the scan report have, with
their types, in order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.scan import FINDING_COLUMNS, SEGMENT_COLUMNS
from pipeline.schema import spark_schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "pipeline.md"
_ROW = re.compile(r"^\| `([a-z_]+)` \| `?([a-z<>:,_]+)`? \|")


def documented_tables() -> list[list[tuple[str, str]]]:
    """Each '| column | type | meaning |' table of the page: (name, type) rows."""
    tables, current = [], None
    for line in DOC.read_text().splitlines():
        if line.startswith("| column | type |"):
            current = []
            tables.append(current)
        elif current is not None and (match := _ROW.match(line)):
            current.append(match.groups())
        elif current is not None and not line.startswith("| ---"):
            current = None
    return tables


def declared(level: str, on_error: str = "fail") -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark_schema(level, on_error).fields]


def test_every_column_is_documented_with_its_type():
    records, batches, errors, segments, findings = documented_tables()[:5]
    assert records == declared("record")
    assert batches == declared("batch")
    assert records + errors == declared("record", "report")
    assert segments == [(name, type_) for name, type_, _ in SEGMENT_COLUMNS]
    assert findings == [(name, type_) for name, type_, _ in FINDING_COLUMNS]


@pytest.mark.parametrize("option", ["level", "on_error", "split_size", "open_cost",
                                    "min_partitions"])  # fmt: skip
def test_every_option_is_documented(option):
    assert f"| `{option}` |" in DOC.read_text()
