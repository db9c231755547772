"""Scenario files (conformance/scenarios/*.yaml): loading, family expansion, checks.

A scenario is data (schemas/scenario.schema.json): a config, a start time, steps
(operations, clock moves, damage, file inspections) and expectations. Families are
compact tables: a generator (families.py) turns each row into one or more scenarios
with IDs ``<family>.<row>.<variant>``. IDs are stable: they name tests in reports,
expected-failure files and goldens, so they never depend on a position in a file.

A scenario's level comes from its requirements: MUST if any is MUST, else SHOULD.
Its features are the optional features it needs (explicit, or implied by its steps).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path

import yaml

from .protocol import FEATURES, schema_errors
from .requirements import load_requirements, requirements_path  # noqa: F401 (re-exported)

DEFAULT_START_MS = 1_700_000_000_000
DEFAULT_PARTITION = "topic-0"
SCENARIO_SCHEMA = "scenario.schema.json"
LEVEL_ORDER = {"MUST": 0, "SHOULD": 1, "MAY": 2}


def scenario_dir() -> Path:
    return Path(str(files("conformance").joinpath("scenarios")))


@dataclass
class Scenario:
    id: str
    title: str
    requirements: list[str]
    steps: list[dict]
    config: dict = field(default_factory=dict)
    partition: str = DEFAULT_PARTITION
    topic_id: str | None = None
    start_ms: int = DEFAULT_START_MS
    open: bool = True
    features: list[str] = field(default_factory=list)
    failure_mode: str | None = None
    epilogue_skip: str | None = None  # why the scenario does without the epilogue (epilogue.py)
    generated_by: str | None = None
    family: str | None = None
    source: str = ""

    @property
    def level(self) -> str:
        levels = load_requirements()
        found = [levels[r]["level"] for r in self.requirements if r in levels]
        return min(found, key=LEVEL_ORDER.__getitem__) if found else "MUST"

    @property
    def needs(self) -> set[str]:
        """Every optional feature the scenario needs: declared, or implied by its data."""
        return set(self.features) | implied_features(self)

    @property
    def has_damage(self) -> bool:
        return any("damage" in step for step in self.steps)

    @property
    def reloads_after_failure(self) -> bool:
        """Some step crashes the log or damages its files, so a later load may find
        files as no clean close leaves them (an untrimmed index, a missing time index)."""
        return any("crash" in step or "damage" in step for step in self.steps)

    @property
    def truncates(self) -> bool:
        """Some step truncates the log (``truncate_to``, ``truncate_fully_and_start_at``)."""
        return any("truncate_to" in s or "truncate_fully_and_start_at" in s for s in self.steps)

    @property
    def may_forget_timestamps(self) -> bool:
        """A truncation follows a reload (an ``open`` or ``crash`` step): a segment reopened
        from disk may then lose its largest timestamp to TRUNC-9's rule, as Kafka's does, so
        its time index need not hold its largest timestamps (INDEX-16, FLUSH-8)."""
        reloaded = False
        for step in self.steps:
            if "open" in step or "crash" in step:
                reloaded = True
            elif reloaded and ("truncate_to" in step or "truncate_fully_and_start_at" in step):
                return True
        return False

    def to_data(self) -> dict:
        """The expanded scenario as JSON data (what a non-Python harness would read)."""
        data = {
            "id": self.id,
            "title": self.title,
            "requirements": list(self.requirements),
            "config": self.config,
            "partition": self.partition,
            "start_ms": self.start_ms,
            "open": self.open,
            "steps": self.steps,
        }
        if self.features:
            data["features"] = list(self.features)
        if self.topic_id is not None:
            data["topic_id"] = self.topic_id
        if self.failure_mode:
            data["failure_mode"] = self.failure_mode
        if self.epilogue_skip is not None:
            data["epilogue"] = {"skip": self.epilogue_skip}
        if self.generated_by:
            data["generated_by"] = self.generated_by
            data["family"] = self.family
        return data


def _batches_of(step: dict) -> list[dict]:
    append = step.get("append") or {}
    return ([append["batch"]] if "batch" in append else []) + list(append.get("batches", ()))


SNAPSHOT_FILE_CHECKS = ("exist", "absent", "size")  # files keys that may name a .snapshot
TXN_EXPECT_KEYS = ("last_stable_offset", "aborted_transactions")


def _names_snapshot(names) -> bool:
    from .disk import feature_of

    return any(feature_of(str(name)) == "producer_snapshots" for name in names)


def implied_features(scenario: Scenario) -> set[str]:
    """Features a scenario's data needs: a ``clean`` step or a compacted config
    (compaction), a marker, origin coordinator, isolation
    txn_committed or an expected last stable offset (transaction_index); a file check or
    damage naming a .snapshot file (producer_snapshots). ``exactly`` lists may name
    .snapshot files without needing the feature: they are left out for testees
    without it (disk.visible)."""
    needs: set[str] = set()
    configs = [scenario.config] + [
        (s.get("open") or {}).get("config") or {} for s in scenario.steps if "open" in s
    ]
    for config in configs:
        if config.get("preallocate"):
            needs.add("preallocate")
        if config.get("message_timestamp_type") == "LogAppendTime":
            needs.add("log_append_time")
        if "compact" in str(config.get("cleanup_policy", "delete")):
            needs.add("compaction")
    for step in scenario.steps:
        if "crash" in step:
            needs.add("crash_recovery")
        if "clean" in step:
            needs.add("compaction")
        for batch in _batches_of(step) + list(
            b for d in step.get("damage", ()) for b in d.get("write_batches", ())
        ):
            if batch.get("magic", 2) in (0, 1):
                needs.add("legacy_formats")
            if batch.get("codec", "none") != "none":
                needs.add(f"compression.{batch['codec']}")
            if "marker" in batch:
                needs.add("transaction_index")
        if (step.get("append") or {}).get("origin", "client") != "client":
            needs.add("transaction_index")
        if (step.get("read") or {}).get("isolation", "high_watermark") != "high_watermark":
            needs.add("transaction_index")
        if any(key in (step.get("expect") or {}) for key in TXN_EXPECT_KEYS):
            needs.add("transaction_index")
        checks = step.get("files") or {}
        if "epochs" in checks:  # other checks of the file are skipped without the feature
            needs.add("leader_epoch_checkpoint")
        if (
            "snapshots" in checks
            or "producer_snapshot" in checks
            or any(_names_snapshot(checks.get(key) or ()) for key in SNAPSHOT_FILE_CHECKS)
            or _names_snapshot(d["file"] for d in step.get("damage", ()))
        ):
            needs.add("producer_snapshots")
        if "txn_index" in checks:
            needs.add("transaction_index")
    return needs


def _merge(*configs: dict | None) -> dict:
    merged: dict = {}
    for config in configs:
        merged.update(config or {})
    return merged


def _scenario(data: dict, defaults: dict, source: str) -> Scenario:
    inherit = data.get("inherit_config", True)
    return Scenario(
        id=data["id"],
        title=data["title"],
        requirements=list(data["requirements"]),
        steps=copy.deepcopy(data["steps"]),
        config=_merge(defaults.get("config") if inherit else None, data.get("config")),
        partition=data.get("partition", defaults.get("partition", DEFAULT_PARTITION)),
        topic_id=data.get("topic_id"),
        start_ms=data.get("start_ms", defaults.get("start_ms", DEFAULT_START_MS)),
        open=data.get("open", True),
        features=list(data.get("features", ())),
        failure_mode=data.get("failure_mode"),
        epilogue_skip=(data.get("epilogue") or {}).get("skip"),
        generated_by=data.get("generated_by"),
        family=data.get("family"),
        source=source,
    )


def expand_file(data: dict, source: str) -> list[tuple[dict, Scenario]]:
    """Every scenario of one file, families expanded, with the raw data it came from."""
    from .families import GENERATORS

    defaults = data.get("defaults") or {}
    out = [(raw, _scenario(raw, defaults, source)) for raw in data.get("scenarios") or ()]
    for family in data.get("families") or ():
        generator = GENERATORS.get(family["generator"])
        if generator is None:
            raise ValueError(
                f"{source}: family {family['family']}: no generator {family['generator']!r}"
            )
        for row in family["rows"]:
            for variant, partial in generator(family, row):
                raw = {
                    "id": f"{family['family']}.{row['row']}" + (f".{variant}" if variant else ""),
                    "title": partial.pop("title", family.get("title", family["family"])),
                    "requirements": partial.pop(
                        "requirements", list(row.get("requirements") or family["requirements"])
                    ),
                    "generated_by": family["generator"],
                    "family": family["family"],
                    **partial,
                }
                raw["config"] = _merge(
                    family.get("config"), row.get("config"), partial.get("config")
                )
                if family.get("features"):
                    raw["features"] = sorted(set(family["features"]) | set(raw.get("features", ())))
                out.append((raw, _scenario(raw, defaults, source)))
    return out


def scenario_files() -> list[Path]:
    return sorted(scenario_dir().glob("*.yaml"))


def _read(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


@cache
def load_all() -> tuple[Scenario, ...]:
    scenarios: list[Scenario] = []
    for path in scenario_files():
        scenarios.extend(s for _, s in expand_file(_read(path), path.name))
    return tuple(scenarios)


def by_id() -> dict[str, Scenario]:
    return {s.id: s for s in load_all()}


def check(paths: list[Path] | None = None) -> list[str]:
    """Every problem with the scenario files: schema, generated scenarios, unique IDs,
    unknown requirement IDs and features, damage while a log is open."""
    problems: list[str] = []
    known = load_requirements()
    seen: dict[str, str] = {}
    for path in paths or scenario_files():
        try:
            data = _read(path)
        except yaml.YAMLError as exc:
            problems.append(f"{path.name}: not YAML: {exc}")
            continue
        file_problems = schema_errors(data, SCENARIO_SCHEMA)
        if file_problems:
            problems += [f"{path.name}: {p}" for p in file_problems]
            continue
        try:
            expanded = expand_file(data, path.name)
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        for raw, scenario in expanded:
            where = f"{path.name}: {scenario.id}"
            problems += [
                f"{where}: {p}" for p in schema_errors(raw, SCENARIO_SCHEMA, "/$defs/scenario")
            ]
            if scenario.id in seen:
                problems.append(f"{where}: duplicate ID (also in {seen[scenario.id]})")
            seen[scenario.id] = path.name
            cited = set(scenario.requirements)
            for step in scenario.steps:
                cited |= set(step.get("reqs", ()))
            for req in sorted(cited - set(known)):
                problems.append(f"{where}: unknown requirement ID {req}")
            for feature in sorted(set(scenario.features) - set(FEATURES)):
                problems.append(f"{where}: unknown feature {feature}")
            problems += [f"{where}: {p}" for p in _step_order_problems(scenario)]
    return problems


def _step_order_problems(scenario: Scenario) -> list[str]:
    problems = []
    open_ = scenario.open
    for i, step in enumerate(scenario.steps):
        append = step.get("append") or {}
        if append.get("follower") and append.get("origin", "client") != "client":
            problems.append(f"step {i}: origin {append['origin']} on a follower append")
        if "damage" in step and open_ and not step.get("live"):
            problems.append(f"step {i}: damage while the log is open (crash or close it first)")
        if "open" in step:
            open_ = True
        elif "crash" in step or ("close" in step and not (step.get("expect") or {}).get("error")):
            open_ = False
    return problems
