"""The files of a partition directory other than the ``.log``, as pure codecs over bytes
(spec/formats/): file naming (file_naming.py), the entries of the offset, time and
transaction indexes (index_entries.py), producer snapshots (producer_snapshot.py) and the
text checkpoints (checkpoints.py). Nothing here opens a file; log/ does."""
