meta:
  id: kafka_log_segment
  title: Apache Kafka log segment
  application: Apache Kafka
  file-extension:
    - log
    - checkpoint
  license: CC0-1.0
  ks-version: 0.11
  imports:
    - kafka_control_record
  endian: be
doc: |
  A Kafka log segment file (`<20-digit base offset>.log`) is a plain
  concatenation of entries, with no file header, padding or trailer. Every
  entry starts with an 8-byte offset and a 4-byte length; the magic byte at
  entry byte 16 selects the layout of the rest: magic 2 is a record batch
  (Kafka 0.11 and later), magic 0 and 1 are legacy messages (one message per
  entry; a compressed legacy message wraps a whole inner message set). KRaft
  snapshots (`<offset>-<epoch>.checkpoint`) and `bootstrap.checkpoint` use the
  same layout.

  What this spec checks, and what it cannot:

  * Structure only. CRCs (CRC-32C for v2, CRC-32 for v0/v1) cannot be
    computed in Kaitai Struct; they are exposed as fields for an external
    check. Compressed record data (gzip, xerial-framed or raw snappy, LZ4
    frame, zstd) is kept as raw bytes.
  * Uncompressed v2 batches are parsed down to each record and header,
    including the control record key and EndTransactionMarker value of
    control batches.
  * Every length is a substream bound: a batch cannot read past its
    `len_batch`, a record past its length varint, and leftover bytes inside
    a batch or record are rejected, as Kafka's reader rejects them.

  A torn or garbage tail is not skipped silently. Kafka's reader stops
  quietly at a partial last entry (FileLogInputStream) and recovery truncates
  it; a Kaitai parser has no "stop quietly", so parsing the whole file raises
  instead: EOFError (the Python runtime's EndOfStreamError) for an entry cut
  short (fewer than 12 header bytes, a missing magic byte, or fewer than
  `len_batch` body bytes), and a validation error (ValidationFailedError) for
  an impossible entry (length below 14, e.g. a zero-filled tail; a magic
  other than 0, 1 or 2). Callers that want Kafka's behaviour parse entry by
  entry and stop at the first error.
doc-ref:
  - spec/formats/log-file.md
  - spec/formats/record-batch-v2.md
  - spec/formats/legacy-message.md
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/FileLogInputStream.java
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java
seq:
  - id: entries
    type: log_entry(_io.pos)
    repeat: eos
types:
  log_entry:
    doc: |
      One batch (magic 2) or one legacy message (magic 0 or 1), with the
      12-byte framing every entry shares (Kafka's LOG_OVERHEAD). The entry
      occupies 12 + `len_batch` bytes; the next one starts right after it.
    doc-ref:
      - spec/formats/log-file.md
      - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/FileLogInputStream.java
    params:
      - id: ofs_entry
        type: u8
        doc: Byte position of this entry in the file (Kafka's batch position).
    seq:
      - id: base_offset
        -orig-id: baseOffset
        type: s8
        doc: |
          v2: the offset of the first record of the batch. v0/v1: the
          message's offset; for a compressed wrapper message, the offset of
          its *last* inner message.
      - id: len_batch
        -orig-id: batchLength
        type: s4
        valid:
          min: 14
        doc: |
          Bytes after this field (v0/v1: the message size). Kafka rejects a
          value below 14, the smallest legacy message (RECORD_OVERHEAD_V0),
          with CorruptRecordException; so does this spec. A zero-filled
          tail fails here.
      - id: body
        size: len_batch
        type:
          switch-on: magic
          cases:
            0: legacy_message
            1: legacy_message
            _: record_batch_v2
        doc: |
          Like Kafka's FileLogInputStream, every magic other than 0 and 1 is
          read as a v2 batch, whose `magic` check then rejects values above 2.
    instances:
      magic:
        pos: ofs_entry + 16
        type: s1
        doc: |
          The magic byte, peeked at entry byte 16 (Kafka's MAGIC_OFFSET) to
          choose the body layout before the body is read.

  record_batch_v2:
    doc: |
      A v2 record batch after its `baseOffset` and `batchLength`: a header
      (49 bytes here, 61 with the framing) followed by `num_records` records,
      either plain or as one compressed stream. The CRC-32C in `crc` covers
      every byte from `attributes` to the end of the batch; it excludes
      baseOffset, batchLength, partitionLeaderEpoch and magic, which a broker
      may rewrite without recomputing it.
    doc-ref:
      - spec/formats/record-batch-v2.md
      - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
    seq:
      - id: partition_leader_epoch
        -orig-id: partitionLeaderEpoch
        type: s4
        doc: Leader epoch stamped by the broker; -1 for none. Not CRC-covered.
      - id: magic
        -orig-id: magic
        type: s1
        valid: 2
      - id: crc
        -orig-id: crc
        type: u4
        doc: CRC-32C (Castagnoli) of the bytes from `attributes` to batch end.
      - id: attributes
        -orig-id: attributes
        type: s2
        valid:
          expr: (_ & 0x07) <= 4
        doc: |
          Bit flags, decoded by the instances below. Kafka reads only the low
          byte; bits 7-15 are unused. Codec ids 5-7 are invalid (BATCH-10).
      - id: last_offset_delta
        -orig-id: lastOffsetDelta
        type: s4
        doc: |
          lastOffset = baseOffset + lastOffsetDelta. Compaction keeps it even
          when the last records are removed.
      - id: base_timestamp
        -orig-id: baseTimestamp
        type: s8
        doc: |
          The first record's timestamp (Kafka also calls it firstTimestamp);
          -1 in an empty batch. Holds deleteHorizonMs instead when
          `has_delete_horizon_ms` is set.
      - id: max_timestamp
        -orig-id: maxTimestamp
        type: s8
        doc: |
          CREATE_TIME: the largest record timestamp. LOG_APPEND_TIME: the
          broker's append time, which is then every record's timestamp.
      - id: producer_id
        -orig-id: producerId
        type: s8
        doc: -1 when the producer is neither idempotent nor transactional.
      - id: producer_epoch
        -orig-id: producerEpoch
        type: s2
      - id: base_sequence
        -orig-id: baseSequence
        type: s4
        doc: |
          Sequence number of the first record; -1 for none. Record sequences
          are base_sequence + offset delta, wrapping past 2^31-1 to 0.
      - id: num_records
        -orig-id: recordsCount
        type: s4
        valid:
          min: 0
        doc: |
          Number of records. Compacted batches may hold fewer records than
          their offset span, and may be empty (0) to keep producer state.
      - id: records
        -orig-id: records
        size-eos: true
        type:
          switch-on: compression
          cases:
            compression_type::none: record_set(num_records, is_control)
        doc: |
          The rest of the batch (len_batch - 49 bytes). Uncompressed: the
          records themselves. Compressed: one stream in the codec's framing
          (see `compression`) that decompresses to the same record bytes;
          kept as raw bytes because Kaitai Struct cannot decompress it.
    instances:
      compression:
        value: attributes & 0x07
        enum: compression_type
        doc: Codec of `records`; ids 5-7 are invalid in Kafka.
      timestamp_type:
        value: (attributes & 0x08) >> 3
        enum: timestamp_type
      is_transactional:
        value: (attributes & 0x10) != 0
        doc: The batch belongs to a transaction.
      is_control:
        value: (attributes & 0x20) != 0
        doc: |
          A control batch (transaction marker or KRaft control record); its
          records are control records.
      has_delete_horizon_ms:
        value: (attributes & 0x40) != 0
        doc: |
          Set by the log cleaner (KIP-534): `base_timestamp` then holds the
          time after which tombstones and markers may be removed.

  record_set:
    doc: |
      The uncompressed records of a v2 batch: exactly `num_records` records
      filling the batch. Too few bytes raise EOFError (REC-10); bytes left over
      after the last record are rejected (REC-10).
    params:
      - id: num_records
        type: s4
      - id: is_control
        type: bool
    seq:
      - id: records
        type: record(is_control)
        repeat: expr
        repeat-expr: num_records
      - id: unparsed_tail
        size-eos: true
        valid:
          expr: _.length == 0
        if: num_records > 0
        doc: |
          Must be empty (REC-10). An empty batch's bytes are not looked at
          (BATCH-8).

  record:
    doc: |
      One v2 record: a zigzag-varint length, then that many bytes of record
      body.
    doc-ref:
      - spec/formats/record-batch-v2.md
      - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java
    params:
      - id: is_control
        type: bool
    seq:
      - id: len_record
        -orig-id: length
        type: vlq_zigzag(32)
        valid:
          expr: _.value >= 0
        doc: Must not be negative (REC-2).
      - id: body
        size: len_record.value
        type: record_body(is_control)

  record_body:
    doc: |
      The fields of a v2 record after its length. A key or value length below
      zero means null (Kafka writes -1). The body must be consumed exactly.
    params:
      - id: is_control
        type: bool
    seq:
      - id: attributes
        -orig-id: attributes
        type: s1
        doc: Unused; written as 0.
      - id: timestamp_delta
        -orig-id: timestampDelta
        type: vlq_zigzag(64)
        doc: |
          timestamp = batch base_timestamp + delta (CREATE_TIME). Under
          LOG_APPEND_TIME the record's timestamp is the batch max_timestamp.
      - id: offset_delta
        -orig-id: offsetDelta
        type: vlq_zigzag(32)
        doc: offset = batch base_offset + delta.
      - id: len_key
        -orig-id: keyLength
        type: vlq_zigzag(32)
        valid:
          expr: _.value >= 0 or not is_control
        doc: A control record's key may not be null (CTRL-2).
      - id: key
        -orig-id: key
        size: len_key.value
        type:
          switch-on: is_control
          cases:
            true: kafka_control_record
        if: len_key.value >= 0
        doc: In a control batch, the control record key.
      - id: len_value
        -orig-id: valueLength
        type: vlq_zigzag(32)
        valid:
          expr: _.value >= 0 or not is_transaction_marker
        doc: A transaction marker's value may not be null (CTRL-6).
      - id: value
        -orig-id: value
        size: len_value.value
        type:
          switch-on: control_record_type
          cases:
            kafka_control_record::control_record_type::abort: kafka_control_record::end_transaction_marker
            kafka_control_record::control_record_type::commit: kafka_control_record::end_transaction_marker
        if: len_value.value >= 0
        doc: In an ABORT or COMMIT control record, the EndTransactionMarker.
      - id: num_headers
        -orig-id: headersCount
        type: vlq_zigzag(32)
        valid:
          expr: _.value >= 0
        doc: Must not be negative (REC-8).
      - id: headers
        -orig-id: headers
        type: header
        repeat: expr
        repeat-expr: num_headers.value
      - id: unparsed_tail
        size-eos: true
        valid:
          expr: _.length == 0
        doc: Must be empty (REC-3).
    instances:
      control_record_type:
        value: key.as<kafka_control_record>.type
        if: is_control
        doc: The type of a control record; absent outside control batches.
      is_transaction_marker:
        value: |
          is_control and (
            control_record_type == kafka_control_record::control_record_type::abort
            or control_record_type == kafka_control_record::control_record_type::commit
          )
        doc: An ABORT or COMMIT record, whose value is an EndTransactionMarker.

  header:
    doc: A record header; the key is UTF-8 text and may not be null.
    seq:
      - id: len_key
        -orig-id: headerKeyLength
        type: vlq_zigzag(32)
        valid:
          expr: _.value >= 0
        doc: Must not be negative (REC-9).
      - id: key
        -orig-id: headerKey
        size: len_key.value
      - id: len_value
        -orig-id: headerValueLength
        type: vlq_zigzag(32)
      - id: value
        -orig-id: headerValue
        size: len_value.value
        if: len_value.value >= 0
        doc: Null when the length is negative.

  vlq_zigzag:
    doc: |
      A Kafka varint (`num_bits` 32) or varlong (`num_bits` 64): an unsigned
      LEB128 integer (7 bits a byte, least significant group first, high bit
      = more bytes follow) holding a zigzag-encoded signed value, decoded as
      `(raw >> 1) ^ -(raw & 1)`. This is protobuf's sint32/sint64, not the
      sign extension of the formats repository's
      `vlq_base128_le.value_signed`.

      A varint takes at most 5 bytes and a varlong at most 10: a longer
      encoding fails validation (Kafka throws). As in Java, bits above
      `num_bits` (possible in the last byte) are dropped.
    doc-ref:
      - spec/formats/record-batch-v2.md#7-varints
      - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java
    params:
      - id: num_bits
        type: u1
        doc: 32 for a varint (Java int), 64 for a varlong (Java long).
    seq:
      - id: groups
        type: u1
        valid:
          expr: _ < 0x80 or _index < max_len - 1
        repeat: until
        repeat-until: _ < 0x80
        doc: The encoded bytes; all but the last have the high bit set.
    instances:
      max_len:
        value: (num_bits + 6) / 7
        doc: Longest valid encoding in bytes (5 or 10).
      len:
        value: groups.size
        doc: Encoded size in bytes.
      raw:
        value: >-
          (groups[0] & 0x7f
          | (groups.size > 1 ? (groups[1] & 0x7f) << 7 : 0)
          | (groups.size > 2 ? (groups[2] & 0x7f) << 14 : 0)
          | (groups.size > 3 ? (groups[3] & 0x7f) << 21 : 0)
          | (groups.size > 4 ? (groups[4] & 0x7f) << 28 : 0)
          | (groups.size > 5 ? (groups[5] & 0x7f) << 35 : 0)
          | (groups.size > 6 ? (groups[6] & 0x7f) << 42 : 0)
          | (groups.size > 7 ? (groups[7] & 0x7f) << 49 : 0)
          | (groups.size > 8 ? (groups[8] & 0x7f) << 56 : 0)
          | (groups.size > 9 ? (groups[9] & 0x7f) << 63 : 0))
          & ((1 << num_bits) - 1)
        doc: The unsigned (still zigzag-encoded) value, as a `num_bits` integer.
      value:
        value: (raw >> 1) ^ -(raw & 1)
        doc: The signed value.

  legacy_message:
    doc: |
      A magic 0 or 1 message after its offset and size. The CRC-32 (IEEE) in
      `crc` covers the bytes from `magic` to the end of the value. A
      compressed message (codec other than none) is a wrapper: its key is
      null and its value is a compressed stream holding a whole inner message
      set (entries of this same layout; v1 inner offsets are relative). The
      value is kept as raw bytes.
    doc-ref:
      - spec/formats/legacy-message.md
      - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java
      - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/AbstractLegacyRecordBatch.java
    seq:
      - id: crc
        -orig-id: crc
        type: u4
        doc: CRC-32 (IEEE 802.3) of the bytes from `magic` to the end.
      - id: magic
        -orig-id: magic
        type: s1
        valid:
          any-of: [0, 1]
      - id: attributes
        -orig-id: attributes
        type: s1
        valid:
          expr: (_ & 0x07) <= 3
        doc: |
          Bits 0-2: codec, bit 3 (v1 only): timestamp type. Codec 4 (zstd) and
          ids 5-7 are invalid below magic 2 (LEGACY-8).
      - id: timestamp
        -orig-id: timestamp
        type: s8
        if: magic >= 1
        doc: v1 only; -1 for none.
      - id: len_key
        -orig-id: keySize
        type: s4
      - id: key
        -orig-id: key
        size: len_key
        if: len_key >= 0
      - id: len_value
        -orig-id: valueSize
        type: s4
        valid:
          expr: _ >= 0 or (attributes & 0x07) == 0
        doc: A compressed wrapper's value may not be null (LEGACY-9).
      - id: value
        -orig-id: value
        size: len_value
        if: len_value >= 0
        doc: |
          The payload, or for a compressed wrapper the compressed inner
          message set (gzip, xerial-framed snappy, or LZ4 frame; zstd is not
          allowed below magic 2).
      - id: unparsed_tail
        size-eos: true
        doc: |
          Normally empty. Bytes after the value are covered by the CRC but
          belong to no field; readers ignore them, as Kafka's LegacyRecord
          does (LEGACY-20).
    instances:
      compression:
        value: attributes & 0x07
        enum: compression_type
      timestamp_type:
        value: (attributes & 0x08) >> 3
        enum: timestamp_type
        if: magic >= 1
        doc: v1 only; v0 messages have no timestamp.

enums:
  compression_type:
    0:
      id: none
      -orig-id: NONE
    1:
      id: gzip
      -orig-id: GZIP
      doc: GZIP stream (RFC 1952).
    2:
      id: snappy
      -orig-id: SNAPPY
      doc: xerial snappy-java stream, or raw snappy from non-Java producers.
    3:
      id: lz4
      -orig-id: LZ4
      doc: LZ4 frame.
    4:
      id: zstd
      -orig-id: ZSTD
      doc: Zstandard frame; magic 2 only.
  timestamp_type:
    0:
      id: create_time
      -orig-id: CREATE_TIME
    1:
      id: log_append_time
      -orig-id: LOG_APPEND_TIME
