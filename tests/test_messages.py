"""The record-meaning layer (reference_impl/messages): Kafka's message wire types, the framings
of the internal topics and decode_record's promise never to raise
(spec/formats/internal-topics/message-encoding.md)."""

from __future__ import annotations

import base64
import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl.messages import DECODER_NAMES, decode_record, decoder_for
from reference_impl.messages.message_reader import read_message
from reference_impl.messages.schema import Message, Versions, _field
from reference_impl.messages.wire import MessageDecodeError, Reader

OFFSETS = decoder_for("offsets", None)
METADATA = decoder_for("metadata", None)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def uvar(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def s16(text):
    return i16(len(text)) + text.encode()


def cstr(text):
    return uvar(len(text) + 1) + text.encode()


TOPIC_ID = uuid.UUID("9e9d6c1b-3f0c-4a57-9d8f-1c2b3a4d5e6f").bytes
TOPIC_ID_TEXT = base64.urlsafe_b64encode(TOPIC_ID).rstrip(b"=").decode()
KEY = i16(1) + s16("g1") + s16("orders") + i32(3)


def error_of(side) -> dict:
    assert side is not None and "decode_error" in side, side
    return side["decode_error"]


@pytest.mark.req("MSG-8", "MSG-9", "MSG-2")
def test_offset_commit_key_and_value_v3():
    value = i16(3) + i64(42) + i32(7) + s16("meta") + i64(1_700_000_000_000)
    key, decoded = decode_record(OFFSETS, KEY, value)
    assert key == {"type": "OffsetCommitKey", "version": 1, "group": "g1", "topic": "orders",
                   "partition": 3}  # fmt: skip
    assert decoded == {"type": "OffsetCommitValue", "version": 3, "offset": 42, "leaderEpoch": 7,
                       "metadata": "meta", "commitTimestamp": 1_700_000_000_000}  # fmt: skip


@pytest.mark.req("MSG-2", "MSG-5", "MSG-13")
def test_flexible_value_compact_strings_and_a_tagged_uuid():
    tagged = uvar(1) + uvar(0) + uvar(16) + TOPIC_ID
    value = i16(4) + i64(42) + i32(7) + cstr("m") + i64(5) + tagged
    _, decoded = decode_record(OFFSETS, KEY, value)
    assert decoded["metadata"] == "m" and decoded["topicId"] == TOPIC_ID_TEXT
    assert "expireTimestamp" not in decoded  # version 1 only


@pytest.mark.req("MSG-5")
def test_tags_out_of_order_and_unknown_tags():
    two = uvar(2) + uvar(5) + uvar(1) + b"x" + uvar(0) + uvar(16) + TOPIC_ID
    _, decoded = decode_record(OFFSETS, KEY, i16(4) + i64(1) + i32(0) + cstr("") + i64(0) + two)
    assert error_of(decoded)["rule"] == "MSG-5"
    unknown = uvar(1) + uvar(9) + uvar(2) + b"ab"
    _, decoded = decode_record(OFFSETS, KEY, i16(4) + i64(1) + i32(0) + cstr("") + i64(0) + unknown)
    assert decoded["_unknownTaggedFields"] == [{"tag": 9, "data": "YWI="}]


@pytest.mark.req("MSG-9")
def test_a_null_value_is_a_tombstone():
    key, value = decode_record(OFFSETS, KEY, None)
    assert key["type"] == "OffsetCommitKey" and value is None


@pytest.mark.req("MSG-3")
def test_null_in_a_non_nullable_field():
    value = i16(0) + i16(-1) + i32(1) + i16(-1) + i16(-1) + i32(0)  # protocolType null
    _, decoded = decode_record(OFFSETS, i16(2) + s16("g"), value)
    assert error_of(decoded)["rule"] == "MSG-3"
    assert error_of(decoded)["position"] == 2


@pytest.mark.req("MSG-4")
def test_a_length_past_the_end():
    _, decoded = decode_record(OFFSETS, KEY, i16(3) + i64(1) + i32(0) + i16(300) + b"abc")
    assert error_of(decoded)["rule"] == "MSG-4"
    huge_array = i16(0) + s16("p") + i32(1) + s16("x") + s16("l") + i32(2**31 - 1)
    _, decoded = decode_record(OFFSETS, i16(2) + s16("g"), huge_array)
    assert error_of(decoded)["rule"] == "MSG-4"


@pytest.mark.req("MSG-6")
def test_a_nullable_struct_has_a_presence_byte():
    inner = {"name": "Inner", "type": "Inner", "versions": "0+", "nullable": "0+",
             "fields": [{"name": "A", "type": "int32", "versions": "0+"}]}  # fmt: skip
    message = Message("M", Versions.parse("0"), Versions.parse("none"), "", {}, (_field(inner),))
    assert read_message(Reader(b"\xff"), message, 0) == {"Inner": None}
    assert read_message(Reader(b"\x01" + i32(9)), message, 0) == {"Inner": {"A": 9}}


@pytest.mark.req("MSG-7")
def test_an_unknown_value_version():
    _, decoded = decode_record(OFFSETS, KEY, i16(5) + i64(1))
    assert error_of(decoded)["rule"] == "MSG-7"
    assert "no version 5" in error_of(decoded)["reason"]


@pytest.mark.req("MSG-8")
def test_an_unknown_record_type_or_a_null_key():
    key, value = decode_record(OFFSETS, i16(9) + s16("g"), i16(0))
    assert error_of(key)["rule"] == "MSG-8" and "unknown" in error_of(value)["reason"]
    assert base64.b64decode(key["base64"]) == i16(9) + s16("g")
    key, _ = decode_record(OFFSETS, None, i16(0))
    assert error_of(key)["rule"] == "MSG-8"


def topic_record(frame=1, tail=b""):
    return uvar(frame) + uvar(2) + uvar(0) + cstr("orders") + TOPIC_ID + uvar(0) + tail


@pytest.mark.req("MSG-10", "MSG-13", "META-1")
def test_a_metadata_record_in_its_frame():
    key, value = decode_record(METADATA, None, topic_record())
    assert key is None
    assert value == {
        "type": "TopicRecord",
        "version": 0,
        "Name": "orders",
        "TopicId": TOPIC_ID_TEXT,
    }


@pytest.mark.req("MSG-10")
@pytest.mark.parametrize(
    ("value", "words"),
    [
        (topic_record(frame=0), "frame version 0"),
        (topic_record(tail=b"\x00"), "1 bytes after the TopicRecord"),
        (uvar(1) + uvar(99) + uvar(0), "record type 99"),
        (uvar(1) + uvar(2) + uvar(40000), "not an int16"),
    ],
)
def test_metadata_frames_that_do_not_decode(value, words):
    _, decoded = decode_record(METADATA, None, value)
    assert error_of(decoded)["rule"] == "MSG-10" and words in error_of(decoded)["reason"]


@pytest.mark.req("MSG-1")
def test_a_varint_longer_than_five_bytes():
    _, decoded = decode_record(METADATA, None, b"\xff\xff\xff\xff\xff\x01")
    assert error_of(decoded)["rule"] == "MSG-1"


@pytest.mark.req("MSG-11", "META-2")
def test_control_records_are_read_as_control_records_in_any_topic():
    voters = uvar(2) + i32(1) + uvar(0)
    value = i16(0) + i32(1) + voters + voters + uvar(0)
    key, decoded = decode_record(METADATA, i16(0) + i16(2), value, control=True)
    assert key == {"type": "ControlRecordTypeSchema", "version": 0, "Type": 2,
                   "controlType": "LEADER_CHANGE"}  # fmt: skip
    assert decoded == {"type": "LeaderChangeMessage", "version": 0, "Version": 0, "LeaderId": 1,
                       "Voters": [{"VoterId": 1}], "GrantingVoters": [{"VoterId": 1}]}  # fmt: skip
    key, decoded = decode_record(OFFSETS, i16(0) + i16(1), i16(0) + i32(4), control=True)
    assert key["controlType"] == "COMMIT" and decoded["CoordinatorEpoch"] == 4
    key, _ = decode_record(OFFSETS, b"\x00", None, control=True)
    assert error_of(key)["rule"] == "MSG-11"


@pytest.mark.req("MSG-12")
@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from([n for n in DECODER_NAMES if n not in ("auto", "none")]),
    key=st.none() | st.binary(max_size=40),
    value=st.none() | st.binary(max_size=80),
    control=st.booleans(),
)
def test_hostile_bytes_never_raise(name, key, value, control):
    """Whatever the bytes, each side is None, a decoded message, or the bytes kept in base64
    with the reason and the rule."""
    sides = decode_record(decoder_for(name, None), key, value, control=control)
    for side, blob in zip(sides, (key, value), strict=True):
        if side is not None and "decode_error" in side:
            assert side["base64"] == (None if blob is None else base64.b64encode(blob).decode())
            assert side["decode_error"]["rule"].startswith(("MSG-",))
        elif side is not None:
            assert isinstance(side["type"], str) and isinstance(side["version"], int)


@pytest.mark.req("MSG-12")
@settings(max_examples=200, deadline=None)
@given(tail=st.binary(max_size=60))
def test_hostile_bytes_after_a_valid_prefix(tail):
    """Structure-aware: a real value's first bytes, then anything."""
    for decoder, key, value in (
        (OFFSETS, KEY, i16(4) + i64(1) + i32(0)),
        (METADATA, None, uvar(1)),
    ):
        for api_key in range(0, 30, 3):
            framed = value + (uvar(api_key) + uvar(0) if decoder is METADATA else b"")
            decode_record(decoder, key, framed + tail)


def test_auto_picks_the_decoder_by_topic():
    assert decoder_for("auto", "__consumer_offsets").name == "offsets"
    assert decoder_for("auto", "__cluster_metadata").name == "metadata"
    assert (
        decoder_for("auto", "orders") is None and decoder_for("none", "__consumer_offsets") is None
    )


def test_versions_notation():
    assert 3 in Versions.parse("0+") and 3 not in Versions.parse("0-2")
    assert 0 not in Versions.parse("none") and 2 in Versions.parse("2")
    with pytest.raises(MessageDecodeError):
        Reader(b"\x00").int16()


@pytest.mark.req("COFF-2")
def test_a_type_0_offset_commit_reads_as_kafka_4_0_and_4_4_read_it():
    legacy_key = i16(0) + s16("g") + s16("t") + i32(0)
    v0 = i16(0) + i64(5) + s16("") + i64(9)
    _, value = decode_record(OFFSETS, legacy_key, v0)
    assert value == {"type": "LegacyOffsetCommitValue", "version": 0, "offset": 5,
                     "metadata": "", "commitTimestamp": 9}  # fmt: skip
    v1 = i16(1) + i64(5) + s16("") + i64(9) + i64(10)
    _, value = decode_record(OFFSETS, legacy_key, v1)
    assert value["type"] == "OffsetCommitValue" and value["expireTimestamp"] == 10
    _, value = decode_record(OFFSETS, KEY, i16(1) + i64(5) + s16("") + i64(9) + i64(10))
    assert value["type"] == "OffsetCommitValue"


@pytest.mark.req("COFF-1")
def test_every_consumer_offsets_record_type_has_its_key_and_value():
    from reference_impl.messages.consumer_offsets import TABLE

    assert sorted(TABLE.records) == [*range(0, 9), *range(10, 18), *range(19, 24)]
    for type_id, record_type in TABLE.records.items():
        key = i16(type_id) + b"\x00" * 64
        decoded, _ = decode_record(OFFSETS, key, None)
        assert decoded["type"] == record_type.key, decoded
    key, _ = decode_record(OFFSETS, i16(18) + s16("g"), None)
    assert error_of(key)["rule"] == "MSG-8"


TXN_KEY = i16(0) + s16("default_")


@pytest.mark.req("TXLOG-1")
def test_transaction_state_records():
    value = i16(0) + i64(0) + i16(0) + i32(60000) + b"\x01" + i32(1) + s16("t") + i32(1) + i32(0)
    value += i64(1728561475379) + i64(1728561475379)
    key, decoded = decode_record(decoder_for("transactions", None), TXN_KEY, value)
    assert key == {"type": "TransactionLogKey", "version": 0, "TransactionalId": "default_"}
    assert decoded["TransactionPartitions"] == [{"Topic": "t", "PartitionIds": [0]}]
    tagged = uvar(2) + uvar(0) + uvar(8) + i64(7) + uvar(2) + uvar(2) + i16(2)
    v1 = i16(1) + i64(0) + i16(0) + i32(1) + b"\x04" + uvar(0) + i64(1) + i64(1) + tagged
    _, decoded = decode_record(decoder_for("transactions", None), TXN_KEY, v1)
    assert decoded["PreviousProducerId"] == 7 and decoded["ClientTransactionVersion"] == 2
    assert decoded["TransactionPartitions"] is None  # compact null
    key, _ = decode_record(decoder_for("transactions", None), i16(1) + s16("x"), None)
    assert error_of(key)["rule"] == "MSG-8"


# spec/formats/internal-topics/remote-log-metadata.md §2, byte for byte
REMOTE_DELETE = (
    b"\x01\x02\x00" + cstr("t") + TOPIC_ID + i32(0) + b"\x00" + i32(1) + i64(1767225600000)
    + b"\x00\x00"
)  # fmt: skip


@pytest.mark.req("RLMM-1")
def test_remote_log_metadata_records():
    decoder = decoder_for("remote-log-metadata", None)
    _, decoded = decode_record(decoder, None, REMOTE_DELETE)
    assert decoded["type"] == "RemotePartitionDeleteMetadataRecord"
    assert decoded["TopicIdPartition"] == {
        "Name": "t",
        "Id": TOPIC_ID_TEXT,
        "Partition": 0,
    }
    assert decoded["EventTimestampMs"] == 1767225600000
    _, decoded = decode_record(decoder, None, b"\x01\x04\x00")
    assert error_of(decoded)["rule"] == "MSG-10"


@pytest.mark.req("SHST-1")
def test_share_group_state_records():
    decoder = decoder_for("share-group-state", None)
    key = i16(1) + s16("g") + TOPIC_ID + i32(0)
    value = i16(0) + i32(3) + i32(5) + i64(100) + uvar(2) + i64(100) + i64(109) + b"\x02"
    value += i16(1) + b"\x00\x00"
    decoded_key, decoded = decode_record(decoder, key, value)
    assert decoded_key["type"] == "ShareUpdateKey" and decoded["type"] == "ShareUpdateValue"
    assert decoded["StateBatches"] == [{"FirstOffset": 100, "LastOffset": 109, "DeliveryState": 2,
                                        "DeliveryCount": 1}]  # fmt: skip
    assert decode_record(decoder, i16(0) + s16("g") + TOPIC_ID + i32(0), None)[0]["type"] == (
        "ShareSnapshotKey"
    )
    assert error_of(decode_record(decoder, i16(2) + s16("g"), None)[0])["rule"] == "MSG-8"


@pytest.mark.req("COFF-3")
def test_an_offset_commit_row_takes_the_defaults_of_missing_fields():
    from reference_impl.messages.consumer_offsets import offset_commit

    key, v1 = decode_record(OFFSETS, KEY, i16(1) + i64(5) + s16("m") + i64(9) + i64(10))
    row = offset_commit(key, v1)
    assert (row["offset"], row["leader_epoch"], row["expire_timestamp"]) == (5, -1, 10)
    key, v3 = decode_record(OFFSETS, KEY, i16(3) + i64(5) + i32(2) + s16("") + i64(9))
    assert (offset_commit(key, v3)["leader_epoch"], offset_commit(key, v3)["expire_timestamp"]) == (
        2,
        -1,
    )
    tombstone = offset_commit(key, None)
    assert tombstone["offset"] is None and tombstone["group"] == "g1"
    group_key, _ = decode_record(OFFSETS, i16(2) + s16("g"), None)
    assert offset_commit(group_key, None) is None


@pytest.mark.req("MSG-11")
def test_an_unknown_control_type_names_its_id():
    _, value = decode_record(METADATA, i16(0) + i16(9), b"\x00\x00", control=True)
    assert "record type 9" in error_of(value)["reason"]
    _, value = decode_record(METADATA, i16(0) + i16(3), None, control=True)
    assert "the value is null" in error_of(value)["reason"]
