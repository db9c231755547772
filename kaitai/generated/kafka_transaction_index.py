# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaTransactionIndex(KaitaiStruct):
    """The transaction index of a log segment (`<20-digit base offset>.txnindex`):
    one fixed 34-byte AbortedTxn entry per transaction aborted in the segment, in
    the order the ABORT markers were written, so `last_offset` increases
    strictly. Committed transactions are not recorded. The file is not
    preallocated and only exists once a segment has seen an abort.

    A trailing partial entry is ignored, as Kafka's reader ignores it (TXN-4).

    .. seealso::
       spec/formats/transaction-index.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/TransactionIndex.java


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/AbortedTxn.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaTransactionIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.entries = []
        for i in range(self._io.size() // 34):
            self.entries.append(KafkaTransactionIndex.AbortedTxn(self._io, self, self._root))

        self.partial_entry = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class AbortedTxn(KaitaiStruct):
        """
        .. seealso::
           Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/AbortedTxn.java
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaTransactionIndex.AbortedTxn, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            if not self.version <= 255:
                raise kaitaistruct.ValidationGreaterThanError(255, self.version, self._io, u"/types/aborted_txn/seq/0")
            self.producer_id = self._io.read_s8be()
            self.first_offset = self._io.read_s8be()
            self.last_offset = self._io.read_s8be()
            self.last_stable_offset = self._io.read_s8be()


        def _fetch_instances(self):
            pass

        @property
        def version_byte(self):
            """The version as Kafka reads it, the signed byte at entry offset 0."""
            if hasattr(self, '_m_version_byte'):
                return self._m_version_byte

            self._m_version_byte = self.version >> 8
            return getattr(self, '_m_version_byte', None)
