"""Kaitai Struct specs of Kafka's on-disk formats; parsers in kaitai.generated (see README.md)."""
