"""COMPACT-28's golden comparison (conformance/same_records.py): a compressed batch a cleaner
rewrote is compared as records, its compressed bytes free; everything else stays byte for byte."""

from __future__ import annotations

import gzip
import struct

import crc32c
import pytest

from conformance.same_records import same_index_entries, same_records
from reference_impl.records import SimpleRecord, build_record_batch
from reference_impl.records.compression import Compression

pytestmark = pytest.mark.req("COMPACT-28")


def rewritten(values=(b"v1", b"v2"), compression=Compression.GZIP, last_offset_delta=2) -> bytes:
    """A batch as a cleaner leaves it: records at offsets 1 and 2 of a batch that had 0 to 2."""
    records = [
        SimpleRecord(value=v, key=k, timestamp=1000, offset_delta=d)
        for d, k, v in zip((1, 2), (b"b", b"c"), values, strict=True)
    ]
    return build_record_batch(records, compression=compression, last_offset_delta=last_offset_delta)


def regzipped(raw: bytes, *, crc_right: bool = True) -> bytes:
    """The same batch with its records gzipped otherwise: level 1, an mtime, and as two
    members (a reader reads concatenated members, COMP-5), so longer than the original."""
    data = gzip.decompress(raw[61:])
    half = len(data) // 2
    payload = b"".join(
        gzip.compress(part, compresslevel=1, mtime=12345) for part in (data[:half], data[half:])
    )
    body = bytearray(raw[:61] + payload)
    struct.pack_into(">i", body, 8, len(body) - 12)  # batchLength
    crc = crc32c.crc32c(bytes(body[21:]))
    struct.pack_into(">I", body, 17, crc if crc_right else crc ^ 1)
    return bytes(body)


def test_another_compressors_bytes_for_the_same_records_are_the_same_records():
    mine = regzipped(rewritten())
    assert mine != rewritten() and len(mine) != len(rewritten())
    assert same_records(mine, rewritten())


def test_other_records_a_wrong_crc_or_another_codec_are_not():
    assert not same_records(regzipped(rewritten((b"v1", b"XX"))), rewritten())
    assert not same_records(regzipped(rewritten(), crc_right=False), rewritten())
    assert not same_records(rewritten(compression=Compression.NONE), rewritten())
    assert not same_records(regzipped(rewritten()) + rewritten(), rewritten())  # one batch more


def test_a_batch_copied_whole_stays_byte_for_byte():
    """Every record kept and no delete horizon: COMPACT-18's copy, not a rewrite."""
    whole = rewritten(last_offset_delta=1)  # offsets 1 and 2 of a batch of two
    assert not same_records(regzipped(whole), whole)


def test_uncompressed_batches_stay_byte_for_byte():
    a = rewritten(compression=Compression.NONE)
    b = bytearray(a)
    b[-1] ^= 1
    assert same_records(a, a) and not same_records(bytes(b), a)


def test_offset_index_entries_point_at_the_same_batches():
    after = build_record_batch([SimpleRecord(value=b"v3", key=b"a", timestamp=1000)], base_offset=3)
    mine, theirs = regzipped(rewritten()) + after, rewritten() + after
    at_mine, at_theirs = len(regzipped(rewritten())), len(rewritten())
    assert same_index_entries([[3, at_mine]], [[3, at_theirs]], mine, theirs)
    assert not same_index_entries([[3, at_theirs]], [[3, at_theirs]], mine, theirs)
    assert not same_index_entries([[2, at_mine]], [[3, at_theirs]], mine, theirs)
