"""Serve an in-process implementation over the JSON-lines protocol (DESIGN.md §2).

``klogspec testee`` (or ``python -m conformance.testee``) serves the reference
implementation on stdin/stdout; ``serve(factory())`` does the same for any object of
the in-process contract (adapter.py), which is how the subprocess mutants are built.

One request per line, one response per line, in order. stdout carries responses only;
logs go to stderr. ``crash`` is never sent by the harness (it kills the process); a
testee that receives it exits at once without answering.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, BinaryIO

from .adapter import call, error_code
from .protocol import OPS


def _reply(out: BinaryIO, message: dict) -> None:
    out.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
    out.flush()


def handle(adapter: Any, request: Any) -> dict:
    """One request object to one response object: INVALID_REQUEST for a request that is
    not one (PROTO-2), INTERNAL_ERROR for an exception that is not a refusal (PROTO-3)."""
    request_id = request.get("id", 0) if isinstance(request, dict) else 0
    if not isinstance(request, dict) or not isinstance(request.get("op"), str):
        return _invalid(request_id, "not a request object with an op")
    if request["op"] not in OPS or not callable(getattr(adapter, request["op"], None)):
        return _invalid(request_id, f"unsupported op {request['op']}")
    try:
        result = call(adapter, request["op"], request.get("args") or {}, request.get("now_ms", 0))
    except Exception as exc:  # noqa: BLE001 - every failure becomes a response
        code = error_code(exc)
        if code is None:
            traceback.print_exc(file=sys.stderr)
            code = "INTERNAL_ERROR"
        message = getattr(exc, "message", None) or str(exc)
        return {"id": request_id, "ok": False, "error": {"code": code, "message": str(message)}}
    return {"id": request_id, "ok": True, "result": result}


def _invalid(request_id: Any, message: str) -> dict:
    return {"id": request_id, "ok": False, "error": {"code": "INVALID_REQUEST", "message": message}}


def serve(adapter: Any, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            _reply(stdout, _invalid(0, "not JSON"))
            continue
        if isinstance(request, dict) and request.get("op") == "crash":
            os._exit(137)
        _reply(stdout, handle(adapter, request))


def main(argv: list[str] | None = None) -> None:
    """``python -m conformance.testee [--factory module:attr]``: serve the reference, or the
    object the factory returns."""
    argv = sys.argv[1:] if argv is None else argv
    factory_path = "conformance.reference:factory"
    if len(argv) == 2 and argv[0] == "--factory":
        factory_path = argv[1]
    elif argv:
        sys.exit("usage: python -m conformance.testee [--factory module:attr]")
    from .transport import load_factory

    try:
        adapter = load_factory(factory_path)()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the factory is the user's code
        from .diagnostics import printable

        said = printable(f"{type(exc).__name__}: {exc}")
        print(f"error: the factory {factory_path} made no implementation: {said}", file=sys.stderr)
        sys.exit(2)
    serve(adapter)


if __name__ == "__main__":
    main()
