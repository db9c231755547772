"""The other files of a partition directory as pure codecs."""
