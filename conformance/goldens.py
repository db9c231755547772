"""Golden fixtures: every scenario run on the reference, its final directory kept.

``klogspec golden regenerate`` writes, under ``conformance/goldens/``:

* ``final/<scenario id>/``: the log directory as the scenario leaves it (the partition
  directory and the log directory's checkpoint files);
* ``corrupt/<failure mode>/``: for a scenario that damages files, the directory right
  after the damage, i.e. the input recovery is given, named after its failure mode;
* ``manifest.json`` (schemas/manifest.schema.json): per scenario its requirement IDs,
  the reference's response to every request, and the sha256, size and decoded JSON view
  of every file; and its epilogue (epilogue.py): the files after the epilogue's close,
  the state of the clean reload and a digest of the read from the log start offset.

Regeneration is deterministic: a fixed clock, the reference's deterministic encoders,
sorted JSON, files written in sorted order; file modification times do not matter (no
golden compares them). ``klogspec golden check`` regenerates into a scratch directory
and fails when anything differs from what is checked in. The harness reads the goldens
through golden_files.py (re-exported here), which does not drive the runner.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from .golden_files import (
    MANIFEST,
    MANIFEST_SCHEMA,
    file_entries,
    golden_dir,
    load_manifest_entries,
    reference_file,
)
from .protocol import schema_errors

__all__ = [
    "MANIFEST",
    "check",
    "compare",
    "file_entries",
    "golden_dir",
    "load_manifest_entries",
    "reference_file",
    "regenerate",
]


def _write_tree(root: Path, snapshot: dict[str, bytes]) -> None:
    for name, data in sorted(snapshot.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def regenerate(out: Path, *, workdir: str | None = None) -> dict:
    """Run every scenario on the reference (in process) and write the goldens to ``out``."""
    from .runner import Runner
    from .scenarios import load_all
    from .transport import resolve_impl

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    runner = Runner(resolve_impl("reference").driver(), None, keep_files=True, workdir=workdir)
    entries, corrupt = [], []
    try:
        for scenario in load_all():
            result = runner.run(scenario)
            if result.status != "passed":
                problems = "; ".join(f"{f.category}: {f.message}" for f in result.failures)
                raise RuntimeError(
                    f"{scenario.id}: the reference does not pass it ({result.status}: "
                    f"{problems or result.skip_reason}); fix the scenario or the reference first"
                )
            _write_tree(out / "final" / scenario.id, result.final_files)
            entry = {
                "id": scenario.id,
                "title": scenario.title,
                "requirements": scenario.requirements,
                "level": scenario.level,
                "closed": result.closed,
                "responses": result.responses,
                "files": file_entries(result.final_files),
            }
            if result.epilogue is not None:
                entry["epilogue"] = result.epilogue.to_golden()
            if result.corrupt_files is not None:
                mode = scenario.failure_mode or scenario.id
                _write_tree(out / "corrupt" / mode, result.corrupt_files)
                entry["corrupt_fixture"] = mode
                corrupt.append(
                    {
                        "failure_mode": mode,
                        "scenario": scenario.id,
                        "files": file_entries(result.corrupt_files),
                    }
                )
            entries.append(entry)
    finally:
        runner.close()
    manifest = {
        "description": "Goldens of the klogspec conformance suite: every scenario run on the reference implementation (conformance/goldens.py).",
        "generator": "klogspec golden regenerate",
        "scenarios": entries,
        "corrupt": corrupt,
    }
    problems = schema_errors(manifest, MANIFEST_SCHEMA)
    if problems:
        raise RuntimeError(f"the manifest breaks its schema: {problems[:5]}")
    (out / MANIFEST).write_text(_dumps(manifest), encoding="utf-8")
    return manifest


def _dumps(manifest: dict) -> str:
    """Sorted, compact JSON with one scenario (or corrupt fixture) per line: small, and a
    change to one scenario is a one-line diff."""

    def compact(value) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    parts = ["{"]
    keys = sorted(manifest)
    for i, key in enumerate(keys):
        value = manifest[key]
        end = "," if i < len(keys) - 1 else ""
        if isinstance(value, list):
            items = ",\n".join(compact(item) for item in value)
            parts.append(f"{compact(key)}:[\n{items}\n]{end}")
        else:
            parts.append(f"{compact(key)}:{compact(value)}{end}")
    parts.append("}")
    return "\n".join(parts) + "\n"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def compare(fresh_root: Path, root: Path) -> list[str]:
    """Differences between two golden trees, file by file."""
    fresh, current = tree(fresh_root), tree(root) if root.exists() else {}
    problems = []
    for name in sorted(set(fresh) | set(current)):
        if name not in current:
            problems.append(f"{name}: missing from the checked-in goldens")
        elif name not in fresh:
            problems.append(f"{name}: checked in but no longer generated")
        elif fresh[name] != current[name]:
            problems.append(f"{name}: differs from a fresh regeneration")
    return problems


def check(root: Path | None = None, *, workdir: str | None = None) -> list[str]:
    """Differences between the checked-in goldens and a fresh regeneration."""
    with tempfile.TemporaryDirectory(prefix="klogspec-goldens-") as scratch:
        fresh_root = Path(scratch) / "goldens"
        regenerate(fresh_root, workdir=workdir)
        return compare(fresh_root, root or golden_dir())
