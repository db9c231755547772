"""The two CRCs of the log format (spec/formats/record-batch-v2.md, legacy-message.md).

v2 batches and producer snapshots use CRC-32C (Castagnoli, java.util.zip.CRC32C);
legacy v0/v1 messages use CRC-32 (IEEE 802.3, java.util.zip.CRC32). Mixing them up
is the classic interop bug, so each has one obvious name here [clients/.../common/utils/
Crc32C.java, Checksums.java].

>>> crc32c(b"Some String")  # Kafka's Crc32CTest#testValue
608512271
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c

# CRC-32C (Castagnoli) of ``data``: v2 batches [21, end), snapshots [6, EOF). The package's
# function itself, not a wrapper: verify calls it once per batch.
crc32c = _crc32c.crc32c


def crc32(data) -> int:
    """CRC-32 (IEEE) of ``data``: legacy messages, magic through the end of the value."""
    return zlib.crc32(data)
