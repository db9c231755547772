# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import kafka_control_record
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaLogSegment(KaitaiStruct):
    """A Kafka log segment file (`<20-digit base offset>.log`) is a plain
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

    .. seealso::
       spec/formats/log-file.md


    .. seealso::
       spec/formats/record-batch-v2.md


    .. seealso::
       spec/formats/legacy-message.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/FileLogInputStream.java


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java
    """

    class CompressionType(IntEnum):
        none = 0
        gzip = 1
        snappy = 2
        lz4 = 3
        zstd = 4

    class TimestampType(IntEnum):
        create_time = 0
        log_append_time = 1
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaLogSegment, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.entries = []
        i = 0
        while not self._io.is_eof():
            self.entries.append(KafkaLogSegment.LogEntry(self._io.pos(), self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class Header(KaitaiStruct):
        """A record header; the key is UTF-8 text and may not be null."""
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaLogSegment.Header, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_key = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            _ = self.len_key
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.len_key, self._io, u"/types/header/seq/0")
            self.key = self._io.read_bytes(self.len_key.value)
            self.len_value = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            if self.len_value.value >= 0:
                pass
                self.value = self._io.read_bytes(self.len_value.value)



        def _fetch_instances(self):
            pass
            self.len_key._fetch_instances()
            self.len_value._fetch_instances()
            if self.len_value.value >= 0:
                pass



    class LegacyMessage(KaitaiStruct):
        """A magic 0 or 1 message after its offset and size. The CRC-32 (IEEE) in
        `crc` covers the bytes from `magic` to the end of the value. A
        compressed message (codec other than none) is a wrapper: its key is
        null and its value is a compressed stream holding a whole inner message
        set (entries of this same layout; v1 inner offsets are relative). The
        value is kept as raw bytes.

        .. seealso::
           spec/formats/legacy-message.md


        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java


        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/AbstractLegacyRecordBatch.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaLogSegment.LegacyMessage, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.crc = self._io.read_u4be()
            self.magic = self._io.read_s1()
            if not  ((self.magic == 0) or (self.magic == 1)) :
                raise kaitaistruct.ValidationNotAnyOfError(self.magic, self._io, u"/types/legacy_message/seq/1")
            self.attributes = self._io.read_s1()
            _ = self.attributes
            if not _ & 7 <= 3:
                raise kaitaistruct.ValidationExprError(self.attributes, self._io, u"/types/legacy_message/seq/2")
            if self.magic >= 1:
                pass
                self.timestamp = self._io.read_s8be()

            self.len_key = self._io.read_s4be()
            if self.len_key >= 0:
                pass
                self.key = self._io.read_bytes(self.len_key)

            self.len_value = self._io.read_s4be()
            _ = self.len_value
            if not  ((_ >= 0) or (self.attributes & 7 == 0)) :
                raise kaitaistruct.ValidationExprError(self.len_value, self._io, u"/types/legacy_message/seq/6")
            if self.len_value >= 0:
                pass
                self.value = self._io.read_bytes(self.len_value)

            self.unparsed_tail = self._io.read_bytes_full()


        def _fetch_instances(self):
            pass
            if self.magic >= 1:
                pass

            if self.len_key >= 0:
                pass

            if self.len_value >= 0:
                pass


        @property
        def compression(self):
            if hasattr(self, '_m_compression'):
                return self._m_compression

            self._m_compression = KaitaiStream.resolve_enum(KafkaLogSegment.CompressionType, self.attributes & 7)
            return getattr(self, '_m_compression', None)

        @property
        def timestamp_type(self):
            """v1 only; v0 messages have no timestamp."""
            if hasattr(self, '_m_timestamp_type'):
                return self._m_timestamp_type

            if self.magic >= 1:
                pass
                self._m_timestamp_type = KaitaiStream.resolve_enum(KafkaLogSegment.TimestampType, (self.attributes & 8) >> 3)

            return getattr(self, '_m_timestamp_type', None)


    class LogEntry(KaitaiStruct):
        """One batch (magic 2) or one legacy message (magic 0 or 1), with the
        12-byte framing every entry shares (Kafka's LOG_OVERHEAD). The entry
        occupies 12 + `len_batch` bytes; the next one starts right after it.

        .. seealso::
           spec/formats/log-file.md


        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/FileLogInputStream.java
        """
        def __init__(self, ofs_entry, _io, _parent=None, _root=None):
            super(KafkaLogSegment.LogEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.ofs_entry = ofs_entry
            self._read()

        def _read(self):
            self.base_offset = self._io.read_s8be()
            self.len_batch = self._io.read_s4be()
            if not self.len_batch >= 14:
                raise kaitaistruct.ValidationLessThanError(14, self.len_batch, self._io, u"/types/log_entry/seq/1")
            _on = self.magic
            if _on == 0:
                pass
                self._raw_body = self._io.read_bytes(self.len_batch)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = KafkaLogSegment.LegacyMessage(_io__raw_body, self, self._root)
            elif _on == 1:
                pass
                self._raw_body = self._io.read_bytes(self.len_batch)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = KafkaLogSegment.LegacyMessage(_io__raw_body, self, self._root)
            else:
                pass
                self._raw_body = self._io.read_bytes(self.len_batch)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = KafkaLogSegment.RecordBatchV2(_io__raw_body, self, self._root)


        def _fetch_instances(self):
            pass
            _on = self.magic
            if _on == 0:
                pass
                self.body._fetch_instances()
            elif _on == 1:
                pass
                self.body._fetch_instances()
            else:
                pass
                self.body._fetch_instances()
            _ = self.magic
            if hasattr(self, '_m_magic'):
                pass


        @property
        def magic(self):
            """The magic byte, peeked at entry byte 16 (Kafka's MAGIC_OFFSET) to
            choose the body layout before the body is read.
            """
            if hasattr(self, '_m_magic'):
                return self._m_magic

            _pos = self._io.pos()
            self._io.seek(self.ofs_entry + 16)
            self._m_magic = self._io.read_s1()
            self._io.seek(_pos)
            return getattr(self, '_m_magic', None)


    class Record(KaitaiStruct):
        """One v2 record: a zigzag-varint length, then that many bytes of record
        body.

        .. seealso::
           spec/formats/record-batch-v2.md


        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java
        """
        def __init__(self, is_control, _io, _parent=None, _root=None):
            super(KafkaLogSegment.Record, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.is_control = is_control
            self._read()

        def _read(self):
            self.len_record = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            _ = self.len_record
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.len_record, self._io, u"/types/record/seq/0")
            self._raw_body = self._io.read_bytes(self.len_record.value)
            _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
            self.body = KafkaLogSegment.RecordBody(self.is_control, _io__raw_body, self, self._root)


        def _fetch_instances(self):
            pass
            self.len_record._fetch_instances()
            self.body._fetch_instances()


    class RecordBatchV2(KaitaiStruct):
        """A v2 record batch after its `baseOffset` and `batchLength`: a header
        (49 bytes here, 61 with the framing) followed by `num_records` records,
        either plain or as one compressed stream. The CRC-32C in `crc` covers
        every byte from `attributes` to the end of the batch; it excludes
        baseOffset, batchLength, partitionLeaderEpoch and magic, which a broker
        may rewrite without recomputing it.

        .. seealso::
           spec/formats/record-batch-v2.md


        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaLogSegment.RecordBatchV2, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.partition_leader_epoch = self._io.read_s4be()
            self.magic = self._io.read_s1()
            if not self.magic == 2:
                raise kaitaistruct.ValidationNotEqualError(2, self.magic, self._io, u"/types/record_batch_v2/seq/1")
            self.crc = self._io.read_u4be()
            self.attributes = self._io.read_s2be()
            _ = self.attributes
            if not _ & 7 <= 4:
                raise kaitaistruct.ValidationExprError(self.attributes, self._io, u"/types/record_batch_v2/seq/3")
            self.last_offset_delta = self._io.read_s4be()
            self.base_timestamp = self._io.read_s8be()
            self.max_timestamp = self._io.read_s8be()
            self.producer_id = self._io.read_s8be()
            self.producer_epoch = self._io.read_s2be()
            self.base_sequence = self._io.read_s4be()
            self.num_records = self._io.read_s4be()
            if not self.num_records >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.num_records, self._io, u"/types/record_batch_v2/seq/10")
            _on = self.compression
            if _on == KafkaLogSegment.CompressionType.none:
                pass
                self._raw_records = self._io.read_bytes_full()
                _io__raw_records = KaitaiStream(BytesIO(self._raw_records))
                self.records = KafkaLogSegment.RecordSet(self.num_records, self.is_control, _io__raw_records, self, self._root)
            else:
                pass
                self.records = self._io.read_bytes_full()


        def _fetch_instances(self):
            pass
            _on = self.compression
            if _on == KafkaLogSegment.CompressionType.none:
                pass
                self.records._fetch_instances()
            else:
                pass

        @property
        def compression(self):
            """Codec of `records`; ids 5-7 are invalid in Kafka."""
            if hasattr(self, '_m_compression'):
                return self._m_compression

            self._m_compression = KaitaiStream.resolve_enum(KafkaLogSegment.CompressionType, self.attributes & 7)
            return getattr(self, '_m_compression', None)

        @property
        def has_delete_horizon_ms(self):
            """Set by the log cleaner (KIP-534): `base_timestamp` then holds the
            time after which tombstones and markers may be removed.
            """
            if hasattr(self, '_m_has_delete_horizon_ms'):
                return self._m_has_delete_horizon_ms

            self._m_has_delete_horizon_ms = self.attributes & 64 != 0
            return getattr(self, '_m_has_delete_horizon_ms', None)

        @property
        def is_control(self):
            """A control batch (transaction marker or KRaft control record); its
            records are control records.
            """
            if hasattr(self, '_m_is_control'):
                return self._m_is_control

            self._m_is_control = self.attributes & 32 != 0
            return getattr(self, '_m_is_control', None)

        @property
        def is_transactional(self):
            """The batch belongs to a transaction."""
            if hasattr(self, '_m_is_transactional'):
                return self._m_is_transactional

            self._m_is_transactional = self.attributes & 16 != 0
            return getattr(self, '_m_is_transactional', None)

        @property
        def timestamp_type(self):
            if hasattr(self, '_m_timestamp_type'):
                return self._m_timestamp_type

            self._m_timestamp_type = KaitaiStream.resolve_enum(KafkaLogSegment.TimestampType, (self.attributes & 8) >> 3)
            return getattr(self, '_m_timestamp_type', None)


    class RecordBody(KaitaiStruct):
        """The fields of a v2 record after its length. A key or value length below
        zero means null (Kafka writes -1). The body must be consumed exactly.
        """
        def __init__(self, is_control, _io, _parent=None, _root=None):
            super(KafkaLogSegment.RecordBody, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.is_control = is_control
            self._read()

        def _read(self):
            self.attributes = self._io.read_s1()
            self.timestamp_delta = KafkaLogSegment.VlqZigzag(64, self._io, self, self._root)
            self.offset_delta = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            self.len_key = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            _ = self.len_key
            if not  ((_.value >= 0) or ((not (self.is_control)))) :
                raise kaitaistruct.ValidationExprError(self.len_key, self._io, u"/types/record_body/seq/3")
            if self.len_key.value >= 0:
                pass
                _on = self.is_control
                if _on == True:
                    pass
                    self._raw_key = self._io.read_bytes(self.len_key.value)
                    _io__raw_key = KaitaiStream(BytesIO(self._raw_key))
                    self.key = kafka_control_record.KafkaControlRecord(_io__raw_key)
                else:
                    pass
                    self.key = self._io.read_bytes(self.len_key.value)

            self.len_value = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            _ = self.len_value
            if not  ((_.value >= 0) or ((not (self.is_transaction_marker)))) :
                raise kaitaistruct.ValidationExprError(self.len_value, self._io, u"/types/record_body/seq/5")
            if self.len_value.value >= 0:
                pass
                _on = self.control_record_type
                if _on == kafka_control_record.KafkaControlRecord.ControlRecordType.abort:
                    pass
                    self._raw_value = self._io.read_bytes(self.len_value.value)
                    _io__raw_value = KaitaiStream(BytesIO(self._raw_value))
                    self.value = kafka_control_record.KafkaControlRecord.EndTransactionMarker(_io__raw_value)
                elif _on == kafka_control_record.KafkaControlRecord.ControlRecordType.commit:
                    pass
                    self._raw_value = self._io.read_bytes(self.len_value.value)
                    _io__raw_value = KaitaiStream(BytesIO(self._raw_value))
                    self.value = kafka_control_record.KafkaControlRecord.EndTransactionMarker(_io__raw_value)
                else:
                    pass
                    self.value = self._io.read_bytes(self.len_value.value)

            self.num_headers = KafkaLogSegment.VlqZigzag(32, self._io, self, self._root)
            _ = self.num_headers
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_headers, self._io, u"/types/record_body/seq/7")
            self.headers = []
            for i in range(self.num_headers.value):
                self.headers.append(KafkaLogSegment.Header(self._io, self, self._root))

            self.unparsed_tail = self._io.read_bytes_full()
            _ = self.unparsed_tail
            if not len(_) == 0:
                raise kaitaistruct.ValidationExprError(self.unparsed_tail, self._io, u"/types/record_body/seq/9")


        def _fetch_instances(self):
            pass
            self.timestamp_delta._fetch_instances()
            self.offset_delta._fetch_instances()
            self.len_key._fetch_instances()
            if self.len_key.value >= 0:
                pass
                _on = self.is_control
                if _on == True:
                    pass
                    self.key._fetch_instances()
                else:
                    pass

            self.len_value._fetch_instances()
            if self.len_value.value >= 0:
                pass
                _on = self.control_record_type
                if _on == kafka_control_record.KafkaControlRecord.ControlRecordType.abort:
                    pass
                    self.value._fetch_instances()
                elif _on == kafka_control_record.KafkaControlRecord.ControlRecordType.commit:
                    pass
                    self.value._fetch_instances()
                else:
                    pass

            self.num_headers._fetch_instances()
            for i in range(len(self.headers)):
                pass
                self.headers[i]._fetch_instances()


        @property
        def control_record_type(self):
            """The type of a control record; absent outside control batches."""
            if hasattr(self, '_m_control_record_type'):
                return self._m_control_record_type

            if self.is_control:
                pass
                self._m_control_record_type = self.key.type

            return getattr(self, '_m_control_record_type', None)

        @property
        def is_transaction_marker(self):
            """An ABORT or COMMIT record, whose value is an EndTransactionMarker."""
            if hasattr(self, '_m_is_transaction_marker'):
                return self._m_is_transaction_marker

            self._m_is_transaction_marker =  ((self.is_control) and ( ((self.control_record_type == kafka_control_record.KafkaControlRecord.ControlRecordType.abort) or (self.control_record_type == kafka_control_record.KafkaControlRecord.ControlRecordType.commit)) ))
            return getattr(self, '_m_is_transaction_marker', None)


    class RecordSet(KaitaiStruct):
        """The uncompressed records of a v2 batch: exactly `num_records` records
        filling the batch. Too few bytes raise EOFError (REC-10); bytes left over
        after the last record are rejected (REC-10).
        """
        def __init__(self, num_records, is_control, _io, _parent=None, _root=None):
            super(KafkaLogSegment.RecordSet, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.num_records = num_records
            self.is_control = is_control
            self._read()

        def _read(self):
            self.records = []
            for i in range(self.num_records):
                self.records.append(KafkaLogSegment.Record(self.is_control, self._io, self, self._root))

            if self.num_records > 0:
                pass
                self.unparsed_tail = self._io.read_bytes_full()
                _ = self.unparsed_tail
                if not len(_) == 0:
                    raise kaitaistruct.ValidationExprError(self.unparsed_tail, self._io, u"/types/record_set/seq/1")



        def _fetch_instances(self):
            pass
            for i in range(len(self.records)):
                pass
                self.records[i]._fetch_instances()

            if self.num_records > 0:
                pass



    class VlqZigzag(KaitaiStruct):
        """A Kafka varint (`num_bits` 32) or varlong (`num_bits` 64): an unsigned
        LEB128 integer (7 bits a byte, least significant group first, high bit
        = more bytes follow) holding a zigzag-encoded signed value, decoded as
        `(raw >> 1) ^ -(raw & 1)`. This is protobuf's sint32/sint64, not the
        sign extension of the formats repository's
        `vlq_base128_le.value_signed`.

        A varint takes at most 5 bytes and a varlong at most 10: a longer
        encoding fails validation (Kafka throws). As in Java, bits above
        `num_bits` (possible in the last byte) are dropped.

        .. seealso::
           spec/formats/record-batch-v2.md#7-varints


        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java
        """
        def __init__(self, num_bits, _io, _parent=None, _root=None):
            super(KafkaLogSegment.VlqZigzag, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.num_bits = num_bits
            self._read()

        def _read(self):
            self.groups = []
            i = 0
            while True:
                _ = self._io.read_u1()
                self.groups.append(_)
                _ = self.groups[i]
                if not  ((_ < 128) or (i < self.max_len - 1)) :
                    raise kaitaistruct.ValidationExprError(self.groups[i], self._io, u"/types/vlq_zigzag/seq/0")
                if _ < 128:
                    break
                i += 1


        def _fetch_instances(self):
            pass
            for i in range(len(self.groups)):
                pass


        @property
        def len(self):
            """Encoded size in bytes."""
            if hasattr(self, '_m_len'):
                return self._m_len

            self._m_len = len(self.groups)
            return getattr(self, '_m_len', None)

        @property
        def max_len(self):
            """Longest valid encoding in bytes (5 or 10)."""
            if hasattr(self, '_m_max_len'):
                return self._m_max_len

            self._m_max_len = (self.num_bits + 6) // 7
            return getattr(self, '_m_max_len', None)

        @property
        def raw(self):
            """The unsigned (still zigzag-encoded) value, as a `num_bits` integer."""
            if hasattr(self, '_m_raw'):
                return self._m_raw

            self._m_raw = (((((((((self.groups[0] & 127 | ((self.groups[1] & 127) << 7 if len(self.groups) > 1 else 0)) | ((self.groups[2] & 127) << 14 if len(self.groups) > 2 else 0)) | ((self.groups[3] & 127) << 21 if len(self.groups) > 3 else 0)) | ((self.groups[4] & 127) << 28 if len(self.groups) > 4 else 0)) | ((self.groups[5] & 127) << 35 if len(self.groups) > 5 else 0)) | ((self.groups[6] & 127) << 42 if len(self.groups) > 6 else 0)) | ((self.groups[7] & 127) << 49 if len(self.groups) > 7 else 0)) | ((self.groups[8] & 127) << 56 if len(self.groups) > 8 else 0)) | ((self.groups[9] & 127) << 63 if len(self.groups) > 9 else 0)) & (1 << self.num_bits) - 1
            return getattr(self, '_m_raw', None)

        @property
        def value(self):
            """The signed value."""
            if hasattr(self, '_m_value'):
                return self._m_value

            self._m_value = self.raw >> 1 ^ -(self.raw & 1)
            return getattr(self, '_m_value', None)
