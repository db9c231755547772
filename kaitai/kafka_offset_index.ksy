meta:
  id: kafka_offset_index
  title: Apache Kafka offset index
  application: Apache Kafka
  file-extension: index
  license: CC0-1.0
  ks-version: 0.11
  endian: be
doc: |
  The offset index of a log segment (`<20-digit base offset>.index`): a sparse
  map from offsets to byte positions in the segment's `.log` file, as fixed
  8-byte entries with no header, version or checksum. Entry offsets are
  relative to the segment's base offset, which is not stored here but in the
  file name: offset = base offset + `relative_offset`. Offsets increase
  strictly from entry to entry.

  Kafka preallocates the file (10 MiB by default) and trims it to its entries
  when the segment is rolled or closed, so an index left by a crash may end in
  zero-filled slots. Those parse here as entries (relative offset 0, position
  0), as they count as entries when Kafka reopens the file (OIDX-9).

  The checks of Kafka's OffsetIndex.sanityCheck are validations here: the file
  size must be a multiple of 8 (OIDX-2) and the last entry's offset must not
  be below the base offset (OIDX-3).
doc-ref:
  - spec/formats/offset-index.md
  - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/OffsetIndex.java
seq:
  - id: entries
    type: entry
    valid:
      expr: _index < num_entries - 1 or _.relative_offset >= 0
    repeat: expr
    repeat-expr: num_entries
  - id: partial_entry
    size-eos: true
    valid:
      expr: _.length == 0
    doc: Bytes after the last whole entry; there must be none (OIDX-2).
instances:
  num_entries:
    value: _io.size / 8
    doc: floor(file size / 8), zero-filled slots included (OIDX-9).
types:
  entry:
    seq:
      - id: relative_offset
        -orig-id: relativeOffset
        type: s4
        doc: Offset minus the segment's base offset, in [0, 2^31-1].
      - id: position
        -orig-id: position
        type: s4
        doc: Byte position in the `.log` file of the batch holding the offset.
