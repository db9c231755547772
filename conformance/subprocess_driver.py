"""The subprocess transport (DESIGN.md §2; docs/conformance/implementers.md: the
JSON-lines protocol): a testee command, one JSON line per request and per response. What
the harness reads from it is bounded (PROTO-5: a line of at most ``MAX_LINE_BYTES``,
``MAX_DEPTH`` levels of nesting) and whatever it echoes (a message, the stderr tail) is
escaped and cut (``diagnostics.printable``).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import signal
import subprocess
import tempfile
import threading
from typing import Any

from .diagnostics import MAX_TAIL, printable
from .driver import TOO_LONG, Driver, TesteeFailure, TesteeSpec
from .protocol import (
    MAX_DEPTH,
    MAX_LINE_BYTES,
)


class SubprocessDriver(Driver):
    """Starts ``spec.command``; one JSON line per request and per response. stderr is kept
    in a temporary file and its tail is shown when the testee fails."""

    def __init__(self, spec: TesteeSpec, timeout: float) -> None:
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
