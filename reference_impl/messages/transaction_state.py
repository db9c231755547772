"""``__transaction_state``: the transaction coordinator's log, one record per transactional
id with its producer id and epoch, state and partitions (TransactionLogKey,
TransactionLogValue; spec/formats/internal-topics/transaction-state.md, TXLOG-1;
TransactionLog.java)."""

from __future__ import annotations

from .schema import load_table

TABLE = load_table("transaction_state")
