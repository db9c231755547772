"""Deliberately wrong implementations: the suite's own power, measured.

Each mutant is the reference with one realistic bug (catalog.py): a patch of
``reference_impl`` applied only while the mutant runs. The same mutant runs through
both transports:

* in process: ``conformance.mutants:<name>`` (dashes as underscores) is a factory whose
  adapter applies the patch around each call, so the harness and the reference in the
  same process never see it;
* as a subprocess: ``python -m conformance.mutants <name>`` applies the patch to its
  whole process and serves the JSON-lines protocol.

A mutant is *killed* when the suite fails at least one of its scenarios with every one
of its expected requirement IDs among the failed ones (tests/conformance).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from unittest import mock

from ..transport import ImplSpec, _python_env


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    expected: frozenset[str]
    scenarios: tuple[str, ...]
    patches: Callable[[], list[tuple[object, str, object]]] = field(repr=False)

    @contextlib.contextmanager
    def applied(self):
        with contextlib.ExitStack() as stack:
            for target, attr, value in self.patches():
                stack.enter_context(mock.patch.object(target, attr, value))
            yield

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")

    def impl(self, transport: str) -> ImplSpec:
        if transport == "inproc":
            return ImplSpec(
                f"mutant {self.name}", "inproc", factory=f"conformance.mutants:{self.attr}"
            )
        command = [sys.executable, "-P", "-m", "conformance.mutants", self.name]
        return ImplSpec(
            f"mutant {self.name} (subprocess)", "subprocess", command=command, env=_python_env()
        )


class MutantAdapter:
    """The reference adapter with the mutant's patch around every call."""

    def __init__(self, mutant: Mutant) -> None:
        from ..reference import ReferenceAdapter

        self._mutant = mutant
        self._inner = ReferenceAdapter()

    def __getattr__(self, name: str):
        method = getattr(self._inner, name)

        def patched(*args, **kwargs):
            with self._mutant.applied():
                return method(*args, **kwargs)

        return patched


def mutants() -> dict[str, Mutant]:
    from .catalog import CATALOG

    return {m.name: m for m in CATALOG}


def __getattr__(attr: str):
    """``conformance.mutants:<name>``: the in-process factory of a mutant."""
    for mutant in mutants().values():
        if mutant.attr == attr:
            return lambda: MutantAdapter(mutant)
    raise AttributeError(attr)
