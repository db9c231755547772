"""The two transports of the contract (DESIGN.md §2), behind one ``Driver`` interface.

``InProcessDriver`` calls a Python object of the in-process contract (adapter.py);
``SubprocessDriver`` starts a testee command and speaks JSON lines to it. Both send and
receive the same messages, validated against ``schemas/protocol.schema.json``, so the
runner never knows which one it drives.

An implementation is named on the command line (``resolve_impl``: ``reference``,
``module:attr``, an entry point, ``cmd:...``, a Kafka testee) and becomes an ``ImplSpec``,
whose ``driver()`` starts it: driver.py has the interface and what a failing testee is
reported as, inproc_driver.py and subprocess_driver.py the two transports.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from .driver import (
    DEFAULT_TIMEOUT_S,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    CannotStart,
    Driver,
    Response,
    TesteeFailure,
)
from .inproc_driver import InProcessDriver, load_factory
from .subprocess_driver import SubprocessDriver

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "CannotStart",
    "Driver",
    "ImplSpec",
    "InProcessDriver",
    "Response",
    "SubprocessDriver",
    "TesteeFailure",
    "load_factory",
    "resolve_impl",
]

IMPLEMENTATIONS_GROUP = "klogspec.implementations"


@dataclass
class ImplSpec:
    """Which implementation and how to reach it: ``factory`` (``module:attr``) in process,
    or ``command`` as a subprocess."""

    label: str
    transport: str  # "inproc" | "subprocess"
    factory: str | None = None
    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)

    def driver(self, timeout: float = DEFAULT_TIMEOUT_S) -> Driver:
        if self.transport == "inproc":
            return InProcessDriver(self, timeout)
        return SubprocessDriver(self, timeout)


def python_env() -> dict[str, str]:
    """A child Python that imports the same ``reference_impl`` and ``conformance`` as this
    process (whichever checkout or install they come from)."""
    roots = []
    for name in ("reference_impl", "conformance"):
        module = sys.modules.get(name) or importlib.import_module(name)
        roots.append(str(Path(module.__file__).resolve().parent.parent))
    roots.append(os.environ.get("PYTHONPATH", ""))
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(p for p in roots if p))}


def resolve_impl(spec: str, transport: str | None = None) -> ImplSpec:
    """``reference``, ``module:attr``, an entry point of ``klogspec.implementations``,
    ``cmd:<command line>`` or ``kafka:<version>`` (Kafka's release jars). ``transport`` ``subprocess`` serves an in-process factory
    through ``python -m conformance.testee --factory`` (the JSON-lines path end to end);
    ``inproc`` is refused for a command."""
    if spec.startswith("cmd:"):
        if transport == "inproc":
            raise ValueError("a cmd: implementation can only be driven as a subprocess")
        command = shlex.split(spec[4:])
        if not command:
            raise ValueError("cmd: needs a command line")
        return ImplSpec(spec, "subprocess", command=command)
    if spec.startswith("kafka:"):
        return _kafka_impl(spec)
    if spec == "reference":
        factory = "conformance.reference:factory"
    elif ":" in spec:
        factory = spec
        _check_module(spec)
    else:
        found = [ep for ep in entry_points(group=IMPLEMENTATIONS_GROUP) if ep.name == spec]
        if not found:
            raise ValueError(
                f"unknown implementation {spec}: not 'reference', 'module:attr', 'cmd:...' "
                f"nor an entry point of {IMPLEMENTATIONS_GROUP}"
            )
        factory = found[0].value
    if transport == "subprocess":
        command = [sys.executable, "-P", "-m", "conformance.testee", "--factory", factory]
        return ImplSpec(f"{spec} (subprocess)", "subprocess", command=command, env=python_env())
    return ImplSpec(spec, "inproc", factory=factory)


def _kafka_impl(spec: str) -> ImplSpec:
    """``kafka:<version> [flags]``: the Kafka testee of that release (conformance/kafka_testee_cli.py)."""
    from .kafka_jars import KafkaJarsError
    from .kafka_testee_cli import parse_kafka_impl, testee_command

    version, flags = parse_kafka_impl(spec)
    try:
        return ImplSpec(spec, "subprocess", command=testee_command(version, flags))
    except KafkaJarsError as exc:
        raise CannotStart(spec, str(exc)) from None


def _check_module(spec: str) -> None:
    """Refuse a ``module:attr`` whose module cannot be found, before anything starts."""
    module = spec.partition(":")[0]
    try:
        found = importlib.util.find_spec(module) if module else None
    except (ImportError, ValueError) as exc:
        raise CannotStart(spec, f"cannot import {module!s}: {exc}") from None
    if found is None:
        raise CannotStart(spec, f"no Python module named {module or '(empty)'}")
