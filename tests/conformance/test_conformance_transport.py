"""The two transports of the contract: the same messages, validated; a misbehaving testee
fails the request it was given, never the harness."""

from __future__ import annotations

import base64
import sys
import time
from pathlib import Path

import pytest

from conformance.adapter import OperationError
from conformance.protocol import request_errors, response_errors, schema_errors
from conformance.transport import TesteeFailure, resolve_impl
from reference_impl.records import SimpleRecord, build_record_batch

BAD_TESTEE = Path(__file__).with_name("bad_testee.py")
BATCH = base64.b64encode(build_record_batch([SimpleRecord(value=b"v", timestamp=5)])).decode()
APPEND = {"batches": [BATCH], "assign_offsets": True, "leader_epoch": 0}


@pytest.fixture(params=["inproc", "subprocess"])
def driver(request):
    d = resolve_impl("reference", request.param).driver(timeout=20)
    yield d
    d.shutdown()


def test_schema_is_valid_draft_2020_12():
    from jsonschema import Draft202012Validator

    from conformance.protocol import load_schema

    Draft202012Validator.check_schema(load_schema("protocol.schema.json"))


def test_reference_round_trip(driver, tmp_path):
    hello = driver.hello()
    assert hello["name"] and "crash_recovery" in hello["features"]
    opened = driver.request("open", {"dir": str(tmp_path / "t-0"), "config": {}}, 1000)
    assert opened.ok and opened.result["segments"] == [{"base_offset": 0, "size_bytes": 0}]
    appended = driver.request("append", APPEND, 1000)
    assert (appended.result["first_offset"], appended.result["last_offset"]) == (0, 0)
    read = driver.request(
        "read", {"start_offset": 0, "max_bytes": 100, "min_one_message": False}, 1
    )
    assert base64.b64decode(read.result["data"]) == base64.b64decode(BATCH)[:0] + base64.b64decode(
        read.result["data"]
    )
    assert read.result["fetch_offset_metadata"]["segment_base_offset"] == 0
    refused = driver.request(
        "read", {"start_offset": 9, "max_bytes": 100, "min_one_message": False}, 1
    )
    assert (refused.ok, refused.code) == (False, "OFFSET_OUT_OF_RANGE")
    driver.crash(1000)
    reopened = driver.request("open", {"dir": str(tmp_path / "t-0"), "config": {}}, 1000)
    assert reopened.result["log_end_offset"] == 1
    assert driver.request("close", {}, 1000).ok
    assert driver.request("state", {}, 1000).code == "LOG_CLOSED"


def test_invalid_config_is_invalid_argument(driver, tmp_path):
    response = driver.request(
        "open", {"dir": str(tmp_path / "t-0"), "config": {"segment_bytes": 1}}, 0
    )
    assert (response.ok, response.code) == (False, "INVALID_ARGUMENT")


def test_harness_refuses_to_send_an_invalid_request(driver):
    with pytest.raises(ValueError, match="invalid read request"):
        driver.request("read", {"start_offset": "zero"}, 0)


def test_messages_are_checked_against_the_schemas():
    assert request_errors({"id": 1, "op": "state", "args": {}, "now_ms": 0}) == []
    assert request_errors({"id": 1, "op": "explode", "args": {}, "now_ms": 0})
    assert request_errors({"id": 1, "op": "read", "args": {"start_offset": 0}, "now_ms": 0})
    assert response_errors({"id": 1, "ok": True, "result": {"base_offset": 3}}, "roll") == []
    assert response_errors({"id": 1, "ok": True, "result": {"base_offset": "3"}}, "roll")
    assert response_errors({"id": 1, "ok": False, "error": {"code": "record_too_large"}}, "append")
    assert schema_errors(
        {"found": True}, "protocol.schema.json", "/$defs/fetch_offset_by_timestamp_result"
    )


def _bad(mode: str, timeout: float = 5):
    spec = resolve_impl(f"cmd:{sys.executable} {BAD_TESTEE} {mode}")
    return spec.driver(timeout=timeout)


@pytest.mark.req("PROTO-1")
@pytest.mark.parametrize(
    ("mode", "kind", "text"),
    [
        ("junk", "protocol", "not JSON"),
        ("exit", "crashed", "exited"),
        ("schema", "protocol", "first_offset"),
        ("wrong-id", "protocol", "id"),
        ("lowercase-code", "protocol", "code"),
        ("hang", "timeout", "within"),
    ],
)
def test_a_misbehaving_subprocess_fails_only_its_request(mode, kind, text, tmp_path):
    driver = _bad(mode, timeout=1.0)
    try:
        assert driver.request("open", {"dir": str(tmp_path), "config": {}}, 0).ok
        started = time.monotonic()
        with pytest.raises(TesteeFailure) as failure:
            driver.request("append", APPEND, 0)
        assert failure.value.kind == kind
        assert text in failure.value.message
        assert time.monotonic() - started < 5
        if mode == "exit":
            assert "boom" in failure.value.detail  # stderr is kept, not lost
        # the next request goes to a fresh process, which says hello first
        assert driver.request("state", {}, 0).ok
    finally:
        driver.shutdown()


class _Flaky:
    """An in-process adapter that raises, hangs or refuses on append."""

    def __init__(self, mode):
        self.mode = mode

    def hello(self, *, now_ms):
        return {"name": "flaky", "version": "0", "features": []}

    def state(self, *, now_ms):
        return {"log_start_offset": 0, "log_end_offset": 0, "recovery_point": 0, "segments": []}

    def append(self, batches, assign_offsets, leader_epoch, *, now_ms):
        if self.mode == "raise":
            raise RuntimeError("bug")
        if self.mode == "hang":
            time.sleep(3)
        if self.mode == "bytes":
            return {"first_offset": b"\x00", "last_offset": 0}
        raise OperationError("RECORD_TOO_LARGE", "too big")


def flaky_raise():
    return _Flaky("raise")


def flaky_hang():
    return _Flaky("hang")


def flaky_bytes():
    return _Flaky("bytes")


def flaky_refuse():
    return _Flaky("refuse")


@pytest.mark.parametrize(
    ("factory", "kind"),
    [("flaky_raise", "crashed"), ("flaky_hang", "timeout"), ("flaky_bytes", "protocol")],
)
def test_a_misbehaving_adapter_fails_only_its_request(factory, kind):
    driver = resolve_impl(f"{__name__}:{factory}").driver(timeout=0.5)
    try:
        with pytest.raises(TesteeFailure) as failure:
            driver.request("append", APPEND, 0)
        assert failure.value.kind == kind
        assert driver.request("state", {}, 0).ok
    finally:
        driver.shutdown()


def test_operation_error_is_an_error_response():
    driver = resolve_impl(f"{__name__}:flaky_refuse").driver()
    response = driver.request("append", APPEND, 0)
    assert (response.ok, response.code) == (False, "RECORD_TOO_LARGE")
    driver.shutdown()


def test_unknown_implementation_is_refused():
    with pytest.raises(ValueError, match="unknown implementation"):
        resolve_impl("no-such-implementation")
