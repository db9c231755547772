meta:
  id: kafka_transaction_index
  title: Apache Kafka transaction index
  application: Apache Kafka
  file-extension: txnindex
  license: CC0-1.0
  ks-version: 0.11
  endian: be
doc: |
  The transaction index of a log segment (`<20-digit base offset>.txnindex`):
  one fixed 34-byte AbortedTxn entry per transaction aborted in the segment, in
  the order the ABORT markers were written, so `last_offset` increases
  strictly. Committed transactions are not recorded. The file is not
  preallocated and only exists once a segment has seen an abort.

  A trailing partial entry is ignored, as Kafka's reader ignores it (TXN-4).
doc-ref:
  - spec/formats/transaction-index.md
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/TransactionIndex.java
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/AbortedTxn.java
seq:
  - id: entries
    type: aborted_txn
    repeat: expr
    repeat-expr: _io.size / 34
  - id: partial_entry
    size-eos: true
    doc: Fewer than 34 bytes after the last whole entry, ignored (TXN-4).
types:
  aborted_txn:
    doc-ref: https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/AbortedTxn.java
    seq:
      - id: version
        -orig-id: version
        type: s2
        valid:
          max: 255
        doc: |
          Written as the int16 0. Kafka reads only the first byte
          (`version_byte`) and rejects the entry when it is above 0 (TXN-2,
          TXN-3), which is exactly a value above 255 here.
      - id: producer_id
        -orig-id: producerId
        type: s8
      - id: first_offset
        -orig-id: firstOffset
        type: s8
        doc: |
          First offset of the aborted transaction; may lie in an earlier
          segment.
      - id: last_offset
        -orig-id: lastOffset
        type: s8
        doc: Offset of the ABORT marker.
      - id: last_stable_offset
        -orig-id: lastStableOffset
        type: s8
        doc: The partition's last stable offset when the abort was written.
    instances:
      version_byte:
        value: version >> 8
        doc: The version as Kafka reads it, the signed byte at entry offset 0.
