"""One mutant: a named patch of the reference and the requirement IDs it must fail
(the catalogue is catalog.py; the package's docstring says how they run)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from unittest import mock

from reference_impl.log.unified_log import Log

from ..transport import ImplSpec, python_env


def module_of(method) -> ModuleType:
    """The module whose globals ``method`` reads: where it is defined now, looked up through
    its class at run time, so a mutant that patches a module-level name the method calls
    follows the log's code when it moves."""
    return sys.modules[method.__module__]


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
            # a mutant is the readable reference with one bug: the compiled append path
            # (reference_impl/log/_compiled_append.py) takes a client's common append
            # without the readable steps a mutant changes, so it is off while one runs
            stack.enter_context(mock.patch.object(module_of(Log._append), "_lean_append", None))
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
            f"mutant {self.name} (subprocess)", "subprocess", command=command, env=python_env()
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
