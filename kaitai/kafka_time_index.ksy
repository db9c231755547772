meta:
  id: kafka_time_index
  title: Apache Kafka time index
  application: Apache Kafka
  file-extension: timeindex
  license: CC0-1.0
  ks-version: 0.11
  endian: be
doc: |
  The time index of a log segment (`<20-digit base offset>.timeindex`): a
  sparse map from timestamps to offsets, as fixed 12-byte entries with no
  header, version or checksum. An entry (T, O) says that T is the largest
  timestamp seen up to and including the batch whose last offset is O, so any
  record with a timestamp above T lies after O. Timestamps increase strictly
  and offsets never decrease from entry to entry. Offsets are relative to the
  segment's base offset, taken from the file name.

  Like the offset index, the file is preallocated (10485756 bytes by default,
  10 MiB rounded down to a multiple of 12) and trimmed at roll or close;
  zero-filled slots after a crash parse as entries (TIDX-11).

  The checks of Kafka's TimeIndex.sanityCheck are validations here: the file
  size must be a multiple of 12 (TIDX-5), and the last entry's timestamp must
  not be below the first's (TIDX-6) nor its offset below the base offset
  (TIDX-7).
doc-ref:
  - spec/formats/time-index.md
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/TimeIndex.java
seq:
  - id: entries
    type: entry
    valid:
      expr: |
        _index < num_entries - 1
        or (_.timestamp >= entries[0].timestamp and _.relative_offset >= 0)
    repeat: expr
    repeat-expr: num_entries
  - id: partial_entry
    size-eos: true
    valid:
      expr: _.length == 0
    doc: Bytes after the last whole entry; there must be none (TIDX-5).
instances:
  num_entries:
    value: _io.size / 12
    doc: floor(file size / 12), zero-filled slots included (TIDX-11).
types:
  entry:
    seq:
      - id: timestamp
        -orig-id: timestamp
        type: s8
        doc: Largest record timestamp (ms) up to this entry's batch.
      - id: relative_offset
        -orig-id: relativeOffset
        type: s4
        doc: Offset minus the segment's base offset.
