# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaProducerSnapshot(KaitaiStruct):
    """A producer-state snapshot (`<20-digit offset>.snapshot`, named after the
    exclusive end offset it was taken at): the idempotent and transactional
    producers known to the partition, so that a broker need not rescan the log
    on restart. The layout is Kafka's ProducerSnapshot message schema, version 1,
    with a non-flexible (int32-counted) entry array.

    The CRC-32C in `crc` covers every byte after it, from `num_entries` to the
    end of the file; Kaitai Struct cannot compute it. Kafka rejects a file with
    another version, a bad CRC or too few bytes (CorruptSnapshotException);
    here a bad version is a ValidationError and too few bytes an EOFError.
    Bytes after the last entry are not read.

    .. seealso::
       spec/formats/producer-snapshot.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/resources/message/ProducerSnapshot.json


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaProducerSnapshot, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.version = self._io.read_s2be()
        if not self.version == 1:
            raise kaitaistruct.ValidationNotEqualError(1, self.version, self._io, u"/seq/0")
        self.crc = self._io.read_u4be()
        self.num_entries = self._io.read_s4be()
        if not self.num_entries >= 0:
            raise kaitaistruct.ValidationLessThanError(0, self.num_entries, self._io, u"/seq/2")
        self.entries = []
        for i in range(self.num_entries):
            self.entries.append(KafkaProducerSnapshot.ProducerEntry(self._io, self, self._root))



    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class ProducerEntry(KaitaiStruct):
        """The last written batch of one producer (46 bytes). `last_offset` and
        `last_sequence` are -1 when no batch metadata is kept.
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaProducerSnapshot.ProducerEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.producer_id = self._io.read_s8be()
            self.producer_epoch = self._io.read_s2be()
            self.last_sequence = self._io.read_s4be()
            self.last_offset = self._io.read_s8be()
            self.offset_delta = self._io.read_s4be()
            self.timestamp = self._io.read_s8be()
            self.coordinator_epoch = self._io.read_s4be()
            self.current_txn_first_offset = self._io.read_s8be()


        def _fetch_instances(self):
            pass
