"""A testee behind the ``Driver`` interface (DESIGN.md §2; docs/conformance/implementers.md:
the protocol): request ids, hello and restarts, the protocol's checks on each response, and
what a testee that fails is reported as.

A testee that crashes (exits, or raises something that is not an error code), hangs past
the per-request timeout, or answers with something that is not a valid response raises
``TesteeFailure``: the current test fails with that kind, the testee is restarted (a new
process, or a new adapter object) for the next test, and the run goes on. An in-process
implementation's ``SystemExit`` and ``KeyboardInterrupt`` are crashes like any other
exception (``guarded``). The two transports: inproc_driver.py, subprocess_driver.py.
"""

from __future__ import annotations

import contextlib
import json
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .diagnostics import MAX_TAIL, printable
from .protocol import (
    PROTOCOL_VERSION,
    nesting_errors,
    request_errors,
    response_errors,
)

DEFAULT_TIMEOUT_S = 10.0
TOO_LONG = object()  # what the stdout pump puts for a line over MAX_LINE_BYTES


class TesteeFailure(Exception):
    """The testee crashed, hung or broke the protocol; ``kind`` is ``crashed``,
    ``timeout`` or ``protocol``. ``cause`` is the same for every failure of one root cause
    (no numbers, no paths)."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, kind: str, message: str, detail: str = "", cause: str | None = None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.detail = detail
        self.cause = cause or kind


class CannotStart(Exception):
    """The implementation cannot be started at all (no such module or command, a factory
    that fails, a testee that dies or answers wrongly before its first hello): the run
    cannot begin, ``klogspec conformance`` exits 2."""

    def __init__(self, label: str, reason: str, stderr: str = "") -> None:
        last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
        said = f" (the last line it wrote to stderr: {printable(last, keep='end')})" if last else ""
        super().__init__(f"cannot start the implementation {label}: {reason}{said}")
        self.reason = reason


@dataclass
class Response:
    ok: bool
    result: dict | None = None
    code: str | None = None
    message: str = ""


class TesteeSpec(Protocol):
    """What a driver needs of an implementation's spec (transport.ImplSpec)."""

    label: str
    factory: str | None
    command: list[str] | None
    env: dict[str, str]


# The protocol's own error codes (spec/behaviour/model.md §6): never a refusal of an
# operation, so never matched against a scenario's expectation.
INVALID_REQUEST = "INVALID_REQUEST"  # PROTO-2: a request the testee cannot read or run
INTERNAL_ERROR = "INTERNAL_ERROR"  # PROTO-3: the testee failed without refusing


class Driver:
    """One testee, used for one scenario at a time.

    Request ids increase over the whole run, across restarts of the testee (PROTO-4): a
    restarted testee gets its ``hello`` first, with the next id, and then the request
    that needed it. ``trace`` (a text file) receives every request and response as a JSON
    line; ``context`` (the current test's ID) is written with each."""

    def __init__(self, spec: TesteeSpec, timeout: float) -> None:
        self.spec = spec
        self.timeout = timeout
        self.log_open = False
        self._hello: dict | None = None
        self._next_id = 1
        self.transcript: list[tuple[dict, Any]] = []
        self.trace = None
        self.context: str | None = None

    # --- subclasses ---
    def _running(self) -> bool:
        """Whether a testee is there to answer (else ``_launch`` starts one)."""
        raise NotImplementedError

    def _launch(self) -> None:
        """Start a testee (a process, an adapter object); TesteeFailure when it cannot."""
        raise NotImplementedError

    def _exchange(self, request: dict) -> Any:
        """Send one request, return the decoded response (any JSON value)."""
        raise NotImplementedError

    def _kill(self) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        self._kill()

    def stderr_tail(self) -> str:
        """What the testee last wrote to stderr, escaped (a process has one)."""
        return ""

    # --- the contract ---
    def hello(self, now_ms: int = 0) -> dict:
        if self._hello is None:
            if not self._running():
                self._launch()
            self._hello = self._say_hello(now_ms)
        return self._hello

    def _say_hello(self, now_ms: int) -> dict:
        response = self._round_trip(
            "hello",
            {"protocol_version": PROTOCOL_VERSION, "suite_version": _suite_version()},
            now_ms,
        )
        if not response.ok:
            raise TesteeFailure(
                "protocol", f"hello was refused with {response.code}", cause="hello refused"
            )
        return response.result

    @property
    def features(self) -> set[str]:
        from .protocol import expand_features

        return expand_features(self.hello().get("features", ()))

    def request(self, op: str, args: dict, now_ms: int) -> Response:
        if not self._running():
            self._launch()
            if op != "hello" and self._hello is not None:
                try:  # a restarted testee gets its hello before anything else
                    self._say_hello(now_ms)
                except TesteeFailure as exc:
                    raise TesteeFailure(
                        exc.kind, f"hello after a restart: {exc.message}", exc.detail, exc.cause
                    ) from None
        return self._round_trip(op, args, now_ms)

    def _round_trip(self, op: str, args: dict, now_ms: int) -> Response:
        request = {"id": self._next_id, "op": op, "args": args, "now_ms": now_ms}
        self._next_id += 1
        problems = request_errors(request)
        if problems:  # the harness's own bug: never blame the testee
            raise ValueError(f"the harness built an invalid {op} request: {problems}")
        try:
            raw = self._exchange(request)
        except TesteeFailure as exc:
            self._record(request, None, exc.message)
            self._kill()
            raise
        self._record(request, raw)
        problems = nesting_errors(raw) or response_errors(raw, op)
        if not problems and raw.get("id") != request["id"]:
            problems = [f"id: answered {raw.get('id')} to request {request['id']}"]
        if problems:
            self._kill()
            raise TesteeFailure(
                "protocol",
                f"invalid {op} response: {'; '.join(printable(p) for p in problems[:3])}",
                printable(json.dumps(raw), MAX_TAIL),
                cause=f"protocol: an invalid {op} response",
            )
        if not raw["ok"]:
            self._protocol_error(op, raw["error"])
        if op == "open":
            self.log_open = bool(raw["ok"])
        elif op == "close" and raw["ok"]:
            self.log_open = False
        if raw["ok"]:
            return Response(True, raw["result"])
        error = raw["error"]
        return Response(False, code=error["code"], message=error.get("message", ""))

    def _protocol_error(self, op: str, error: dict) -> None:
        """The protocol's own error codes are not refusals (PROTO-2, PROTO-3)."""
        said = f": {printable(error['message'])}" if error.get("message") else ""
        if error["code"] == INTERNAL_ERROR:
            tail = self.stderr_tail()
            self._kill()  # its state is unknown: the next test gets a fresh testee
            raise TesteeFailure(
                "crashed",
                f"{op} failed inside the testee (INTERNAL_ERROR{said})",
                tail,
                cause=f"crashed during {op} (INTERNAL_ERROR)",
            )
        if error["code"] == INVALID_REQUEST:
            raise TesteeFailure(
                "protocol",
                f"the testee refused {op} as INVALID_REQUEST{said}: it does not read or run "
                "a request the protocol allows",
                cause=f"protocol: {op} refused as INVALID_REQUEST",
            )

    def _record(self, request: dict, raw: Any, failure: str | None = None) -> None:
        self.transcript.append((request, raw))
        if self.trace is not None:
            line = {"test": self.context, "request": request, "response": raw}
            if failure is not None:
                line["failure"] = failure
            self.trace.write(json.dumps(line, separators=(",", ":")) + "\n")

    def crash(self, now_ms: int) -> None:
        """The testee stops at once, without flushing or closing anything."""
        if self.trace is not None:
            self.trace.write(
                json.dumps({"test": self.context, "crash": True, "now_ms": now_ms}) + "\n"
            )
        self._crash(now_ms)
        self.log_open = False

    def _crash(self, now_ms: int) -> None:
        raise NotImplementedError

    def end_scenario(self, now_ms: int) -> None:
        """Leave the testee ready for the next scenario: close a log left open."""
        if self.log_open:
            with contextlib.suppress(TesteeFailure):
                self.request("close", {}, now_ms)
            self.log_open = False
        self.transcript = []


def _suite_version() -> str:
    from .reference import package_version

    return package_version()


def guarded(function, *args, **kwargs) -> tuple[bool, Any]:
    """Run ``function`` in the worker thread: ``(True, its result)`` or ``(False, what it
    raised)``, whatever it raised. ``SystemExit`` and ``KeyboardInterrupt`` of an
    implementation come back as values, so they fail its test and never end the run
    (issue 20 §1), while a Ctrl-C of the user still interrupts the waiting main thread."""
    try:
        return True, function(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the implementation's, judged by the caller
        return False, exc


def stack_of(exc: BaseException, frames: int = 6) -> str:
    """Where the implementation raised: its innermost frames, ``file:line in function``
    (one line, not Python's traceback: the harness did not crash, the implementation did)."""
    stack = [
        f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if Path(frame.filename).resolve().parent != Path(__file__).resolve().parent
    ]
    return f"raised at {', called from '.join(reversed(stack[-frames:]))}" if stack else ""


def raised(exc: BaseException) -> str:
    """What an implementation raised, in words: its type and message, or exit status."""
    if isinstance(exc, SystemExit):
        return f"SystemExit (exit status {printable(str(exc.code))}): it tried to end the harness"
    said = printable(str(exc))
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__
