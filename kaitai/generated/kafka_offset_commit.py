# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaOffsetCommit(KaitaiStruct):
    """The key of an offset commit record of the `__consumer_offsets` topic, the
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

    .. seealso::
       spec/formats/internal-topics/consumer-offsets.md


    .. seealso::
       spec/formats/internal-topics/message-encoding.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/4.0/group-coordinator/src/main/resources/common/message/OffsetCommitValue.json
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaOffsetCommit, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.record_type = self._io.read_s2be()
        if not  ((self.record_type == 0) or (self.record_type == 1)) :
            raise kaitaistruct.ValidationNotAnyOfError(self.record_type, self._io, u"/seq/0")
        self.group = KafkaOffsetCommit.String16(self._io, self, self._root)
        self.topic = KafkaOffsetCommit.String16(self._io, self, self._root)
        self.partition = self._io.read_s4be()


    def _fetch_instances(self):
        pass
        self.group._fetch_instances()
        self.topic._fetch_instances()

    class CompactString(KaitaiStruct):
        """A flexible version's string, uvarint length + 1 (0 null) then UTF-8 (MSG-2)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaOffsetCommit.CompactString, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_plus_one = KafkaOffsetCommit.Uvarint(self._io, self, self._root)
            if self.len_plus_one.value > 0:
                pass
                self.value = (self._io.read_bytes(self.len_plus_one.value - 1)).decode(u"UTF-8")



        def _fetch_instances(self):
            pass
            self.len_plus_one._fetch_instances()
            if self.len_plus_one.value > 0:
                pass



    class String16(KaitaiStruct):
        """A non-flexible string, int16 length (-1 null) then UTF-8 (MSG-2)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaOffsetCommit.String16, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_value = self._io.read_s2be()
            if not self.len_value >= -1:
                raise kaitaistruct.ValidationLessThanError(-1, self.len_value, self._io, u"/types/string16/seq/0")
            if self.len_value >= 0:
                pass
                self.value = (self._io.read_bytes(self.len_value)).decode(u"UTF-8")



        def _fetch_instances(self):
            pass
            if self.len_value >= 0:
                pass



    class TaggedField(KaitaiStruct):
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaOffsetCommit.TaggedField, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.tag = KafkaOffsetCommit.Uvarint(self._io, self, self._root)
            self.len_data = KafkaOffsetCommit.Uvarint(self._io, self, self._root)
            self.data = self._io.read_bytes(self.len_data.value)


        def _fetch_instances(self):
            pass
            self.tag._fetch_instances()
            self.len_data._fetch_instances()


    class TaggedFields(KaitaiStruct):
        """A count, then (tag, size, bytes) per field, tags increasing (MSG-5)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaOffsetCommit.TaggedFields, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.count = KafkaOffsetCommit.Uvarint(self._io, self, self._root)
            self.fields = []
            for i in range(self.count.value):
                self.fields.append(KafkaOffsetCommit.TaggedField(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.count._fetch_instances()
            for i in range(len(self.fields)):
                pass
                self.fields[i]._fetch_instances()



    class Uvarint(KaitaiStruct):
        """An unsigned varint (LEB128, at most 5 bytes, MSG-1), as
        ByteUtils.readUnsignedVarint reads it.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaOffsetCommit.Uvarint, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.groups = []
            i = 0
            while True:
                _ = self._io.read_u1()
                self.groups.append(_)
                _ = self.groups[i]
                if not  ((_ < 128) or (i < 4)) :
                    raise kaitaistruct.ValidationExprError(self.groups[i], self._io, u"/types/uvarint/seq/0")
                if _ < 128:
                    break
                i += 1


        def _fetch_instances(self):
            pass
            for i in range(len(self.groups)):
                pass


        @property
        def value(self):
            if hasattr(self, '_m_value'):
                return self._m_value

            self._m_value = (((self.groups[0] & 127 | ((self.groups[1] & 127) << 7 if len(self.groups) > 1 else 0)) | ((self.groups[2] & 127) << 14 if len(self.groups) > 2 else 0)) | ((self.groups[3] & 127) << 21 if len(self.groups) > 3 else 0)) | ((self.groups[4] & 15) << 28 if len(self.groups) > 4 else 0)
            return getattr(self, '_m_value', None)


    class Value(KaitaiStruct):
        """An OffsetCommitValue, versions 0 to 4 (a null value is a tombstone)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaOffsetCommit.Value, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            if not self.version >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.version, self._io, u"/types/value/seq/0")
            if not self.version <= 4:
                raise kaitaistruct.ValidationGreaterThanError(4, self.version, self._io, u"/types/value/seq/0")
            self.offset = self._io.read_s8be()
            if self.version >= 3:
                pass
                self.leader_epoch = self._io.read_s4be()

            if self.version < 4:
                pass
                self.metadata16 = KafkaOffsetCommit.String16(self._io, self, self._root)

            if self.version >= 4:
                pass
                self.metadata_compact = KafkaOffsetCommit.CompactString(self._io, self, self._root)

            self.commit_timestamp = self._io.read_s8be()
            if self.version == 1:
                pass
                self.expire_timestamp = self._io.read_s8be()

            if self.version >= 4:
                pass
                self.tagged_fields = KafkaOffsetCommit.TaggedFields(self._io, self, self._root)



        def _fetch_instances(self):
            pass
            if self.version >= 3:
                pass

            if self.version < 4:
                pass
                self.metadata16._fetch_instances()

            if self.version >= 4:
                pass
                self.metadata_compact._fetch_instances()

            if self.version == 1:
                pass

            if self.version >= 4:
                pass
                self.tagged_fields._fetch_instances()
