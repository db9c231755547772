"""TransactionIndexTest, restated (catalogue 6.2 #35-40)."""

from __future__ import annotations

import pytest

from reference_impl.errors import CorruptIndexError
from reference_impl.formats.index_entries import AbortedTxn
from reference_impl.log.transaction_index import TransactionIndex

TXNS = [
    AbortedTxn(0, 0, 10, 11),
    AbortedTxn(1, 5, 15, 13),
    AbortedTxn(2, 18, 35, 25),
    AbortedTxn(3, 32, 50, 40),
]


@pytest.fixture
def file(tmp_path):
    path = tmp_path / "test.txnindex"
    path.touch()  # TestUtils.tempFile creates the file
    return path


@pytest.fixture
def index(file):
    idx = TransactionIndex(0, file)
    yield idx
    idx.close()


def test_position_set_correctly_when_opened(index, file):
    for txn in TXNS:
        index.append(txn)
    index.close()
    reopened = TransactionIndex(0, file)
    another = AbortedTxn(3, 50, 60, 55)
    reopened.append(another)
    assert reopened.all_aborted_txns() == [*TXNS, another]
    reopened.close()


@pytest.mark.req("TXN-6")
def test_sanity_check(index, file):
    for txn in TXNS:
        index.append(txn)
    index.close()
    reopened = TransactionIndex(100, file)  # a start offset above every lastOffset
    with pytest.raises(CorruptIndexError):
        reopened.sanity_check()
    reopened.close()


@pytest.mark.req("TXN-7")
def test_last_offset_must_increase(index):
    index.append(AbortedTxn(1, 5, 15, 13))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(0, 0, 15, 11))


@pytest.mark.req("TXN-7")
def test_last_offset_cannot_decrease(index):
    index.append(AbortedTxn(1, 5, 15, 13))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(0, 0, 10, 11))


@pytest.mark.req("TXN-8", "TXN-9")
def test_collect_aborted_transactions(index):
    for txn in TXNS:
        index.append(txn)
    cases = [
        ((0, 100), TXNS, False),
        ((0, 32), TXNS[:3], True),
        ((0, 35), TXNS, True),
        ((10, 35), TXNS, True),
        ((11, 35), TXNS[1:], True),
        ((20, 41), TXNS[2:], False),
    ]
    for (fetch_offset, upper_bound), expected, complete in cases:
        result = index.collect_aborted_txns(fetch_offset, upper_bound)
        assert result.aborted_transactions == expected
        assert result.is_complete is complete


@pytest.mark.req("TRUNC-16")
def test_truncate(index):
    txns = [
        AbortedTxn(0, 0, 10, 2),
        AbortedTxn(1, 5, 15, 16),
        AbortedTxn(2, 18, 35, 25),
        AbortedTxn(3, 32, 50, 40),
    ]
    for txn in txns:
        index.append(txn)
    index.truncate_to(51)
    assert index.collect_aborted_txns(0, 100).aborted_transactions == txns
    index.truncate_to(50)
    assert index.collect_aborted_txns(0, 100).aborted_transactions == txns[:3]
    index.reset()
    assert index.collect_aborted_txns(0, 100).aborted_transactions == []


@pytest.mark.req("TRUNC-16", "TRUNC-17")
def test_a_truncation_below_every_entry_keeps_the_file_empty(index, file):
    """TransactionIndex.truncateTo cuts the file at the first entry reaching the offset: below
    every entry that leaves a 0-byte file, not a deleted one; an offset no entry reaches
    changes nothing."""
    for txn in TXNS:
        index.append(txn)
    index.truncate_to(15)
    assert index.collect_aborted_txns(0, 100).aborted_transactions == TXNS[:1]
    index.truncate_to(10)
    assert file.exists() and file.stat().st_size == 0
    index.append(AbortedTxn(4, 8, 9, 9))  # the last offset is forgotten with the entries
    assert index.collect_aborted_txns(0, 100).aborted_transactions == [AbortedTxn(4, 8, 9, 9)]
    index.truncate_to(100)
    assert file.stat().st_size == 34


@pytest.mark.req("TXN-1")
def test_aborted_txn_serde():
    txn = AbortedTxn(983493, 137, 299, 200)
    assert (txn.version, txn.producer_id, txn.first_offset) == (0, 983493, 137)
    assert (txn.last_offset, txn.last_stable_offset) == (299, 200)


@pytest.mark.req("INDEX-21", "RET-13")
def test_rename_index(index, tmp_path):
    index.append(AbortedTxn(0, 0, 10, 2))
    index.rename_to(tmp_path / "renamed.txnindex")
    index.append(AbortedTxn(1, 5, 15, 16))
    found = index.collect_aborted_txns(0, 100).aborted_transactions
    assert [t.first_offset for t in found] == [0, 5]
    assert (tmp_path / "renamed.txnindex").stat().st_size == 2 * 34


@pytest.mark.req("INDEX-21", "RET-13")
def test_flush(tmp_path):
    """testFlush: the file is created by the first append, not by a flush."""
    path = tmp_path / "lazy.txnindex"
    idx = TransactionIndex(0, path)
    idx.flush()
    assert not path.exists()
    idx.append(AbortedTxn(0, 0, 10, 2))
    idx.flush()
    assert path.stat().st_size == 34
    idx.close()


@pytest.mark.req("INDEX-21", "RET-13")
def test_delete_if_exists(index, file):
    assert file.exists()
    index.delete_if_exists()
    assert not file.exists()


def test_partial_trailing_entry_is_ignored(file):
    file.write_bytes(b"\x00" * (34 + 10))
    idx = TransactionIndex(0, file)
    assert len(idx.all_aborted_txns()) == 1
    idx.close()
