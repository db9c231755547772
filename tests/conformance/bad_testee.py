"""A testee that misbehaves on purpose, for the harness's own tests (standalone: no imports
from the project). ``python bad_testee.py MODE``: it answers hello and open properly, then
on its first ``append`` it does what MODE says."""

import json
import sys
import time

MODE = sys.argv[1]
STATE = {"log_start_offset": 0, "log_end_offset": 0, "recovery_point": 0, "segments": []}
APPENDED = {
    "first_offset": 0,
    "last_offset": 0,
    "max_timestamp": -1,
    "offset_of_max_timestamp": -1,
    "log_append_time": -1,
}


def reply(message) -> None:
    sys.stdout.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    sys.stdout.flush()


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


ESCAPES = "\x1b[2J\x1b]0;owned\x07\u202e"  # clear the screen, set the title, reverse text

for line in sys.stdin:
    request = json.loads(line)
    rid, op = request["id"], request["op"]
    if op == "hello" and MODE == "deep-hello":  # RecursionError in the harness, before
        reply(
            f'{{"id": {rid}, "ok": true, "result": {{"name": "deep", "features": {deep(1000)}}}}}'
        )
    elif op == "append" and MODE == "deep":
        reply(f'{{"id": {rid}, "ok": true, "result": {{"first_offset": {deep(1000)}}}}}')
    elif op == "append" and MODE == "deep-but-parses":  # too deep for the limit, not for json
        reply(f'{{"id": {rid}, "ok": true, "result": {{"first_offset": {deep(100)}}}}}')
    elif op == "append" and MODE == "endless":  # one line that never ends
        chunk = "[" * (1 << 16)
        while True:
            sys.stdout.write(chunk)
    elif op == "append" and MODE == "escapes":
        sys.stderr.write((ESCAPES + "x" * 1000) * 100 + "\n" + ESCAPES + "the last line\n")
        sys.stderr.flush()
        message = ESCAPES + "m" * 1_000_000
        reply({"id": rid, "ok": False, "error": {"code": "INTERNAL_ERROR", "message": message}})
    elif op == "append" and MODE == "long-code":
        reply({"id": rid, "ok": False, "error": {"code": "A" * 1_000_000}})
    elif op == "append" and MODE == "escapes-exit":
        sys.stderr.write(ESCAPES * 10000 + "\n")
        sys.exit(3)
    elif op == "hello":
        reply({"id": rid, "ok": True, "result": {"name": "bad", "version": "0", "features": []}})
    elif op == "append" and MODE == "junk":
        reply("this is not json")
    elif op == "append" and MODE == "hang":
        time.sleep(60)
    elif op == "append" and MODE == "exit":
        print("boom: the testee fell over", file=sys.stderr)
        sys.exit(3)
    elif op == "append" and MODE == "schema":
        reply({"id": rid, "ok": True, "result": {**APPENDED, "first_offset": "zero"}})
    elif op == "append" and MODE == "wrong-id":
        reply({"id": rid + 100, "ok": True, "result": APPENDED})
    elif op == "append" and MODE == "invalid-request":
        reply(
            {
                "id": rid,
                "ok": False,
                "error": {"code": "INVALID_REQUEST", "message": "no append here"},
            }
        )
    elif op == "append" and MODE == "internal-error":
        reply({"id": rid, "ok": False, "error": {"code": "INTERNAL_ERROR", "message": "boom"}})
    elif op == "append" and MODE == "lowercase-code":
        reply({"id": rid, "ok": False, "error": {"code": "record_too_large"}})
    elif op == "append":
        reply({"id": rid, "ok": True, "result": APPENDED})
    elif op in ("open", "state"):
        reply({"id": rid, "ok": True, "result": STATE})
    else:
        reply({"id": rid, "ok": True, "result": {}})
