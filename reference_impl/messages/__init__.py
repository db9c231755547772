"""What the records of Kafka's internal topics mean: a layer beside ``records/`` that reads the
keys and values of ``__consumer_offsets``, ``__transaction_state``, ``__cluster_metadata``,
``__remote_log_metadata`` and ``__share_group_state`` as the Kafka messages they hold
(spec/formats/internal-topics/). The log never calls it: it is for dump, extract and people.

``decoder_for`` picks a decoder by its name (``klogspec dump --decode``) or by a partition's
topic (``auto``); ``decode_record`` decodes one record with it and never raises: a key or value
that does not decode is kept in base64 with ``decode_error`` (MSG-12).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import (
    cluster_metadata,
    consumer_offsets,
    control_records,
    remote_log_metadata,
    share_group_state,
    transaction_state,
)
from .framing import FRAMINGS
from .schema import Table
from .wire import MessageDecodeError, b64

__all__ = [
    "DECODER_NAMES",
    "MessageDecodeError",
    "RecordDecoder",
    "decode_record",
    "decoder_for",
]


@dataclass(frozen=True)
class RecordDecoder:
    name: str  # the --decode name
    table: Table

    @property
    def topic(self) -> str:
        return self.table.topic


_DECODERS = tuple(
    RecordDecoder(name, module.TABLE)
    for name, module in (
        ("offsets", consumer_offsets),
        ("transactions", transaction_state),
        ("metadata", cluster_metadata),
        ("remote-log-metadata", remote_log_metadata),
        ("share-group-state", share_group_state),
    )
)
_BY_NAME = {d.name: d for d in _DECODERS}
_BY_TOPIC = {d.topic: d for d in _DECODERS}
DECODER_NAMES = ("auto", *_BY_NAME, "none")


def decoder_for(name: str, topic: str | None) -> RecordDecoder | None:
    """The decoder ``name`` names; for ``auto`` the one of ``topic`` (None for a topic that is
    not internal), for ``none`` None."""
    if name == "none":
        return None
    if name == "auto":
        return _BY_TOPIC.get(topic or "")
    return _BY_NAME[name]


def decode_record(
    decoder: RecordDecoder, key: bytes | None, value: bytes | None, *, control: bool = False
) -> tuple[dict | None, dict | None]:
    """MSG-12: ``(key_decoded, value_decoded)`` of one record, a record of a control batch read
    as a control record whatever the topic. A side that does not decode becomes
    ``{"decode_error": {reason, rule, position}, "base64": ...}``; when the key does not
    decode, the value's type is unknown, and its error says so."""
    table = control_records.TABLE if control else decoder.table
    read_key, read_value = FRAMINGS[table.framing]
    try:
        key_decoded, context = read_key(table, key)
    except MessageDecodeError as exc:
        unknown = MessageDecodeError(
            "the key did not decode: the value's type is unknown", exc.rule
        )
        return _failed(exc, key), None if value is None else _failed(unknown, value)
    try:
        return key_decoded, read_value(table, context, value)
    except MessageDecodeError as exc:
        return key_decoded, _failed(exc, value)


def _failed(exc: MessageDecodeError, blob: bytes | None) -> dict:
    return {"decode_error": exc.to_dict(), "base64": b64(blob)}
