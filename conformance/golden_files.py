"""The checked-in goldens as the harness reads them (goldens.py writes them).

``golden_dir`` is ``conformance/goldens/``; ``load_manifest_entries`` its manifest by
scenario id; ``reference_file`` one file of the reference's final directory, which
failure messages show as the reference's side; ``file_entries`` the manifest's record
of a set of files (sha256, size, decoded JSON view). The runner and the epilogue read
the goldens through this module; goldens.py, which drives the runner to regenerate
them, sits above it.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib.resources import files
from pathlib import Path

from . import disk

MANIFEST = "manifest.json"
MANIFEST_SCHEMA = "manifest.schema.json"


def golden_dir() -> Path:
    return Path(str(files("conformance").joinpath("goldens")))


@cache
def _manifest(path: str) -> dict | None:
    p = Path(path)
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None


def load_manifest_entries(root: Path | None = None) -> dict | None:
    """scenario id -> manifest entry, or None when no goldens are checked in."""
    manifest = _manifest(str((root or golden_dir()) / MANIFEST))
    if manifest is None:
        return None
    return {entry["id"]: entry for entry in manifest["scenarios"]}


def reference_file(scenario_id: str, name: str, sha256: str | None = None) -> bytes | None:
    """The bytes of one file of the reference's run (``final/<scenario>/<name>``), when the
    checked-in goldens have it (and it matches ``sha256`` when given): what failure
    messages show as the reference's side."""
    path = golden_dir() / "final" / scenario_id / name
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        return None
    return data


def file_entries(snapshot: dict[str, bytes]) -> dict[str, dict]:
    return {
        name: {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "decoded": disk.decode(name, data),
        }
        for name, data in sorted(snapshot.items())
    }
