"""One Kafka message written from a dict in Kafka's field names, with our field table of it: the
inverse of message_reader.py, for tests and examples (a round trip through both checks that
they read the tables alike; spec/formats/internal-topics/message-encoding.md §2, the write
method MessageDataGenerator.java generates)."""

from __future__ import annotations

import base64
import struct

from .schema import Field, Message

_FIXED = {
    "int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H",
    "uint32": ">I", "float64": ">d",
}  # fmt: skip


def uvarint(value: int) -> bytes:
    """MSG-1: an unsigned varint, as Java's int (a negative value takes 5 bytes)."""
    value &= 0xFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def write_message(message: Message, version: int, values: dict) -> bytes:
    """The bytes of ``message`` at ``version`` holding ``values`` (absent untagged fields
    take their defaults; absent tagged fields are left out)."""
    return _struct(message.fields, version, version in message.flexible, values)


def _struct(fields: tuple[Field, ...], version: int, flexible: bool, values: dict) -> bytes:
    out, tagged = bytearray(), []
    for f in fields:
        if version not in f.versions:
            continue
        if f.tag is not None and version in f.tagged:
            if f.name in values:
                tagged.append((f.tag, _value(f, f.type, version, True, values[f.name])))
            continue
        out += _value(f, f.type, version, flexible, values.get(f.name, _default(f)))
    if flexible:  # MSG-5: the tagged fields, in increasing tag order
        out += uvarint(len(tagged))
        for tag, body in sorted(tagged):
            out += uvarint(tag) + uvarint(len(body)) + body
    return bytes(out)


def _default(f: Field):
    if f.default not in (None, "null"):
        return int(f.default) if f.type in _FIXED else f.default
    if f.type.startswith("[]") or f.fields:
        return None if f.default == "null" else []
    return {"string": "", "bool": False, "uuid": "AAAAAAAAAAAAAAAAAAAAAA"}.get(f.type, 0)


def _length(size: int | None, flexible: bool, wide: bool) -> bytes:
    """MSG-2: compact (uvarint of n + 1, 0 null) or int16/int32 (-1 null)."""
    if flexible:
        return uvarint(0 if size is None else size + 1)
    return struct.pack(">i" if wide else ">h", -1 if size is None else size)


def _value(f: Field, type_: str, version: int, flexible: bool, value) -> bytes:
    if type_.startswith("[]"):
        if value is None:
            return _length(None, flexible, wide=True)
        items = [_value(f, type_[2:], version, flexible, item) for item in value]
        return _length(len(items), flexible, wide=True) + b"".join(items)
    if type_ in _FIXED:
        return struct.pack(_FIXED[type_], value)
    if type_ == "bool":
        return b"\x01" if value else b"\x00"
    if type_ == "uuid":
        return base64.urlsafe_b64decode(value + "==")
    if type_ == "string":
        data = None if value is None else value.encode("utf-8")
        return _length(None if data is None else len(data), flexible, wide=False) + (data or b"")
    if type_ in ("bytes", "records"):
        data = None if value is None else base64.b64decode(value)
        return _length(None if data is None else len(data), flexible, wide=True) + (data or b"")
    # MSG-6: a nullable struct's presence byte (an array's nullness is its count)
    nullable = version in f.nullable and not f.type.startswith("[]")
    if value is None:
        return b"\xff"
    body = _struct(f.fields, version, flexible, value)
    return (b"\x01" + body) if nullable else body


def coordinator_record(table, type_id: int, key: dict, version: int, value: dict | None):
    """MSG-8, MSG-9: a coordinator-framed record's key and value (None: a tombstone)."""
    record_type = table.records[type_id]
    key_message = table.messages[record_type.key]
    key_bytes = struct.pack(">h", type_id) + write_message(key_message, key_message.valid.low, key)
    if value is None:
        return key_bytes, None
    body = write_message(table.messages[record_type.value], version, value)
    return key_bytes, struct.pack(">h", version) + body


def metadata_value(table, api_key: int, version: int, value: dict) -> bytes:
    """MSG-10: a metadata-framed value (frame version 1, api key, version, the message)."""
    message = table.messages[table.records[api_key].value]
    return uvarint(1) + uvarint(api_key) + uvarint(version) + write_message(message, version, value)
