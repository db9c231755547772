"""What one scenario's run knows (docs/conformance/results.md: what each failure carries).

``RunState`` is the one object the parts of a run share: ``Run`` (steps.py) drives the
steps and changes it; the response checks (responses.py), the file comparison
(file_comparison.py) and the epilogue (epilogue.py) each take it in their constructor and
read it. Each field is documented here once. It also holds what the parts do the same
way: record a failure (``fail``, tagged with the step, its operation and its rules), check
the segment invariants of the directory (``check_invariants``: at the end of the steps and
after each of the epilogue's closes) and name a file of the testee's directory as failures
name it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from . import check_rules, disk, index_invariants, scratch
from .file_names import expand_name
from .golden_files import reference_file
from .results import Failure
from .scenarios import Scenario
from .transport import Driver


@dataclass
class RunState:
    """One scenario on one testee, as far as the run has got."""

    scenario: Scenario  # the scenario being run, families expanded
    driver: Driver  # the testee, over its transport
    anchor: Path  # the scenario's directory: no file operation leaves it
    golden: dict | None  # the reference's manifest entry for the scenario (None: no goldens)
    features: set[str]  # the optional features the testee claims in hello
    now: int  # the time the testee is told, its only clock (MODEL-5); the ``clock`` steps set it
    config: dict  # the configuration of the last successful open (the scenario's at first)
    failures: list[Failure] = field(default_factory=list)  # every failed check, in order
    # each response to a step's request, normalized (responses.normalized): the goldens'
    # ``responses``; the epilogue's requests are not among them
    responses: list[dict] = field(default_factory=list)
    log_open: bool = False  # the last open succeeded and no close or crash came since
    closed: bool = False  # the last close succeeded and no open came since
    crashed: bool = False  # the last crash came after the last successful open
    damaged: bool = False  # the harness changed files: rules its damage can break are off
    recovered: bool = False  # a crash or damage came before the current step
    step_index: int | None = None  # the current step: -1 the scenario's own open, None the end
    operation: str | None = None  # what the current step does, in words
    open_wire: dict = field(default_factory=dict)  # the last successful open's request

    @classmethod
    def start(
        cls, scenario: Scenario, driver: Driver, workdir: Path, golden: dict | None,
        features: set[str],
    ) -> RunState:  # fmt: skip
        """The state before the first step: the scenario's clock and configuration."""
        return cls(
            scenario, driver, workdir, golden, features, scenario.start_ms, dict(scenario.config)
        )

    @property
    def root(self) -> Path:
        """The log directory the testee is given (its partition directory is ``pdir``)."""
        return self.anchor / "logs"

    @property
    def pdir(self) -> Path:
        return self.root / self.scenario.partition

    @property
    def recompressed(self) -> bool:
        """A cleaner may rewrite the scenario's compressed batches (COMPACT-28): a file or
        response is then compared by its records, not its bytes."""
        steps = self.scenario.steps
        return any("clean" in s for s in steps) and "codec" in repr(steps)

    def fail(self, category: str, message: str, reqs: list[str] | None = None, *,
             cause: str | None = None, choice: list[str] | None = None) -> None:  # fmt: skip
        """Record a failure of the current step (``reqs``: else the scenario's rules);
        none when ``choice`` names a MAY the testee may answer either way."""
        if check_rules.open_choice(choice or (), self.features):
            return  # a MAY: both answers are allowed (spec README §1.6)
        step = None if self.step_index is None else self.step_index + 1
        self.failures.append(
            Failure(
                category,
                message,
                sorted(reqs or self.scenario.requirements),
                step,
                self.operation,
                cause,
                list(choice or ()),
            )
        )

    def step_reqs(self, step: dict) -> list[str]:
        """The rules a step checks: its own ``reqs``, else the scenario's."""
        return list(step.get("reqs") or self.scenario.requirements)

    def check_invariants(self, files: dict[str, bytes], pristine: bool = False) -> None:
        """The segment invariants of the partition's ``files`` (visible ones, disk.visible),
        closed or open as the log is now: each broken one a failure of its rule.
        ``pristine``: no truncation, crash or damage came before (index_invariants.py)."""
        prefix = self.scenario.partition + "/"
        partition_files = {n[len(prefix) :]: d for n, d in files.items() if n.startswith(prefix)}
        found = index_invariants.invariants(
            partition_files,
            self.config,
            self.closed,
            self.scenario.reloads_after_failure,
            pristine=pristine,
            forgetful=self.scenario.may_forget_timestamps,
        )
        for reqs, problem in found:
            if self.damaged and ("wrong CRC" in problem or "unreadable" in problem):
                continue  # the harness's own damage, in a segment recovery need not read
            self.fail("invariant", problem, reqs, cause=f"invariant {', '.join(reqs)}")

    # --- the testee's directory, as failures name it ---
    def visible_files(self) -> dict[str, bytes]:
        """Every file under the log directory this testee is judged on (disk.visible)."""
        return disk.visible(disk.snapshot(self.root, self.anchor), self.features)

    def read(self, path: Path) -> bytes | None:
        """A regular file's bytes (None: absent or a directory), never through a link."""
        return scratch.read_if_file(path, self.anchor)

    def path(self, name: str) -> Path:
        """A file a step names: in the partition directory, or ``../name`` in the log's."""
        return self.root / name[3:] if name.startswith("../") else self.pdir / expand_name(name)

    def relative(self, filename) -> str | None:
        """A path as failures show it: relative to the partition or the log directory."""
        if not filename:
            return None
        path = Path(os.fsdecode(filename))
        for base in (self.pdir, self.root):
            if path.is_relative_to(base):
                return path.relative_to(base).as_posix()
        return str(path)

    def shown(self, path: Path) -> str:
        return self.relative(path) or str(path)

    def unsafe(self, exc: scratch.UnsafeFile) -> str:
        """An UnsafeFile's message, the file named as the other failures name files."""
        return exc.shown(self.shown(self.anchor / exc.name))

    def absent(self, path: Path) -> str:
        """Why a file is not there, and whether the reference's run has it."""
        if not self.pdir.is_dir():
            return "does not exist, nor does the testee's partition directory"
        name = self.relative(path)
        partition = self.scenario.partition
        relative = f"{partition}/{name}" if path.is_relative_to(self.pdir) else name
        has = reference_file(self.scenario.id, relative) is not None if self.golden else None
        return "does not exist: the testee did not write it" + (
            " (the reference's run has it)" if has else ""
        )
