# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import kafka_offset_commit


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaKraftControl(KaitaiStruct):
    """The values of KRaft's control records in the `__cluster_metadata` partition
    and its snapshots, as Kafka's ControlRecordUtils reads them: at message
    version 0 (flexible: compact arrays, a tagged-fields section), each starting
    with its own int16 `Version` field. The record's key (control-records.md,
    kafka_control_record) says which: type 2 LEADER_CHANGE (the top level here),
    3 SNAPSHOT_HEADER (`snapshot_header`), 4 SNAPSHOT_FOOTER (`snapshot_footer`),
    5 KRAFT_VERSION (`kraft_version`). KRAFT_VOTERS (6) has nested endpoints and
    features and is left to the table-driven decoder (reference_impl/messages).
    tests/test_kaitai_messages.py checks both readings on the corpus's control
    records.

    .. seealso::
       spec/formats/internal-topics/cluster-metadata.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/4.0/clients/src/main/resources/common/message/LeaderChangeMessage.json
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaKraftControl, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.version = self._io.read_s2be()
        self.leader_id = self._io.read_s4be()
        self.voters = KafkaKraftControl.Voters(self._io, self, self._root)
        self.granting_voters = KafkaKraftControl.Voters(self._io, self, self._root)
        self.tagged_fields = kafka_offset_commit.KafkaOffsetCommit.TaggedFields(self._io)


    def _fetch_instances(self):
        pass
        self.voters._fetch_instances()
        self.granting_voters._fetch_instances()
        self.tagged_fields._fetch_instances()

    class KraftVersion(KaitaiStruct):
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaKraftControl.KraftVersion, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            self.kraft_version = self._io.read_s2be()
            self.tagged_fields = kafka_offset_commit.KafkaOffsetCommit.TaggedFields(self._io)


        def _fetch_instances(self):
            pass
            self.tagged_fields._fetch_instances()


    class SnapshotFooter(KaitaiStruct):
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaKraftControl.SnapshotFooter, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            self.tagged_fields = kafka_offset_commit.KafkaOffsetCommit.TaggedFields(self._io)


        def _fetch_instances(self):
            pass
            self.tagged_fields._fetch_instances()


    class SnapshotHeader(KaitaiStruct):
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaKraftControl.SnapshotHeader, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            self.last_contained_log_timestamp = self._io.read_s8be()
            self.tagged_fields = kafka_offset_commit.KafkaOffsetCommit.TaggedFields(self._io)


        def _fetch_instances(self):
            pass
            self.tagged_fields._fetch_instances()


    class Voter(KaitaiStruct):
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaKraftControl.Voter, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.voter_id = self._io.read_s4be()
            self.tagged_fields = kafka_offset_commit.KafkaOffsetCommit.TaggedFields(self._io)


        def _fetch_instances(self):
            pass
            self.tagged_fields._fetch_instances()


    class Voters(KaitaiStruct):
        """A compact array (uvarint count + 1) of voters, each with its tagged fields."""
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaKraftControl.Voters, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_plus_one = kafka_offset_commit.KafkaOffsetCommit.Uvarint(self._io)
            _ = self.len_plus_one
            if not _.value > 0:
                raise kaitaistruct.ValidationExprError(self.len_plus_one, self._io, u"/types/voters/seq/0")
            self.voters = []
            for i in range(self.len_plus_one.value - 1):
                self.voters.append(KafkaKraftControl.Voter(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.len_plus_one._fetch_instances()
            for i in range(len(self.voters)):
                pass
                self.voters[i]._fetch_instances()
