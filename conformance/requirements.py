"""The spec's requirement index (spec/requirements.yaml): each rule's ID, level, page, text
and Kafka source, which every part of the harness reads (a check's level, the scenarios'
levels, the traceability matrix). Read once per process."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the directory holding conformance/


def requirements_path() -> Path:
    return PACKAGE_ROOT / "spec" / "requirements.yaml"


@cache
def load_requirements() -> dict[str, dict]:
    """spec/requirements.yaml as ``{id: {level, page, rule, source}}``."""
    data = yaml.safe_load(requirements_path().read_text(encoding="utf-8"))
    return {entry["id"]: entry for entry in data["requirements"]}
