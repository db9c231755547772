"""The "Kafka versions" page is generated from the committed data and covers the whole matrix.

``docs/conformance/kafka-versions.json`` is what ``python -m conformance.kafka_versions run``
saved from the suite on every release (tests/conformance/test_kafka_versions.py runs the same
matrix as a test); the page must be ``render`` of it, so it cannot drift from the data, and the
data must hold every scenario of the suite in every release and mode.
"""

from __future__ import annotations

import json

from conformance import expected as xf
from conformance.kafka_versions import (
    DATA,
    LISTS,
    MODES,
    PAGE,
    RELEASES,
    SHARED_LIST,
    column,
    render,
)
from conformance.scenarios import load_all


def data() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def test_the_page_is_rendered_from_the_data():
    assert PAGE.read_text(encoding="utf-8") == render(data()), (
        "docs/conformance/kafka-versions.md is stale: python -m conformance.kafka_versions render"
    )


def test_the_data_covers_every_release_mode_and_scenario():
    saved = data()
    assert saved["columns"] == [column(v, m) for v in RELEASES for m in MODES]
    assert set(saved["cells"]) == {s.id for s in load_all()}
    for test_id, cells in saved["cells"].items():
        assert len(cells) == len(saved["columns"]), test_id
        assert set(cells) <= {"pass", "Deviation", "differs", "skipped"}, test_id
        differs = {c for c, cell in zip(saved["columns"], cells, strict=True) if cell == "differs"}
        assert differs == set(saved["why"].get(test_id, {})), test_id


def test_every_deviation_cell_is_a_listed_deviation():
    shared, problems = xf.load(SHARED_LIST)
    assert not problems
    saved = data()
    for i, name in enumerate(saved["columns"]):
        own = LISTS / f"kafka-{name.split()[0]}.txt"
        listed = set(shared) | (set(xf.load(own)[0]) if own.is_file() else set())
        deviations = {t for t, cells in saved["cells"].items() if cells[i] == "Deviation"}
        assert deviations <= listed, name
