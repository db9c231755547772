"""One Kafka message read from bytes with our field table of it: what the ``read(Readable,
version)`` method Kafka generates from a message schema does (MSG-2 to MSG-7), as data-driven
code (spec/formats/internal-topics/message-encoding.md §2; MessageDataGenerator.java).
The result is a dict in Kafka's field names and JSON shapes (MessageDataJsonConverter),
so that it compares with kafka-dump-log's decoders."""

from __future__ import annotations

from .schema import Field, Message
from .wire import MessageDecodeError, Reader, b64

_PRIMITIVES = {
    "int8": Reader.int8, "int16": Reader.int16, "int32": Reader.int32, "int64": Reader.int64,
    "uint16": Reader.uint16, "uint32": Reader.uint32, "float64": Reader.float64,
    "bool": Reader.bool, "uuid": Reader.uuid,
}  # fmt: skip
# the fewest bytes one element can take: a count larger than the bytes left cannot be honest
_MIN_SIZE = {"int8": 1, "bool": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4}


def read_message(reader: Reader, message: Message, version: int) -> dict:
    """MSG-7: ``message`` at ``version``, which must be one of its valid versions."""
    if version not in message.valid:
        raise MessageDecodeError(
            f"{message.name} has no version {version} (valid: {_text(message)})",
            "MSG-7",
            reader.position,
        )
    return _struct(reader, message.fields, version, version in message.flexible)


def _text(message: Message) -> str:
    low, high = message.valid.low, message.valid.high
    return str(low) if low == high else f"{low}-{high}"


def _struct(reader: Reader, fields: tuple[Field, ...], version: int, flexible: bool) -> dict:
    """The fields present at ``version`` in order, then (flexible versions) the tagged
    fields section (MSG-5)."""
    out, tagged = {}, {}
    for f in fields:
        if version not in f.versions:
            continue
        if f.tag is not None and version in f.tagged:
            tagged[f.tag] = f
            continue
        out[f.name] = _value(reader, f, f.type, version, flexible)
    if flexible:
        _tagged_fields(reader, tagged, version, out)
    return out


def _tagged_fields(reader: Reader, known: dict[int, Field], version: int, out: dict) -> None:
    """MSG-5: uvarint count, then per field uvarint tag, uvarint size and its bytes, tags in
    strictly increasing order; a field is read within its size, unknown tags are kept aside as
    Kafka keeps them (its JSON leaves them out)."""
    count, previous = _length(reader, reader.uvarint(), "tagged fields"), -1
    for _ in range(count):
        at, tag = reader.position, reader.uvarint()
        if tag <= previous:
            raise MessageDecodeError(
                f"tag {tag} at position {at} does not follow tag {previous}", "MSG-5", at
            )
        previous, size = tag, reader.uvarint()
        body = Reader(reader.data, reader.position, reader.position + _length(reader, size, "tag"))
        reader.take(size, f"tagged field {tag}")
        if tag in known:
            f = known[tag]
            out[f.name] = _value(body, f, f.type, version, True)
        else:
            out.setdefault("_unknownTaggedFields", []).append(
                {"tag": tag, "data": b64(body.take(size))}
            )


def _length(reader: Reader, value: int, what: str) -> int:
    if value < 0 or value > reader.remaining:
        raise MessageDecodeError(
            f"{what}: {value} at position {reader.position} exceeds the {reader.remaining} "
            "bytes left",
            "MSG-4",
            reader.position,
        )
    return value


def _size(reader: Reader, f: Field, version: int, flexible: bool, wide: bool) -> int | None:
    """MSG-2: a length or count, compact (uvarint of n+1) in flexible versions, else int16
    (strings) or int32; -1 is null, allowed only in the field's nullable versions (MSG-3)."""
    at = reader.position
    if flexible:
        size = reader.uvarint() - 1
    elif wide:
        size = reader.int32()
    else:
        size = reader.int16()
    if size < 0:
        if version not in f.nullable:
            raise MessageDecodeError(
                f"non-nullable field {f.name} was serialized as null", "MSG-3", at
            )
        return None
    return size


def _value(reader: Reader, f: Field, type_: str, version: int, flexible: bool):
    if f.flexible is not None:
        flexible = version in f.flexible
    if type_.startswith("[]"):
        count = _size(reader, f, version, flexible, wide=True)
        if count is None:
            return None
        element = type_[2:]
        if count > reader.remaining // _MIN_SIZE.get(element, 1):  # each element takes a byte
            raise MessageDecodeError(
                f"{f.name}: {count} elements cannot fit in the {reader.remaining} bytes left",
                "MSG-4",
                reader.position,
            )
        return [_element(reader, f, element, version, flexible) for _ in range(count)]
    return _element(reader, f, type_, version, flexible)


def _element(reader: Reader, f: Field, type_: str, version: int, flexible: bool):
    primitive = _PRIMITIVES.get(type_)
    if primitive is not None:
        return primitive(reader)
    if type_ == "string":
        size = _size(reader, f, version, flexible, wide=False)
        # Kafka decodes with new String(bytes, UTF_8): malformed bytes become U+FFFD
        return None if size is None else reader.take(size, f.name).decode("utf-8", "replace")
    if type_ in ("bytes", "records"):
        size = _size(reader, f, version, flexible, wide=True)
        return None if size is None else b64(reader.take(size, f.name))
    if not f.fields:
        raise MessageDecodeError(f"{f.name}: no table for type {type_}", "MSG-7", reader.position)
    # MSG-6: a nullable struct's presence byte (-1 null); an array's nullness is its count
    if version in f.nullable and not f.type.startswith("[]") and reader.int8() < 0:
        return None
    return _struct(reader, f.fields, version, flexible)
