meta:
  id: kafka_offset_commit
  title: Apache Kafka offset commit record (a __consumer_offsets key, and its value)
  application: Apache Kafka
  license: CC0-1.0
  ks-version: 0.11
  endian: be
doc: |
  The key of an offset commit record of the `__consumer_offsets` topic, the
  layout of these records that is fixed enough for Kaitai: coordinator framing
  (an int16 record type, then the key message), record type 0 or 1, whose key
  is a group, a topic and a partition. Parse the record's value with the
  nested type `value`: an int16 version (0 to 4), then OffsetCommitValue at
  that version; version 4 is flexible (a compact metadata string and a
  tagged-fields section, whose tag 0 is the committed topic's id).

  The other record types of the topic, and the other internal topics, are
  described by the field tables of spec/formats/internal-topics/ and read by
  reference_impl/messages; tests/test_kaitai_messages.py checks that both
  readings agree on every offset commit of the corpus.
doc-ref:
  - spec/formats/internal-topics/consumer-offsets.md
  - spec/formats/internal-topics/message-encoding.md
  - https://github.com/apache/kafka/blob/4.0/group-coordinator/src/main/resources/common/message/OffsetCommitValue.json
seq:
  - id: record_type
    -orig-id: version
    type: s2
    valid:
      any-of: [0, 1]
    doc: 0 is the pre-0.9 form, 1 every later one (Kafka's old "key version").
  - id: group
    type: string16
  - id: topic
    type: string16
  - id: partition
    type: s4
types:
  value:
    doc: An OffsetCommitValue, versions 0 to 4 (a null value is a tombstone).
    seq:
      - id: version
        type: s2
        valid:
          min: 0
          max: 4
      - id: offset
        type: s8
      - id: leader_epoch
        -orig-id: leaderEpoch
        type: s4
        if: version >= 3
        doc: -1 when unknown; absent before version 3 (then -1).
      - id: metadata16
        -orig-id: metadata
        type: string16
        if: version < 4
      - id: metadata_compact
        -orig-id: metadata
        type: compact_string
        if: version >= 4
      - id: commit_timestamp
        -orig-id: commitTimestamp
        type: s8
      - id: expire_timestamp
        -orig-id: expireTimestamp
        type: s8
        if: version == 1
      - id: tagged_fields
        type: tagged_fields
        if: version >= 4
  string16:
    doc: A non-flexible string, int16 length (-1 null) then UTF-8 (MSG-2).
    seq:
      - id: len_value
        type: s2
        valid:
          min: -1
      - id: value
        type: str
        encoding: UTF-8
        size: len_value
        if: len_value >= 0
  compact_string:
    doc: A flexible version's string, uvarint length + 1 (0 null) then UTF-8 (MSG-2).
    seq:
      - id: len_plus_one
        type: uvarint
      - id: value
        type: str
        encoding: UTF-8
        size: len_plus_one.value - 1
        if: len_plus_one.value > 0
  tagged_fields:
    doc: A count, then (tag, size, bytes) per field, tags increasing (MSG-5).
    seq:
      - id: count
        type: uvarint
      - id: fields
        type: tagged_field
        repeat: expr
        repeat-expr: count.value
  tagged_field:
    seq:
      - id: tag
        type: uvarint
      - id: len_data
        type: uvarint
      - id: data
        size: len_data.value
        doc: For tag 0 of OffsetCommitValue v4, the 16 bytes of topicId.
  uvarint:
    doc: |
      An unsigned varint (LEB128, at most 5 bytes, MSG-1), as
      ByteUtils.readUnsignedVarint reads it.
    seq:
      - id: groups
        type: u1
        valid:
          expr: _ < 0x80 or _index < 4
        repeat: until
        repeat-until: _ < 0x80
    instances:
      value:
        value: >-
          (groups[0] & 0x7f)
          | (groups.size > 1 ? (groups[1] & 0x7f) << 7 : 0)
          | (groups.size > 2 ? (groups[2] & 0x7f) << 14 : 0)
          | (groups.size > 3 ? (groups[3] & 0x7f) << 21 : 0)
          | (groups.size > 4 ? (groups[4] & 0x0f) << 28 : 0)
