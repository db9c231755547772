meta:
  id: kafka_control_record
  title: Apache Kafka control record key (and EndTransactionMarker value)
  application: Apache Kafka
  license: CC0-1.0
  ks-version: 0.11
  endian: be
doc: |
  The key of a control record: a record inside a v2 record batch whose
  attributes have the isControl bit (0x20) set. Control batches are never
  compressed. The key says what kind of control record this is; for ABORT and
  COMMIT (transaction markers) the record's value is an EndTransactionMarker
  (the `end_transaction_marker` type below). The values of the KRaft control
  records (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION,
  KRAFT_VOTERS) are Kafka protocol messages and are not described here.

  Kafka reads only the first 4 bytes of the key and the first 6 bytes of an
  EndTransactionMarker value; anything after them is ignored, and so it is
  here. A key shorter than 4 bytes, or a marker value shorter than 6 bytes,
  ends the substream early (EOFError), where Kafka throws
  InvalidRecordException. A negative version is invalid (ValidationLessThanError);
  a version above 0 is read as version 0.

  This spec describes one control record key; `kafka_log_segment` imports it to
  decode the keys and marker values of records in control batches.
doc-ref:
  - spec/formats/control-records.md
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java
seq:
  - id: version
    -orig-id: version
    type: s2
    valid:
      min: 0
    doc: Key schema version; 0 is current. Higher versions are read as 0.
  - id: type
    -orig-id: type
    type: s2
    enum: control_record_type
    doc: |
      Any id not listed maps to Kafka's UNKNOWN (-1), which readers ignore
      and writers cannot produce.
types:
  end_transaction_marker:
    doc: |
      Value of an ABORT or COMMIT control record, written by the transaction
      coordinator at the end of a transaction.
    doc-ref: https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java
    seq:
      - id: version
        -orig-id: version
        type: s2
        valid:
          min: 0
        doc: Value schema version; 0 is current. Higher versions are read as 0.
      - id: coordinator_epoch
        -orig-id: coordinatorEpoch
        type: s4
enums:
  control_record_type:
    0:
      id: abort
      -orig-id: ABORT
      doc: The transaction was aborted; its records must be skipped.
    1:
      id: commit
      -orig-id: COMMIT
      doc: The transaction was committed.
    2:
      id: leader_change
      -orig-id: LEADER_CHANGE
      doc: KRaft quorum leader change.
    3:
      id: snapshot_header
      -orig-id: SNAPSHOT_HEADER
      doc: First record of a KRaft snapshot (`.checkpoint` file).
    4:
      id: snapshot_footer
      -orig-id: SNAPSHOT_FOOTER
      doc: Last record of a KRaft snapshot.
    5:
      id: kraft_version
      -orig-id: KRAFT_VERSION
    6:
      id: kraft_voters
      -orig-id: KRAFT_VOTERS
