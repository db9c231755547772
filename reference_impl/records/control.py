"""Control records and the EndTransactionMarker (spec/formats/control-records.md, CTRL-*).

A control batch (attributes bit 5) holds records whose key is
``version int16 | type int16`` [ControlRecordType.java]. COMMIT and ABORT markers
carry the value ``version int16 | coordinatorEpoch int32`` [EndTransactionMarker.java].
Versions above 0 are read as version 0; negative versions are invalid.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from ..errors import Category, CorruptRecordError

CONTROL_KEY = struct.Struct(">hh")
END_TXN_MARKER = struct.Struct(">hi")
CURRENT_VERSION = 0


class ControlRecordType(IntEnum):
    UNKNOWN = -1
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    control_type: ControlRecordType
    coordinator_epoch: int


def _invalid(message: str) -> CorruptRecordError:
    return CorruptRecordError(Category.INVALID_CONTROL_RECORD, message)


def parse_control_key(key: bytes | None) -> ControlRecordType:
    """Read a control record key (CTRL-1): CTRL-2, null or under 4 bytes is invalid; CTRL-3,
    a negative version is invalid; CTRL-4, a version above 0 reads as 0 and bytes after the
    first 4 are ignored; CTRL-5, a type id outside 0 to 6 is UNKNOWN, as in Kafka."""
    if key is None or len(key) < CONTROL_KEY.size:
        raise _invalid(f"control record key of {0 if key is None else len(key)} bytes (< 4)")
    version, type_id = CONTROL_KEY.unpack_from(key, 0)
    if version < 0:
        raise _invalid(f"negative control record key version {version}")
    try:
        return ControlRecordType(type_id)
    except ValueError:
        return ControlRecordType.UNKNOWN


def encode_control_key(control_type: ControlRecordType) -> bytes:
    """CTRL-1: version 0 and the type id."""
    if control_type is ControlRecordType.UNKNOWN:
        raise ValueError("UNKNOWN control records cannot be written")
    return CONTROL_KEY.pack(CURRENT_VERSION, int(control_type))


def parse_end_txn_marker(key: bytes | None, value: bytes | None) -> EndTransactionMarker:
    """Decode a COMMIT/ABORT marker record's key and value: CTRL-9, only those two types carry
    one; CTRL-6, a null value or one under 6 bytes is invalid; CTRL-7, a negative version
    is invalid; CTRL-8, a version above 0 reads as 0 and bytes after the first 6 are
    ignored."""
    control_type = parse_control_key(key)
    if control_type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise _invalid(f"{control_type.name} is not a transaction marker")
    if value is None or len(value) < END_TXN_MARKER.size:
        raise _invalid(
            f"end transaction marker value of {0 if value is None else len(value)} bytes (< 6)"
        )
    version, coordinator_epoch = END_TXN_MARKER.unpack_from(value, 0)
    if version < 0:
        raise _invalid(f"negative end transaction marker version {version}")
    return EndTransactionMarker(control_type, coordinator_epoch)


def encode_end_txn_marker(coordinator_epoch: int) -> bytes:
    """CTRL-10's marker value: version 0 and the coordinator epoch."""
    return END_TXN_MARKER.pack(CURRENT_VERSION, coordinator_epoch)
