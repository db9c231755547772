"""Zigzag varints and varlongs (spec/formats/record-batch-v2.md, VARINT-*).

Kafka's v2 records use protobuf-style base-128 varints, least significant group
first, with zigzag mapping so small negative numbers stay short:
``zigzag(n) = (n << 1) ^ (n >> 31)`` for ints and ``>> 63`` for longs
[ByteUtils.java]. An int takes at most 5 bytes, a long at most 10; a longer
encoding is malformed and the reader rejects it rather than looping.

>>> encode_varint(-1).hex(), encode_varint(64).hex(), encode_varlong(2**41).hex()
('01', '8001', '80808080808001')
>>> decode_varint(bytes.fromhex("feffffff0f"), 0)
(2147483647, 5)
"""

from __future__ import annotations

from ..errors import Category, CorruptRecordError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_MAX_VARINT_BYTES = 5
_MAX_VARLONG_BYTES = 10


def _malformed(what: str, pos: int) -> CorruptRecordError:
    return CorruptRecordError(Category.INVALID_RECORD, what, position=pos)


def _decode_unsigned(buf, pos: int, max_bytes: int, what: str) -> tuple[int, int]:
    """Read one unsigned base-128 value of at most ``max_bytes`` bytes."""
    result = 0
    shift = 0
    end = len(buf)
    for i in range(max_bytes):
        if pos + i >= end:
            raise _malformed(f"{what} runs past the end of its buffer", pos)
        byte = buf[pos + i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos + i + 1
        shift += 7
    raise _malformed(f"{what} longer than {max_bytes} bytes (VARINT-3)", pos)


def decode_varint(buf, pos: int) -> tuple[int, int]:
    """Decode a zigzag varint (int32) at ``pos``; return ``(value, next_pos)``.

    VARINT-1, VARINT-3: at most 5 bytes; the value is taken modulo 2**32 as Java does;
    VARINT-2, a fifth byte with its top bit set is ``invalid_record``; VARINT-5, so is a
    varint cut off by the end of the buffer.
    """
    if pos < len(buf) and buf[pos] < 0x80:  # one-byte fast path: most deltas and lengths
        raw = buf[pos]
        return (raw >> 1) ^ -(raw & 1), pos + 1
    raw, pos = _decode_unsigned(buf, pos, _MAX_VARINT_BYTES, "varint")
    raw &= 0xFFFFFFFF  # Java drops bits above 32 from a 5-byte varint
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varlong(buf, pos: int) -> tuple[int, int]:
    """Decode a zigzag varlong (int64) at ``pos``; return ``(value, next_pos)``.

    VARINT-1, VARINT-3: at most 10 bytes, the value taken modulo 2**64; VARINT-2, a tenth
    byte with its top bit set is ``invalid_record``; VARINT-5, so is one cut off."""
    if pos < len(buf) and buf[pos] < 0x80:
        raw = buf[pos]
        return (raw >> 1) ^ -(raw & 1), pos + 1
    raw, pos = _decode_unsigned(buf, pos, _MAX_VARLONG_BYTES, "varlong")
    raw &= 0xFFFFFFFFFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def decode_unsigned_varint(buf, pos: int) -> tuple[int, int]:
    """Decode an unsigned (non-zigzag) varint, as in flexible-version schemas."""
    raw, pos = _decode_unsigned(buf, pos, _MAX_VARINT_BYTES, "unsigned varint")
    return raw & 0xFFFFFFFF, pos


def _encode_unsigned(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """Encode an int32 as a zigzag varint (VARINT-1), in its shortest form (VARINT-4)."""
    if not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"varint out of int32 range: {value}")
    return _encode_unsigned(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """Encode an int64 as a zigzag varlong (VARINT-1), in its shortest form (VARINT-4)."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"varlong out of int64 range: {value}")
    return _encode_unsigned(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def encode_unsigned_varint(value: int) -> bytes:
    """Encode an int32 as an unsigned varint (negative values as their 32-bit pattern)."""
    return _encode_unsigned(value & 0xFFFFFFFF)


def size_of_varint(value: int) -> int:
    return len(encode_varint(value))


def size_of_varlong(value: int) -> int:
    return len(encode_varlong(value))
