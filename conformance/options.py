"""The options of ``klogspec conformance``, bounded and checked before a run starts.

Every value an operator gives is checked once, here, and a bad one is one line on stderr
naming the option (or the file) and the reason, exit status 2, never a traceback (issue 20
§2, §3):

* ``Seconds``: a per-request timeout, finite and within (0, 1 day]; ``inf``, ``nan``,
  zero and negative numbers are refused;
* ``read_input``: an input file (``--expected-failures``) is opened only when it is a
  regular file (a FIFO would block, ``/dev/zero`` never ends), at most ``MAX_INPUT_BYTES``,
  and must be UTF-8 (the first bad byte's position is named);
* ``check_output`` / ``write_output``: an output file (``--report``, ``--junit``,
  ``--trace``, ``--write-expected-failures``) must be creatable before the run starts
  (not a directory, its directory exists, it opens for writing; a pipe must have a reader,
  so ``--report /dev/stdout`` works), and a write that fails afterwards (``/dev/full``,
  ``/proc/version``) is an error naming the file.
"""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path

import click

from .scratch import kind_of

MAX_INPUT_BYTES = 1 << 20  # an expected-failure file: ~20,000 lines, the suite has ~400 tests
MAX_TIMEOUT_S = 86_400.0
NO_READER = "a FIFO or socket that no process reads"

EXIT_OK = 0  # klogspec conformance: the run passed
EXIT_FAIL = 1  # a MUST failed, or a file is not what it should be
EXIT_USAGE = 2  # the command could not run (cli.py's docstring)


class OptionError(Exception):
    """A bad option value or file: the message names it; the command exits 2."""


class Seconds(click.ParamType):
    """A positive, finite number of seconds, at most a day."""

    name = "seconds"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!s} is not a number of seconds", param, ctx)
        if not math.isfinite(number) or not 0 < number <= MAX_TIMEOUT_S:
            self.fail(
                f"{value!s} is not a number of seconds above 0 and at most {MAX_TIMEOUT_S:.0f}",
                param,
                ctx,
            )
        return number


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def read_input(path: str, option: str) -> str:
    """The text of a small regular UTF-8 file an option names (a link to one is fine)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise OptionError(f"{option} {path}: cannot be read: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        what = kind_of(info.st_mode)
        if what is not None:
            raise OptionError(f"{option} {path}: is {what}, not a regular file")
        if info.st_size > MAX_INPUT_BYTES:
            raise OptionError(
                f"{option} {path}: {info.st_size} bytes, more than the {MAX_INPUT_BYTES} "
                "an expected-failure file may hold"
            )
        data = os.read(fd, MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise OptionError(f"{option} {path}: cannot be read: {_reason(exc)}") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise OptionError(
            f"{option} {path}: not UTF-8 text: byte {exc.start} (line {line}) is "
            f"0x{data[exc.start]:02x}"
        ) from None


def check_output(path: str, option: str) -> None:
    """Refuse, before the run, an output path that cannot be written: a directory, a
    missing directory on the way, a file that does not open for writing. The file is
    created (empty) when missing, and left as it is otherwise."""
    target = Path(path)
    if target.is_dir():
        raise OptionError(f"{option} {path}: is a directory")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    try:  # O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of blocking
        os.close(os.open(path, flags | os.O_NONBLOCK, 0o644))
    except OSError as exc:
        reason = NO_READER if exc.errno == errno.ENXIO else _reason(exc)
        raise OptionError(f"{option} {path}: cannot be written: {reason}") from None


def write_output(path: str, option: str, data: bytes) -> None:
    """``data`` into ``path``; an OSError (no space, EIO) names the file."""
    try:
        with open(path, "wb") as file:
            file.write(data)
    except OSError as exc:
        raise OptionError(f"{option} {path}: cannot be written: {_reason(exc)}") from None


class TraceFile:
    """``--trace``: a text file that never fails the run. The first write error (a full
    disk, ``/dev/full``) is kept, later lines are dropped, and the command reports it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.error: str | None = None
        try:
            self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise OptionError(f"--trace {path}: cannot be written: {_reason(exc)}") from None

    def write(self, text: str) -> None:
        if self.error is None:
            try:
                self._file.write(text)
            except OSError as exc:
                self.error = _reason(exc)

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as exc:
            self.error = self.error or _reason(exc)
        if self.error is not None:
            raise OptionError(f"--trace {self.path}: cannot be written: {self.error}")
