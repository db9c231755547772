meta:
  id: kafka_kraft_control
  title: Apache Kafka KRaft control record values (leader change, snapshot header and footer, KRaft version)
  application: Apache Kafka
  license: CC0-1.0
  ks-version: 0.11
  imports:
    - kafka_offset_commit
  endian: be
doc: |
  The values of KRaft's control records in the `__cluster_metadata` partition
  and its snapshots, as Kafka's ControlRecordUtils reads them: at message
  version 0 (flexible: compact arrays, a tagged-fields section), each starting
  with its own int16 `Version` field. The record's key (control-records.md,
  kafka_control_record) says which: type 2 LEADER_CHANGE (the top level here),
  3 SNAPSHOT_HEADER (`snapshot_header`), 4 SNAPSHOT_FOOTER (`snapshot_footer`),
  5 KRAFT_VERSION (`kraft_version`). KRAFT_VOTERS (6) has nested endpoints and
  features and is left to the table-driven decoder (reference_impl/messages).
  tests/test_kaitai_messages.py checks both readings on the corpus's control
  records.
doc-ref:
  - spec/formats/internal-topics/cluster-metadata.md
  - https://github.com/apache/kafka/blob/4.0/clients/src/main/resources/common/message/LeaderChangeMessage.json
seq:
  - id: version
    type: s2
  - id: leader_id
    -orig-id: LeaderId
    type: s4
  - id: voters
    -orig-id: Voters
    type: voters
  - id: granting_voters
    -orig-id: GrantingVoters
    type: voters
  - id: tagged_fields
    type: kafka_offset_commit::tagged_fields
types:
  voters:
    doc: A compact array (uvarint count + 1) of voters, each with its tagged fields.
    seq:
      - id: len_plus_one
        type: kafka_offset_commit::uvarint
        valid:
          expr: _.value > 0
      - id: voters
        type: voter
        repeat: expr
        repeat-expr: len_plus_one.value - 1
  voter:
    seq:
      - id: voter_id
        -orig-id: VoterId
        type: s4
      - id: tagged_fields
        type: kafka_offset_commit::tagged_fields
  snapshot_header:
    seq:
      - id: version
        type: s2
      - id: last_contained_log_timestamp
        -orig-id: LastContainedLogTimestamp
        type: s8
      - id: tagged_fields
        type: kafka_offset_commit::tagged_fields
  snapshot_footer:
    seq:
      - id: version
        type: s2
      - id: tagged_fields
        type: kafka_offset_commit::tagged_fields
  kraft_version:
    seq:
      - id: version
        type: s2
      - id: kraft_version
        -orig-id: KRaftVersion
        type: s2
      - id: tagged_fields
        type: kafka_offset_commit::tagged_fields
