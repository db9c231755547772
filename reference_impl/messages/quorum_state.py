"""The ``quorum-state`` file of a KRaft metadata partition: one line of JSON, QuorumStateData
at the version its ``data_version`` names (spec/formats/internal-topics/cluster-metadata.md §6,
rules KRAFT-5 to KRAFT-7; FileQuorumStateStore.java)."""

from __future__ import annotations

import json

from .schema import Field, load_table
from .wire import MessageDecodeError

TABLE = load_table("quorum_state")
MESSAGE = TABLE.messages["QuorumStateData"]
_JSON_TYPES = {"int32": int, "int64": int, "string": str, "uuid": str}


def read_quorum_state(text: str) -> dict:
    """The file's first line as FileQuorumStateStore reads it: KRAFT-5, a JSON object;
    KRAFT-6, its ``data_version`` one of QuorumStateData's versions; KRAFT-7, every untagged
    field of that version present (the generated JSON reader's rule) with a value of its
    type, under the schema's name in camelCase."""
    line = text.splitlines()[0] if text else ""
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise MessageDecodeError(f"the first line is not JSON: {exc}", "KRAFT-5") from None
    if not isinstance(data, dict):
        raise MessageDecodeError("the first line is not a JSON object", "KRAFT-5")
    version = data.get("data_version")
    if isinstance(version, bool) or not isinstance(version, int) or version not in MESSAGE.valid:
        raise MessageDecodeError(
            f"data_version {version!r} is not one of QuorumStateData's (0, 1)", "KRAFT-6"
        )
    for f in MESSAGE.fields:
        if version in f.versions:
            _check(f, data, version)
    return data


def _check(f: Field, data: dict, version: int) -> None:
    name = f.name[0].lower() + f.name[1:]
    if name not in data:
        if f.tag is None:  # the generated JSON reader: every untagged field is mandatory
            raise MessageDecodeError(f"no {name!r} in version {version}", "KRAFT-7")
        return
    value = data[name]
    if value is None and version in f.nullable:
        return
    expected = list if f.type.startswith("[]") else _JSON_TYPES.get(f.type, object)
    if not isinstance(value, expected) or isinstance(value, bool):
        raise MessageDecodeError(f"{name!r} is {value!r}, not a {f.type}", "KRAFT-7")
