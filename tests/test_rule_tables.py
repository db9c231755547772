"""Decision tables declared once as data, held equal to the spec's tables.

The roll conditions (spec/behaviour/roll.md Table 1) are ``ROLL_CONDITIONS`` in
reference_impl/log/roll.py, which the log evaluates in order; the error codes of
operations (spec/behaviour/model.md Table 2) are ``OPERATION_ERROR_CODES`` in
reference_impl/errors.py, from which the conformance protocol takes its codes. A row
changed on one side only fails here.
"""

from __future__ import annotations

from pathlib import Path

from conformance.protocol import ERROR_CODES
from reference_impl.errors import OPERATION_ERROR_CODES, Category
from reference_impl.log.roll import ROLL_CONDITIONS

SPEC = Path(__file__).resolve().parents[1] / "spec" / "behaviour"


def spec_table(page: str, caption: str) -> list[list[str]]:
    """The body rows of the Markdown table after the line starting with ``caption``."""
    lines = (SPEC / page).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(caption))
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header, separator, *body = rows
    assert set("".join(separator)) <= {"-", " ", ":"}, f"{page}: {caption} has no table"
    return body


def test_roll_conditions_are_roll_md_table_1():
    rows = spec_table("roll.md", "Table 1:")
    code = [[str(c.number), c.condition, ", ".join(c.rules)] for c in ROLL_CONDITIONS]
    assert code == rows


def test_roll_conditions_are_evaluated_in_the_table_order():
    assert [c.number for c in ROLL_CONDITIONS] == list(range(1, len(ROLL_CONDITIONS) + 1))
    assert len({c.name for c in ROLL_CONDITIONS}) == len(ROLL_CONDITIONS)


def test_operation_error_codes_are_model_md_table_2():
    rows = spec_table("model.md", "Table 2:")
    code = [[f"`{e.code}`", e.kafka_exception, e.raised_by] for e in OPERATION_ERROR_CODES]
    assert code == rows


def test_the_protocol_takes_its_error_codes_from_the_table():
    assert tuple(e.code for e in OPERATION_ERROR_CODES) == ERROR_CODES
    assert all(isinstance(e.category, Category) for e in OPERATION_ERROR_CODES)
