meta:
  id: kafka_producer_snapshot
  title: Apache Kafka producer-state snapshot
  application: Apache Kafka
  file-extension: snapshot
  license: CC0-1.0
  ks-version: 0.11
  endian: be
doc: |
  A producer-state snapshot (`<20-digit offset>.snapshot`, named after the
  exclusive end offset it was taken at): the idempotent and transactional
  producers known to the partition, so that a broker need not rescan the log
  on restart. The layout is Kafka's ProducerSnapshot message schema, version 1,
  with a non-flexible (int32-counted) entry array.

  The CRC-32C in `crc` covers every byte after it, from `num_entries` to the
  end of the file; Kaitai Struct cannot compute it. Kafka rejects a file with
  another version, a bad CRC or too few bytes (CorruptSnapshotException);
  here a bad version is a ValidationError and too few bytes an EOFError.
  Bytes after the last entry are not read.
doc-ref:
  - spec/formats/producer-snapshot.md
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/resources/message/ProducerSnapshot.json
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java
seq:
  - id: version
    -orig-id: version
    type: s2
    valid: 1
  - id: crc
    -orig-id: Crc
    type: u4
    doc: CRC-32C of every byte from `num_entries` to the end of the file.
  - id: num_entries
    type: s4
    valid:
      min: 0
    doc: Length of the ProducerEntries array (a null array is invalid).
  - id: entries
    -orig-id: ProducerEntries
    type: producer_entry
    repeat: expr
    repeat-expr: num_entries
types:
  producer_entry:
    -orig-id: ProducerEntry
    doc: |
      The last written batch of one producer (46 bytes). `last_offset` and
      `last_sequence` are -1 when no batch metadata is kept.
    seq:
      - id: producer_id
        -orig-id: ProducerId
        type: s8
      - id: producer_epoch
        -orig-id: Epoch
        type: s2
      - id: last_sequence
        -orig-id: LastSequence
        type: s4
      - id: last_offset
        -orig-id: LastOffset
        type: s8
      - id: offset_delta
        -orig-id: OffsetDelta
        type: s4
        doc: Last sequence minus first sequence of the producer's last batch.
      - id: timestamp
        -orig-id: Timestamp
        type: s8
        doc: Max timestamp of the producer's last batch.
      - id: coordinator_epoch
        -orig-id: CoordinatorEpoch
        type: s4
      - id: current_txn_first_offset
        -orig-id: CurrentTxnFirstOffset
        type: s8
        doc: First offset of the producer's ongoing transaction; -1 if none.
