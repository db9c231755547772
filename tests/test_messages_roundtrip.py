"""Every message of every internal-topic table, at every version it has, written from values
hypothesis draws and read back (message_writer.py and message_reader.py read the tables
alike): all 89 messages at all their 111 versions, tagged, nullable and nested
fields included (spec/formats/internal-topics/message-encoding.md §2)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.messages.message_reader import read_message
from reference_impl.messages.message_writer import write_message
from reference_impl.messages.schema import TABLES, Field, load_table
from reference_impl.messages.wire import Reader

INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
CASES = [
    (name, message, version)
    for table in TABLES
    for name, message in load_table(table).messages.items()
    for version in range(message.valid.low, message.valid.high + 1)
]


def element(f: Field, type_: str, version: int):
    if type_ in INTS:
        bits = INTS[type_]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if type_ in ("uint16", "uint32"):
        return st.integers(0, (1 << int(type_[4:])) - 1)
    if type_ == "float64":
        return st.floats(allow_nan=False)
    if type_ == "bool":
        return st.booleans()
    if type_ == "uuid":
        return st.binary(min_size=16, max_size=16).map(
            lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
        )
    if type_ == "string":
        return st.text(max_size=8)
    if type_ in ("bytes", "records"):
        return st.binary(max_size=8).map(lambda b: base64.b64encode(b).decode())
    return struct_values(f.fields, version)


def value(f: Field, version: int):
    if f.type.startswith("[]"):
        strategy = st.lists(element(f, f.type[2:], version), max_size=3)
    else:
        strategy = element(f, f.type, version)
    return (st.none() | strategy) if version in f.nullable else strategy


def struct_values(fields, version: int):
    required = {
        f.name: value(f, version) for f in fields if version in f.versions and f.tag is None
    }
    optional = {
        f.name: value(f, version) for f in fields if version in f.versions and f.tag is not None
    }
    return st.fixed_dictionaries(required, optional=optional)


@pytest.mark.req("MSG-2", "MSG-3", "MSG-5", "MSG-6")
@pytest.mark.parametrize(
    ("name", "message", "version"), CASES, ids=[f"{n}-v{v}" for n, _, v in CASES]
)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_message_version_round_trips(name, message, version, data):
    values = data.draw(struct_values(message.fields, version))
    blob = write_message(message, version, values)
    reader = Reader(blob)
    assert read_message(reader, message, version) == values
    assert reader.remaining == 0


def test_the_round_trip_covers_every_table():
    assert len(CASES) == sum(
        m.valid.high - m.valid.low + 1 for t in TABLES for m in load_table(t).messages.values()
    )
    assert {t for t in TABLES} == {"consumer_offsets", "transaction_state", "share_group_state",
                                   "cluster_metadata", "remote_log_metadata", "control_records",
                                   "quorum_state"}  # fmt: skip
