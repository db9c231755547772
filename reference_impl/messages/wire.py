"""Kafka's message-schema wire types, read from bytes
(spec/formats/internal-topics/message-encoding.md §2).

The records of Kafka's internal topics are Kafka protocol messages: the classes generated from
the JSON message schemas, read through ``Readable`` (clients/.../common/protocol/Readable.java,
ByteUtils.java). This module reads the primitive types; message_reader.py reads a whole message
from one of our field tables. Every read is bounded by the bytes given: a hostile length or count
becomes a ``MessageDecodeError`` naming the rule and the position, never an exception of Python's.
"""

from __future__ import annotations

import base64
import struct

_INT16, _INT32, _INT64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_UINT16, _UINT32, _FLOAT64 = struct.Struct(">H"), struct.Struct(">I"), struct.Struct(">d")


class MessageDecodeError(ValueError):
    """Bytes that are not the message their framing announces: ``reason`` for people,
    ``rule`` the requirement ID broken, ``position`` the byte (within the key or value)
    where reading stopped."""

    def __init__(self, reason: str, rule: str, position: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.rule, self.position = reason, rule, position

    def to_dict(self) -> dict:
        return {"reason": self.reason, "rule": self.rule, "position": self.position}


class Reader:
    """A cursor over ``data[position:end]``; each read advances it or raises
    MessageDecodeError (MSG-4) without moving past ``end``."""

    def __init__(self, data: bytes, position: int = 0, end: int | None = None) -> None:
        self.data, self.position = data, position
        self.end = len(data) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.position

    def take(self, size: int, what: str = "bytes") -> bytes:
        """MSG-4: a length that runs past the end of the key or value is rejected."""
        if size < 0 or size > self.remaining:
            raise MessageDecodeError(
                f"{what} of {size} bytes at position {self.position}, "
                f"but only {self.remaining} bytes remain",
                "MSG-4",
                self.position,
            )
        start = self.position
        self.position += size
        return self.data[start : self.position]

    def _fixed(self, layout: struct.Struct, what: str):
        return layout.unpack(self.take(layout.size, what))[0]

    def int8(self) -> int:
        return int.from_bytes(self.take(1, "int8"), "big", signed=True)

    def int16(self) -> int:
        return self._fixed(_INT16, "int16")

    def int32(self) -> int:
        return self._fixed(_INT32, "int32")

    def int64(self) -> int:
        return self._fixed(_INT64, "int64")

    def uint16(self) -> int:
        return self._fixed(_UINT16, "uint16")

    def uint32(self) -> int:
        return self._fixed(_UINT32, "uint32")

    def float64(self) -> float:
        return self._fixed(_FLOAT64, "float64")

    def bool(self) -> bool:
        return self.take(1, "bool")[0] != 0  # Kafka: readByte() != 0

    def uuid(self) -> str:
        """MSG-13: a uuid as Kafka prints it (Uuid.toString: URL-safe base64, no padding)."""
        return base64.urlsafe_b64encode(self.take(16, "uuid")).rstrip(b"=").decode("ascii")

    def uvarint(self) -> int:
        """MSG-1: an unsigned varint of at most 5 bytes (ByteUtils.readUnsignedVarint), as
        Java's int: a fifth byte's high bits wrap it negative."""
        start, value = self.position, 0
        for shift in range(0, 35, 7):
            byte = self.take(1, "varint")[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                value &= 0xFFFFFFFF
                return value - (1 << 32) if value & 0x80000000 else value
        raise MessageDecodeError(
            f"varint at position {start} is longer than 5 bytes", "MSG-1", start
        )


def b64(blob: bytes | None) -> str | None:
    """MSG-13: bytes in the JSON output as standard base64 (Jackson's BinaryNode)."""
    return None if blob is None else base64.b64encode(blob).decode("ascii")
