# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaOffsetIndex(KaitaiStruct):
    """The offset index of a log segment (`<20-digit base offset>.index`): a sparse
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

    .. seealso::
       spec/formats/offset-index.md


    .. seealso::
       Source - https://github.com/apache/kafka/blob/1eb7644349cb07139d6a3c1ad1986979647cac99/storage/src/main/java/org/apache/kafka/storage/internals/log/OffsetIndex.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaOffsetIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.entries = []
        for i in range(self.num_entries):
            self.entries.append(KafkaOffsetIndex.Entry(self._io, self, self._root))
            _ = self.entries[i]
            if not  ((i < self.num_entries - 1) or (_.relative_offset >= 0)) :
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
            super(KafkaOffsetIndex.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.relative_offset = self._io.read_s4be()
            self.position = self._io.read_s4be()


        def _fetch_instances(self):
            pass


    @property
    def num_entries(self):
        """floor(file size / 8), zero-filled slots included (OIDX-9)."""
        if hasattr(self, '_m_num_entries'):
            return self._m_num_entries

        self._m_num_entries = self._io.size() // 8
        return getattr(self, '_m_num_entries', None)
