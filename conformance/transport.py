"""The two transports of the contract (DESIGN.md §2), behind one ``Driver`` interface.

``InProcessDriver`` calls a Python object of the in-process contract (adapter.py);
``SubprocessDriver`` starts a testee command and speaks JSON lines to it. Both send and
receive the same messages, validated against ``schemas/protocol.schema.json``, so the
runner never knows which one it drives.

A testee that crashes (exits, or raises something that is not an error code), hangs past
the per-request timeout, or answers with something that is not a valid response raises
``TesteeFailure``: the current test fails with that kind, the testee is restarted (a new
process, or a new adapter object) for the next test, and the run goes on. An in-process
implementation's ``SystemExit`` and ``KeyboardInterrupt`` are crashes like any other
exception (``_guarded``). What the harness reads from a testee is bounded (PROTO-5: a line
of at most ``MAX_LINE_BYTES``, ``MAX_DEPTH`` levels of nesting) and whatever it echoes (a
message, the stderr tail) is escaped and cut (``diagnostics.printable``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import importlib.util
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from .adapter import call, error_code
from .diagnostics import MAX_TAIL, printable
from .protocol import (
    MAX_DEPTH,
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    nesting_errors,
    request_errors,
    response_errors,
)

DEFAULT_TIMEOUT_S = 10.0
TOO_LONG = object()  # what the stdout pump puts for a line over MAX_LINE_BYTES
IMPLEMENTATIONS_GROUP = "klogspec.implementations"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the directory holding conformance/


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


def _python_env() -> dict[str, str]:
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
        return ImplSpec(f"{spec} (subprocess)", "subprocess", command=command, env=_python_env())
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


def load_factory(path: str):
    module, _, attr = path.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


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

    def __init__(self, spec: ImplSpec, timeout: float) -> None:
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
    from .reference import _version

    return _version()


def _guarded(function, *args, **kwargs) -> tuple[bool, Any]:
    """Run ``function`` in the worker thread: ``(True, its result)`` or ``(False, what it
    raised)``, whatever it raised. ``SystemExit`` and ``KeyboardInterrupt`` of an
    implementation come back as values, so they fail its test and never end the run
    (issue 20 §1), while a Ctrl-C of the user still interrupts the waiting main thread."""
    try:
        return True, function(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the implementation's, judged by the caller
        return False, exc


def _stack(exc: BaseException, frames: int = 6) -> str:
    """Where the implementation raised: its innermost frames, ``file:line in function``
    (one line, not Python's traceback: the harness did not crash, the implementation did)."""
    stack = [
        f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if Path(frame.filename).resolve().parent != Path(__file__).resolve().parent
    ]
    return f"raised at {', called from '.join(reversed(stack[-frames:]))}" if stack else ""


def _raised(exc: BaseException) -> str:
    """What an implementation raised, in words: its type and message, or exit status."""
    if isinstance(exc, SystemExit):
        return f"SystemExit (exit status {printable(str(exc.code))}): it tried to end the harness"
    said = printable(str(exc))
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


class InProcessDriver(Driver):
    """Calls the adapter in a worker thread so that a hung call can time out."""

    def __init__(self, spec: ImplSpec, timeout: float) -> None:
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
            ok, value = self._pool.submit(_guarded, self._factory).result(self.timeout)
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
                f"the factory {self.spec.factory} raised {_raised(exc)}",
                _stack(exc),
                cause="crashed: the factory raised",
            ) from None

    def _exchange(self, request: dict) -> Any:
        future = self._pool.submit(
            _guarded, call, self._adapter, request["op"], request["args"], request["now_ms"]
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
                    f"{request['op']} raised {_raised(exc)}",
                    _stack(exc),
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
                future = self._pool.submit(_guarded, crash, now_ms=now_ms)
                # a crash that crashes (or exits, or hangs) is still a crash
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    future.result(self.timeout)
        self._adapter = None  # abandoned, as a killed process is

    def _kill(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None
        self._adapter = None


class SubprocessDriver(Driver):
    """Starts ``spec.command``; one JSON line per request and per response. stderr is kept
    in a temporary file and its tail is shown when the testee fails."""

    def __init__(self, spec: ImplSpec, timeout: float) -> None:
        super().__init__(spec, timeout)
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue | None = None
        self._stderr = None
        self._spare: tuple | None = None

    def _spawn(self) -> tuple[subprocess.Popen, queue.Queue, Any]:
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept open while the testee runs
        env = {**os.environ, **self.spec.env}
        try:
            proc = subprocess.Popen(
                self.spec.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            stderr.close()
            reason = exc.strerror or str(exc)
            raise TesteeFailure(
                "crashed",
                f"cannot run {shlex.join(self.spec.command)}: {reason}",
                cause="crashed: the command cannot run",
            ) from None
        lines: queue.Queue = queue.Queue()
        stdout = proc.stdout

        def pump() -> None:
            """Lines of at most MAX_LINE_BYTES: a longer one is put as TOO_LONG and the pump
            stops (the testee is killed), so an endless line cannot grow the harness. A
            stdout closed by _kill ends it quietly."""
            try:
                for line in iter(lambda: stdout.readline(MAX_LINE_BYTES + 1), b""):
                    if len(line) > MAX_LINE_BYTES:
                        lines.put(TOO_LONG)
                        return
                    lines.put(line)
            except (ValueError, OSError):  # closed under us: the testee was killed
                pass
            lines.put(None)

        threading.Thread(target=pump, daemon=True, name="testee-stdout").start()
        return proc, lines, stderr

    def _start(self) -> None:
        """Take the spare process (started while the last one ran, so its start-up cost is
        already paid) or start one; then start the next spare. A crash scenario kills the
        testee, so a fresh process is needed often."""
        spare, self._spare = self._spare, None
        if spare is not None and spare[0].poll() is not None:
            self._discard(spare)
            spare = None
        self._proc, self._lines, self._stderr = spare or self._spawn()
        try:
            self._spare = self._spawn()
        except TesteeFailure:
            self._spare = None

    @staticmethod
    def _discard(spawned) -> None:
        proc, _, stderr = spawned
        _kill_process(proc)
        stderr.close()

    def stderr_tail(self, limit: int = MAX_TAIL) -> str:
        """The end of what the testee wrote to stderr, control characters escaped."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            text = self._stderr.read().decode("utf-8", "replace")
            return printable(text, limit, "end", lines=True)
        except (OSError, ValueError):
            return ""

    def _running(self) -> bool:
        return self._proc is not None

    def _launch(self) -> None:
        self._start()

    def _exchange(self, request: dict) -> Any:
        line = json.dumps(request, separators=(",", ":")).encode("utf-8") + b"\n"
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died(request["op"])
        try:
            answer = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise TesteeFailure(
                "timeout",
                f"no answer to {request['op']} within {self.timeout} s",
                self.stderr_tail(),
                cause=f"timeout during {request['op']}",
            ) from None
        if answer is None:
            raise self._died(request["op"])
        if answer is TOO_LONG:
            raise TesteeFailure(
                "protocol",
                f"the answer to {request['op']} is longer than {MAX_LINE_BYTES} bytes without "
                "a newline (the protocol's line limit)",
                self.stderr_tail(),
                cause=f"protocol: the answer to {request['op']} is too long",
            )
        try:
            return json.loads(answer)
        except RecursionError:
            raise TesteeFailure(
                "protocol",
                f"the answer to {request['op']} nests deeper than {MAX_DEPTH} levels "
                "(the protocol's nesting limit)",
                self.stderr_tail(),
                cause=f"protocol: the answer to {request['op']} nests too deep",
            ) from None
        except ValueError:
            text = json.dumps(answer[:200].decode("utf-8", "replace"))
            raise TesteeFailure(
                "protocol",
                f"the answer to {request['op']} is not JSON: {text}",
                self.stderr_tail(),
                cause=f"protocol: the answer to {request['op']} is not JSON",
            ) from None

    def _died(self, op: str) -> TesteeFailure:
        code = None
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        status = "still running" if code is None else f"status {code}"
        return TesteeFailure(
            "crashed",
            f"the testee exited ({status}) during {op}",
            self.stderr_tail(),
            cause=f"crashed: exited during {op}",
        )

    def _crash(self, now_ms: int) -> None:
        self._kill()  # subprocess: crash means killed

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            _kill_process(proc)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self._lines = None

    def shutdown(self) -> None:
        self._kill()
        if self._spare is not None:
            self._discard(self._spare)
            self._spare = None


def _kill_process(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for pipe in (proc.stdin, proc.stdout):
        with contextlib.suppress(OSError):
            pipe.close()
