"""Our field tables of Kafka's internal-topic messages (``tables/*.yaml``), loaded as data.

Each table was written from Kafka's message schemas (the JSON files of
clients/.../common/message, metadata/.../common/metadata, group-coordinator/...,
transaction-coordinator/..., share-coordinator/..., storage/.../message and raft/..., at
releases 4.0.2, 4.1.0, 4.2.0, 4.3.0 and 4.4.0; each message names its file under
``source``): the layouts are 4.4.0's, ``releases`` gives each release's valid versions and a
field's ``since`` the release that added it (tagged fields added to a released version). A table holds the
topic's record types (``records``: the type id and its key and value messages) and each
message's versions and fields in Kafka's notation (versions ``0+``, ``1-3``, ``none``).
The spec pages (spec/formats/internal-topics/message-encoding.md §1 says how to read them,
each topic's page holds its tables) are made from the same tables; Kafka's counterpart is
the message generator (MessageDataGenerator.java) and its schema model (FieldSpec.java).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import yaml

# libyaml's safe loader when PyYAML has it (the same data, 7x faster): the tables load at
# import, so every command's start-up pays for them (``klogspec dump``: 0.1 s of CPU)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Versions:
    """A version range of Kafka's schemas: ``0+``, ``1-3``, ``2`` or ``none``."""

    low: int
    high: int  # inclusive; 32767 for "N+"

    @classmethod
    def parse(cls, text) -> Versions:
        text = str(text).strip()
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), 0x7FFF)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # int8 .. float64, string, bytes, records, uuid, bool, a struct, or []<type>
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    default: object
    flexible: Versions | None  # a field's own flexibleVersions (none of the tables has one)
    fields: tuple[Field, ...]  # a struct's, or an array of structs'
    since: str | None = None  # the Kafka release that added it, when later than its message

    @property
    def element(self) -> str:
        return self.type[2:] if self.type.startswith("[]") else self.type


@dataclass(frozen=True)
class Message:
    name: str
    valid: Versions
    flexible: Versions
    source: str
    releases: dict  # Kafka release -> the valid versions it has (None: not in it)
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class RecordType:
    id: int
    key: str | None
    value: str
    value_beyond: str | None = None  # the message of value versions beyond ``value``'s


@dataclass(frozen=True)
class Table:
    name: str
    topic: str
    framing: str  # coordinator | metadata | control | json
    records: dict[int, RecordType]
    messages: dict[str, Message] = field(repr=False)


def _field(raw: dict) -> Field:
    none = Versions.parse("none")
    return Field(
        name=raw["name"],
        type=raw["type"],
        versions=Versions.parse(raw["versions"]),
        nullable=Versions.parse(raw["nullable"]) if "nullable" in raw else none,
        tag=raw.get("tag"),
        tagged=Versions.parse(raw["tagged"]) if "tagged" in raw else none,
        default=raw.get("default"),
        flexible=Versions.parse(raw["flexible"]) if "flexible" in raw else None,
        fields=tuple(_field(f) for f in raw.get("fields", ())),
        since=raw.get("since"),
    )


@cache
def load_table(name: str) -> Table:
    """The table ``tables/<name>.yaml``, parsed once."""
    text = resources.files(__package__).joinpath("tables", f"{name}.yaml").read_text("utf-8")
    raw = yaml.load(text, Loader=_SAFE_LOADER)
    messages = {
        mname: Message(
            name=mname,
            valid=Versions.parse(m["valid"]),
            flexible=Versions.parse(m["flexible"]),
            source=m["source"],
            releases=m["releases"],
            fields=tuple(_field(f) for f in m["fields"]),
        )
        for mname, m in raw["messages"].items()
    }
    records = {
        r["id"]: RecordType(r["id"], r.get("key"), r["value"], r.get("value_beyond"))
        for r in raw["records"]
    }
    return Table(name, raw["topic"], raw["framing"], records, messages)


TABLES = (
    "consumer_offsets",
    "transaction_state",
    "share_group_state",
    "cluster_metadata",
    "remote_log_metadata",
    "control_records",
    "quorum_state",
)
