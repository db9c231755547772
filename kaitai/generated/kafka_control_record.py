# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaControlRecord(KaitaiStruct):
    """The key of a control record: a record inside a v2 record batch whose
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

    .. seealso::
       spec/formats/control-records.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java
    """

    class ControlRecordType(IntEnum):
        abort = 0
        commit = 1
        leader_change = 2
        snapshot_header = 3
        snapshot_footer = 4
        kraft_version = 5
        kraft_voters = 6
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaControlRecord, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.version = self._io.read_s2be()
        if not self.version >= 0:
            raise kaitaistruct.ValidationLessThanError(0, self.version, self._io, u"/seq/0")
        self.type = KaitaiStream.resolve_enum(KafkaControlRecord.ControlRecordType, self._io.read_s2be())


    def _fetch_instances(self):
        pass

    class EndTransactionMarker(KaitaiStruct):
        """Value of an ABORT or COMMIT control record, written by the transaction
        coordinator at the end of a transaction.

        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaControlRecord.EndTransactionMarker, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            if not self.version >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.version, self._io, u"/types/end_transaction_marker/seq/0")
            self.coordinator_epoch = self._io.read_s4be()


        def _fetch_instances(self):
            pass
