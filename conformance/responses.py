"""Checking a testee's response to a step (docs/conformance/results.md: ``missing_error``,
``wrong_error``, ``unexpected_error``, ``wrong_result``, ``changed``, ``invariant``,
``golden_response``).

``ResponseChecks`` is the part of a ``Run`` (steps.py) that sends the steps' requests and
checks each response: against the step's ``expect``, the state rules every ``open`` and
``state`` response keeps (MODEL-1, MODEL-4, TXN-B-7, ROLL-21), whether a refused operation
changed anything (MODEL-11, APPEND-27), and against the reference's response to the same
request (the goldens). It reads and records through the run's ``RunState`` (run_state.py).
"""

from __future__ import annotations

import base64
from dataclasses import replace

from reference_impl.errors import KafkaLogError
from reference_impl.records import iter_batches

from . import check_rules, same_records
from .diagnostics import (
    bytes_difference,
    names,
    printable,
    show,
)
from .disk import epoch_entries
from .run_state import RunState
from .transport import Response

FEATURE_RESULTS = {  # result fields only a testee claiming the feature is compared on
    "last_stable_offset": ("transaction_index", ["TXN-B-7"]),
    "aborted_transactions": ("transaction_index", ["READ-22"]),
}


def normalized(op: str, response: Response) -> dict:
    if response.ok:
        return {"op": op, "ok": True, "result": response.result}
    return {"op": op, "ok": False, "code": response.code}


class _Absent:
    """A result field the testee did not answer (shown as ``absent``)."""

    def __repr__(self) -> str:
        return "absent"


ABSENT = _Absent()


class ResponseChecks:
    """The response checks of a ``Run`` (the module docstring)."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.may_taken: frozenset[str] = frozenset()  # the MAY rules whose answer was given

    def send(self, op: str, args: dict) -> Response:
        """A step's request to the testee, its response recorded (``RunState.responses``)."""
        state = self.state
        response = state.driver.request(op, args, state.now)
        state.responses.append({"step": state.step_index, **normalized(op, response)})
        return response

    def check_response(self, op: str, args: dict, expect: dict, reqs: list[str]) -> Response:
        """Send a request and check its response: against the step's ``expect``, the state
        rules, ``unchanged`` (MODEL-11) and, with goldens, against the reference's."""
        state = self.state
        before = self._observe() if expect.get("unchanged") else None
        response = self.send(op, args)
        problems_before = len(state.failures)
        self._check_expected(op, expect, response, reqs)
        if response.ok and op in ("open", "state"):
            self.check_state_rules(response.result)
        if before is not None:
            self._check_unchanged(op, before, reqs)
        if state.golden is not None and len(state.failures) == problems_before:
            self._compare_response(op, response, reqs, any_code=bool(expect.get("refused")))
        return response

    def _check_expected(self, op: str, expect: dict, response: Response, reqs: list[str]) -> None:
        """The response against the step's ``expect``: the refusal or error it names, else
        success and the result fields it names."""
        fail = self.state.fail
        wanted = expect.get("error")
        if expect.get("refused"):  # the rule leaves the code open: any refusal passes
            if response.ok:
                fail("missing_error", f"{op}: succeeded, expected a refusal", reqs)
        elif wanted is not None:
            if response.ok:
                fail(
                    "missing_error", f"succeeded, expected {wanted}", reqs,
                    cause=f"{op}: succeeded, expected {wanted}",
                )  # fmt: skip
            elif response.code != wanted:
                fail(
                    "wrong_error", f"refused with {response.code}, expected {wanted}", reqs,
                    cause=f"{op}: refused with {response.code}, expected {wanted}",
                )  # fmt: skip
        elif not response.ok:
            said = f" ({printable(response.message)})" if response.message else ""
            fail(
                f"unexpected_error:{response.code}", f"refused with {response.code}{said}", reqs,
                cause=f"{op}: refused with {response.code}",
            )  # fmt: skip
        else:
            for key, want, have in self._mismatches(op, expect, response.result):
                shown = "absent" if have is ABSENT else show(have)
                optional = (op, key) in check_rules.OPTIONAL_RESULT_FIELDS
                fail(
                    "wrong_result", f"{key} is {shown}, expected {show(want)}",
                    check_rules.response_field_rules(op, key) if optional else reqs,
                    cause=f"{op}: {key} differs from the scenario's",
                )  # fmt: skip

    def _check_unchanged(self, op: str, before: tuple[dict, dict | None], reqs: list[str]) -> None:
        """``unchanged``: a refused operation changed neither files nor state (MODEL-11),
        but for the leader epoch entries a refused append may add (APPEND-27)."""
        after = self._observe()
        if after == before or (op == "append" and _only_epochs_added(before, after)):
            return
        changed = sorted(
            k for k in set(before[0]) | set(after[0]) if before[0].get(k) != after[0].get(k)
        )
        what = (
            f"the files {names(changed)}"
            if changed
            else f"the state {show(before[1])} -> {show(after[1])}"
        )
        self.state.fail(
            "changed",
            f"a refused operation changed {what}",
            sorted(set(reqs) | {"MODEL-11"}),
            cause=f"{op}: a refused operation changed {'files' if changed else 'the state'}",
        )

    def check_response_or_may(
        self, op: str, args: dict, expect: dict, may: dict | None, reqs: list[str]
    ) -> Response:
        """``check_response``, and when the step names a MAY answer (``may``: its rule and
        the fields that answer must have) and the response is that answer instead, the
        step's failures give way to the MAY's choice (spec README §1.6): they count only for
        a ``kafka_exact`` testee, as do the run's golden differences (``settle_choices``)."""
        mark = len(self.state.failures)
        response = self.check_response(op, args, expect, reqs)
        if not may or len(self.state.failures) == mark or not response.ok:
            return response
        if any(True for _ in self._mismatches(op, may["expect"], response.result)):
            return response  # neither answer: the scenario's own failures stand
        taken = self.state.failures[mark:]
        del self.state.failures[mark:]
        self.may_taken = self.may_taken | {may["rule"]}
        for failure in taken:
            self.state.fail(failure.category, failure.message, failure.requirements,
                      cause=failure.cause, choice=[may["rule"]])  # fmt: skip
        return response

    def settle_choices(self) -> None:
        """A testee that gave a step's MAY answer differs from the reference's goldens
        because of it: its golden differences rest on that MAY too (spec README §1.6)."""
        if not self.may_taken:
            return
        kept, self.state.failures = self.state.failures, []
        for f in kept:
            if f.category.startswith("golden_"):
                f = replace(f, choice=sorted(set(f.choice) | self.may_taken))
                if check_rules.open_choice(f.choice, self.state.features):
                    continue
            self.state.failures.append(f)

    def _mismatches(self, op: str, expect: dict, result: dict):
        """(field, wanted, answered) of each result field that differs from ``expect``."""
        for key, want in expect.items():
            if key in ("unchanged", "error", "refused"):
                continue
            have = self._actual(op, key, result)
            if have is ABSENT and (op, key) in check_rules.OPTIONAL_RESULT_FIELDS:
                continue  # a testee may leave it out
            if key == "aborted_transactions" and isinstance(want, list):
                want = sorted(want)  # in any order (READ-22)
            if have != want:
                yield key, want, have

    def _observe(self) -> tuple[dict, dict | None]:
        files = self.state.visible_files()
        state = None
        if self.state.log_open:
            response = self.state.driver.request("state", {}, self.state.now)
            state = response.result if response.ok else {"error": response.code}
        return files, state

    def _actual(self, op: str, key: str, result: dict):
        """The response's value for an expectation's ``key``: a view of the result
        (RESULT_VIEWS), of a read's bytes (READ_DATA_VIEWS) or of its decoded batches
        (READ_BATCH_VIEWS), else the field itself."""
        if key in RESULT_VIEWS:
            return RESULT_VIEWS[key](result)
        if op != "read" or key not in READ_DATA_VIEWS.keys() | READ_BATCH_VIEWS.keys():
            return result.get(key, ABSENT)
        data = base64.b64decode(result["data"])
        if key in READ_DATA_VIEWS:
            return READ_DATA_VIEWS[key](data, result)
        try:
            batches = list(iter_batches(data))
        except KafkaLogError as exc:
            return f"undecodable ({exc.category.value})"
        return READ_BATCH_VIEWS[key](batches)

    def check_state_rules(self, log_state: dict) -> None:
        """The rules every ``open`` and ``state`` response keeps (MODEL-1, MODEL-4,
        TXN-B-7, ROLL-21); the epilogue checks its reopen's with it too."""
        fail, features = self.state.fail, self.state.features
        # MODEL-4: above the LEO only at the base offset of a segment rolled in beyond it
        active_base = max((s["base_offset"] for s in log_state["segments"]), default=0)
        if log_state["recovery_point"] > max(log_state["log_end_offset"], active_base):
            fail(
                "invariant",
                f"recovery point {log_state['recovery_point']} above both the LEO "
                f"{log_state['log_end_offset']} and the active segment's base offset {active_base}",
                ["MODEL-4"],
                cause="the recovery point above the LEO",
            )
        lso = log_state.get("last_stable_offset")
        if (
            lso is not None
            and "transaction_index" in features
            and not min(log_state["log_start_offset"], log_state["log_end_offset"])
            <= lso
            <= log_state["log_end_offset"]
        ):
            fail(
                "invariant",
                f"last stable offset {lso} outside [log start offset "
                f"{log_state['log_start_offset']}, LEO {log_state['log_end_offset']}]",
                ["TXN-B-7"],
                cause="the last stable offset outside the log",
            )
        bases = [s["base_offset"] for s in log_state["segments"]]
        if bases != sorted(set(bases)):
            fail(
                "invariant",
                f"segment base offsets {show(bases)} do not strictly increase",
                ["MODEL-1"],
                cause="segment base offsets that do not increase",
            )
        limit = self.state.config.get("segment_bytes")
        if limit is not None and not self.state.damaged:
            for s in log_state["segments"]:
                if s["size_bytes"] > limit:
                    fail(
                        "invariant",
                        f"segment {s['base_offset']} holds {s['size_bytes']} bytes, above segment_bytes {limit}",
                        ["ROLL-21"],
                        cause="a segment above segment_bytes",
                    )

    def _compare_response(
        self, op: str, response: Response, reqs: list[str], any_code: bool = False
    ) -> None:
        """The response against the reference's to the same request: each field that
        differs is tagged with the rule that defines it (check_rules.py), or with the
        step's rules when no single rule does. ``any_code``: the rule leaves a refusal's
        code open, so only refused-or-not is compared."""
        index = len(self.state.responses) - 1
        golden = self.state.golden.get("responses", [])
        if index >= len(golden):
            return
        want, have = golden[index], self.state.responses[index]
        if want["op"] != op:
            return  # the scenario changed since the goldens were made
        if want["ok"] != have["ok"] or (want.get("code") != have.get("code") and not any_code):
            got = "success" if have["ok"] else have["code"]
            wanted = "success" if want["ok"] else want["code"]
            self.state.fail(
                "golden_response", f"{got}, the reference gives {wanted}", reqs,
                cause=f"{op}: {got}, the reference gives {wanted}",
            )  # fmt: skip
            return
        if not want["ok"]:
            return
        for key, value in want["result"].items():
            if key not in have["result"]:
                continue  # optional fields of the result
            if op == "append" and key == "first_offset" and value == -1:
                continue
            feature, feature_reqs = FEATURE_RESULTS.get(key, (None, []))
            if feature is not None and feature not in self.state.features:
                continue
            mine = have["result"][key]
            if key == "aborted_transactions":
                mine, value = _aborted(mine), _aborted(value)  # in any order
            if mine == value:
                continue
            if self.state.recompressed and _same_records_result(op, key, mine, value):
                continue  # a rewritten compressed batch, compared as records (COMPACT-28)
            if op == "read" and key == "data":
                shown = bytes_difference(base64.b64decode(mine), base64.b64decode(value))
                message = f"data differs from the reference's: {shown}"
            else:
                message = f"{key} is {show(mine)}, the reference gives {show(value)}"
            rules = check_rules.response_field_rules(op, key) or sorted(
                set(reqs) | set(feature_reqs)
            )
            self.state.fail(
                "golden_response", message, rules,
                cause=f"{op}: {key} differs from the reference's",
            )  # fmt: skip


def _same_records_result(op: str, key: str, mine, value) -> bool:
    """A response field a recompressed batch may change (COMPACT-28): a byte counter, or a
    read's data holding the same records."""
    if key in same_records.SIZE_DERIVED.get(op, ()):
        return True
    if op == "read" and key == "data":
        return same_records.same_records(base64.b64decode(mine), base64.b64decode(value))
    return False


def _fetch_offset_metadata(result: dict) -> list[int]:
    m = result["fetch_offset_metadata"]
    return [m["message_offset"], m["segment_base_offset"], m["relative_position_in_segment"]]


def _keys(batches) -> list[str | None]:
    """Which keys a cleaning kept (compaction), in offset order."""
    return [
        None if r.key is None else r.key.decode("utf-8", "replace")
        for b in batches
        for r in b.records()
    ]


# what an expectation's key compares, where it is not a field of the response as it stands
RESULT_VIEWS = {
    "segments": lambda r: [[s["base_offset"], s["size_bytes"]] for s in r.get("segments", ())],
    "segment_bases": lambda r: [s["base_offset"] for s in r.get("segments", ())],
    "aborted_transactions": lambda r: _aborted(r.get("aborted_transactions", ABSENT)),
    "fetch_offset_metadata": _fetch_offset_metadata,
}
# a read's bytes as they came
READ_DATA_VIEWS = {
    "size": lambda data, result: len(data),
    "empty": lambda data, result: not data and not result["first_entry_incomplete"],
}
# a read's batches, decoded (bytes that do not decode compare as "undecodable (category)")
READ_BATCH_VIEWS = {
    "batches": lambda batches: [[b.base_offset, b.last_offset] for b in batches],
    "offsets": lambda batches: [r.offset for b in batches for r in b.records()],
    "epochs": lambda batches: [getattr(b, "partition_leader_epoch", -1) for b in batches],
    "max_timestamps": lambda batches: [b.max_timestamp for b in batches],
    "crc_valid": lambda batches: all(b.is_valid for b in batches),
    "keys": _keys,
}


def _aborted(value):
    """aborted_transactions as sorted [producer_id, first_offset] pairs (READ-22 leaves the
    order open); anything else as it is."""
    if not isinstance(value, list):
        return value
    try:
        return sorted([t["producer_id"], t["first_offset"]] for t in value)
    except (TypeError, KeyError):
        return value


def _only_epochs_added(before: tuple[dict, dict | None], after: tuple[dict, dict | None]) -> bool:
    """A refused append whose one change is leader epoch entries APPEND-27 allows."""
    (files_before, state), (files_after, state_after) = before, after
    changed = [
        k for k in set(files_before) | set(files_after) if files_before.get(k) != files_after.get(k)
    ]
    if state is None or state != state_after or len(changed) != 1:
        return False
    (name,) = changed
    if not name.endswith("leader-epoch-checkpoint") or name not in files_after:
        return False
    old = epoch_entries(files_before[name]) if files_before.get(name) else []  # CKPT-B-1
    new = epoch_entries(files_after[name])
    if old is None or new is None:
        return False
    return check_rules.epochs_a_refusal_may_add(old, new, state["log_end_offset"])
