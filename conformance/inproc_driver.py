"""The in-process transport (DESIGN.md §2; docs/conformance/implementers.md: the
in-process contract): a Python object of the contract (adapter.py), called in a worker
thread so that a hung call can time out.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import importlib.util
import json
from typing import Any

from .adapter import call, error_code
from .diagnostics import printable
from .driver import CannotStart, Driver, TesteeFailure, TesteeSpec, guarded, raised, stack_of
from .protocol import (
    nesting_errors,
)


def load_factory(path: str):
    module, _, attr = path.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


class InProcessDriver(Driver):
    """Calls the adapter in a worker thread so that a hung call can time out."""

    def __init__(self, spec: TesteeSpec, timeout: float) -> None:
        super().__init__(spec, timeout)
        try:
            self._factory = load_factory(spec.factory)
        except (ImportError, AttributeError) as exc:
            raise CannotStart(spec.label, f"{type(exc).__name__}: {exc}") from None
        if not callable(self._factory):
            raise CannotStart(spec.label, f"{spec.factory} is not callable")
        self._adapter = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def _running(self) -> bool:
        return self._adapter is not None

    def _launch(self) -> None:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="testee")
        try:
            ok, value = self._pool.submit(guarded, self._factory).result(self.timeout)
        except concurrent.futures.TimeoutError:
            raise TesteeFailure(
                "timeout", f"the factory {self.spec.factory} took more than {self.timeout} s"
            ) from None
        if ok:
            self._adapter = value
            return
        exc = value
        if exc is not None:
            raise TesteeFailure(
                "crashed",
                f"the factory {self.spec.factory} raised {raised(exc)}",
                stack_of(exc),
                cause="crashed: the factory raised",
            ) from None

    def _exchange(self, request: dict) -> Any:
        future = self._pool.submit(
            guarded, call, self._adapter, request["op"], request["args"], request["now_ms"]
        )
        try:
            ok, result = future.result(self.timeout)
        except concurrent.futures.TimeoutError:
            raise TesteeFailure(
                "timeout",
                f"{request['op']} took more than {self.timeout} s",
                cause=f"timeout during {request['op']}",
            ) from None
        if not ok:
            exc = result
            code = error_code(exc) if isinstance(exc, Exception) else None
            if code is None:
                raise TesteeFailure(
                    "crashed",
                    f"{request['op']} raised {raised(exc)}",
                    stack_of(exc),
                    cause=f"crashed during {request['op']} ({type(exc).__name__})",
                )
            error = {"code": code}
            message = getattr(exc, "message", None) or str(exc)
            if isinstance(message, str):
                error["message"] = message
            return {"id": request["id"], "ok": False, "error": error}
        try:  # what goes over the wire is JSON: check it could, within the protocol's limits
            problems = nesting_errors(result, depth=2)
            if problems:
                raise ValueError(problems[0])
            result = json.loads(json.dumps(result))
        except (TypeError, ValueError, RecursionError) as exc:
            raise TesteeFailure(
                "protocol",
                f"{request['op']} returned a non-JSON value: {printable(str(exc))}",
                cause=f"protocol: {request['op']} returned a non-JSON value",
            )
        return {"id": request["id"], "ok": True, "result": result}

    def _crash(self, now_ms: int) -> None:
        if self._adapter is not None:
            crash = getattr(self._adapter, "crash", None)
            if crash is not None:
                future = self._pool.submit(guarded, crash, now_ms=now_ms)
                # a crash that crashes (or exits, or hangs) is still a crash
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    future.result(self.timeout)
        self._adapter = None  # abandoned, as a killed process is

    def _kill(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None
        self._adapter = None
