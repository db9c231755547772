# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaTimeIndex(KaitaiStruct):
    """The time index of a log segment (`<20-digit base offset>.timeindex`): a
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

    .. seealso::
       spec/formats/time-index.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/TimeIndex.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaTimeIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.entries = []
        for i in range(self.num_entries):
            self.entries.append(KafkaTimeIndex.Entry(self._io, self, self._root))
            _ = self.entries[i]
            if not  ((i < self.num_entries - 1) or ( ((_.timestamp >= self.entries[0].timestamp) and (_.relative_offset >= 0)) )) :
                raise kaitaistruct.ValidationExprError(self.entries[i], self._io, u"/seq/0")

        self.partial_entry = self._io.read_bytes_full()
        _ = self.partial_entry
        if not len(_) == 0:
            raise kaitaistruct.ValidationExprError(self.partial_entry, self._io, u"/seq/1")


    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class Entry(KaitaiStruct):
        def __init__(self, _io, _parent=None, _root=None):
            super(KafkaTimeIndex.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.timestamp = self._io.read_s8be()
            self.relative_offset = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    @property
    def num_entries(self):
        """floor(file size / 12), zero-filled slots included (TIDX-11)."""
        if hasattr(self, '_m_num_entries'):
            return self._m_num_entries

        self._m_num_entries = self._io.size() // 12
        return getattr(self, '_m_num_entries', None)
