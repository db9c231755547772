"""How each internal topic frames its messages in a record's key and value
(spec/formats/internal-topics/message-encoding.md §3; CoordinatorRecordSerde.java,
AbstractApiMessageSerde.java, ControlRecordUtils.java).

* coordinator framing (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``;
  CoordinatorRecordSerde): the key is an int16 record type and the key message; the value an
  int16 version and the value message of that type, or null (a tombstone) (MSG-8, MSG-9);
* metadata framing (``__cluster_metadata``, ``__remote_log_metadata``;
  AbstractApiMessageSerde): no key; the value is uvarint frame version 1, uvarint api key,
  uvarint version and the message, with nothing after it (MSG-10);
* control records (control batches of any topic; ControlRecordType, ControlRecordUtils): the
  key is int16 version 0 and int16 type; the value an int16 version and the type's message
  (MSG-11).

A framing is two functions: the key's reader gives the key as a dict and what the value's
reader needs to know of it. Decoded messages are dicts that start with ``type`` (the message's
name in Kafka's schema) and ``version``, then the fields; None stands for a null key or value.
Bytes that are not what the framing announces raise MessageDecodeError.
"""

from __future__ import annotations

from ..errors import KafkaLogError
from ..records.control import (
    CONTROL_KEY,
    END_TXN_MARKER,
    ControlRecordType,
    parse_control_key,
    parse_end_txn_marker,
)
from .message_reader import read_message
from .schema import Table
from .wire import MessageDecodeError, Reader

_FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION


def _decoded(table: Table, name: str, reader: Reader, version: int) -> dict:
    return {"type": name, "version": version, **read_message(reader, table.messages[name], version)}


def _record_type(table: Table, type_id: int, at: int, rule: str):
    record_type = table.records.get(type_id)
    if record_type is None:
        known = ", ".join(str(i) for i in sorted(table.records))
        raise MessageDecodeError(
            f"record type {type_id} is not one of {table.topic}'s ({known})", rule, at
        )
    return record_type


def coordinator_key(table: Table, key: bytes | None) -> tuple[dict, int]:
    """MSG-8: the key, and its record type id. Kafka reads a key message whatever its
    version, since every key field is in every version."""
    if key is None:
        raise MessageDecodeError(f"the key is null: a {table.topic} record needs one", "MSG-8", 0)
    reader = Reader(key)
    type_id = reader.int16()
    record_type = _record_type(table, type_id, 0, "MSG-8")
    message = table.messages[record_type.key]
    fields = read_message(reader, message, message.valid.low)
    return {"type": record_type.key, "version": type_id, **fields}, type_id


def coordinator_value(table: Table, type_id: int, value: bytes | None) -> dict | None:
    """MSG-9: the value of a record of type ``type_id``; None for a tombstone."""
    if value is None:
        return None
    reader = Reader(value)
    version = reader.int16()
    record_type = table.records[type_id]
    name = record_type.value
    if version not in table.messages[name].valid and record_type.value_beyond:
        name = record_type.value_beyond  # COFF-2: what Kafka 4.0 read a type-0 value as
    return _decoded(table, name, reader, version)


def _frame_number(reader: Reader, what: str) -> int:
    """AbstractApiMessageSerde.unsignedIntToShort: a uvarint that must fit an int16."""
    at, number = reader.position, reader.uvarint()
    if not 0 <= number <= 0x7FFF:
        raise MessageDecodeError(f"{what} {number} at position {at} is not an int16", "MSG-10", at)
    return number


def metadata_key(table: Table, key: bytes | None) -> tuple[None, None]:
    """MSG-10: a metadata record's key is null, and ignored as Kafka ignores it."""
    return None, None


def metadata_value(table: Table, context: None, value: bytes | None) -> dict:
    """MSG-10: a metadata record's value: frame version 1, api key, version, the message."""
    if value is None:
        raise MessageDecodeError(
            f"the value is null: a {table.topic} record needs one", "MSG-10", 0
        )
    reader = Reader(value)
    frame = _frame_number(reader, "frame version")
    if frame != _FRAME_VERSION:
        raise MessageDecodeError(
            f"frame version {frame}: only frame version {_FRAME_VERSION} is defined", "MSG-10", 0
        )
    at = reader.position
    record_type = _record_type(table, _frame_number(reader, "api key"), at, "MSG-10")
    decoded = _decoded(table, record_type.value, reader, _frame_number(reader, "version"))
    if reader.remaining:
        raise MessageDecodeError(
            f"{reader.remaining} bytes after the {record_type.value}", "MSG-10", reader.position
        )
    return decoded


def control_key(table: Table, key: bytes | None) -> tuple[dict, bytes]:
    """MSG-11: a control record's key as the records layer reads it (CTRL-1 to CTRL-5)."""
    try:
        control_type = parse_control_key(key)
    except KafkaLogError as exc:
        raise MessageDecodeError(str(exc), "MSG-11", 0) from None
    version, type_id = CONTROL_KEY.unpack_from(key)
    decoded = {"type": "ControlRecordTypeSchema", "version": version, "Type": type_id}
    return decoded | {"controlType": control_type.name}, key


def control_value(table: Table, key: bytes, value: bytes | None) -> dict:
    """MSG-11: COMMIT and ABORT values as markers (CTRL-6 to CTRL-8), the KRaft types' values
    (2 to 6) as their messages read at version 0, as ControlRecordUtils reads them: each
    message starts with its own int16 ``Version`` field."""
    try:
        control_type = parse_control_key(key)
        if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            epoch = parse_end_txn_marker(key, value).coordinator_epoch
            version = END_TXN_MARKER.unpack_from(value)[0]
            return {"type": "EndTxnMarker", "version": version, "CoordinatorEpoch": epoch}
    except KafkaLogError as exc:
        raise MessageDecodeError(str(exc), "MSG-11", 0) from None
    record_type = _record_type(table, CONTROL_KEY.unpack_from(key)[1], 2, "MSG-11")
    if value is None:
        raise MessageDecodeError(
            f"the value is null: a {control_type.name} record needs one", "MSG-11", 0
        )
    return _decoded(table, record_type.value, Reader(value), 0)


# framing -> (key reader, value reader): the key reader returns the key's dict and what the
# value reader needs to know of the key
FRAMINGS = {
    "coordinator": (coordinator_key, coordinator_value),
    "metadata": (metadata_key, metadata_value),
    "control": (control_key, control_value),
}
