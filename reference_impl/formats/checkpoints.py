"""Small text files of a log directory (spec/formats/checkpoint-files.md).

* Text checkpoints [CheckpointFile.java]: ``<version>\\n<count>\\n`` then one entry
  per line. Offset checkpoints (recovery point, log start offset, replication
  offset, cleaner offset) hold ``<topic> <partition> <offset>``;
  ``leader-epoch-checkpoint`` holds ``<epoch> <startOffset>``. Both are version 0.
* ``partition.metadata``: ``version: 0\\ntopic_id: <Uuid>`` with no final newline.
* ``.kafka_cleanshutdown``: ``{"version":0,"brokerEpoch":<long>}`` (empty before Kafka 3.6).
* ``meta.properties``: Java properties (``key=value`` lines, ``#`` comments).

Readers follow Kafka's, quirks included: lines end at ``\\n``, ``\\r`` or ``\\r\\n``
(BufferedReader.readLine), fields split on runs of whitespace (``\\s+``), numbers
parse as Java ints and longs. Writers produce exactly what Kafka writes, so a file
Kafka wrote reads and writes back byte for byte.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import CorruptCheckpointError
from .file_naming import parse_java_long

T = TypeVar("T")

OFFSET_CHECKPOINT_VERSION = 0
LEADER_EPOCH_CHECKPOINT_VERSION = 0
PARTITION_METADATA_VERSION = 0
CLEAN_SHUTDOWN_VERSION = 0

_LINE_END = re.compile(r"\r\n|\r|\n")
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")  # Java's \s
_METADATA_SEPARATOR = re.compile(r":[ \t\n\x0b\f\r]+")  # PartitionMetadataReadBuffer's ":\s+"
_UUID_TEXT = re.compile(r"[A-Za-z0-9_-]{22}(?:==)?")
ZERO_UUID = bytes(16)


class CheckpointLineError(CorruptCheckpointError):
    """A CorruptCheckpointError that also names the 1-based line it is about."""

    def __init__(self, message: str, *, line: int, **where) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}", **where)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "line": self.line}


def _lines(text: str) -> list[tuple[int, str]]:
    """(byte position, line) pairs as BufferedReader.readLine yields them: a final line
    terminator does not start another line."""
    lines, start = [], 0
    for match in _LINE_END.finditer(text):
        lines.append((start, text[start : match.start()]))
        start = match.end()
    if start < len(text):
        lines.append((start, text[start:]))
    return lines


def _decode(data: bytes | str, file: str | None) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptCheckpointError(f"not UTF-8: {exc.reason}", file=file, position=exc.start)


def _split_fields(line: str) -> list[str]:
    """Java's ``Pattern.compile("\\\\s+").split(line)``: a leading run yields an empty first
    field, trailing empty fields are dropped."""
    fields = _JAVA_WHITESPACE.split(line)
    while fields and fields[-1] == "":
        fields.pop()
    return fields


# --- the generic text checkpoint --------------------------------------------------------


def read_checkpoint(
    data: bytes | str,
    *,
    version: int,
    parse_entry: Callable[[list[str]], T],
    file: str | None = None,
) -> list[T]:
    """CheckpointReadBuffer.read (CKPT-1, CKPT-3 to CKPT-7): version line, count line, one
    entry per line.

    An empty file, or one with only the version line, has no entries. A wrong version,
    a version or count that is not a Java int, an entry ``parse_entry`` rejects (it
    raises ValueError) or an entry count other than the count line raises
    ``CheckpointLineError``.
    """
    lines = _lines(_decode(data, file))
    if not lines:
        return []

    def corrupt(index: int, message: str) -> CheckpointLineError:
        return CheckpointLineError(message, line=index + 1, file=file, position=lines[index][0])

    def java_int(index: int) -> int:
        try:
            return parse_java_long(lines[index][1], bits=32)
        except ValueError:
            raise corrupt(index, f"malformed line {lines[index][1]!r}")

    read_version = java_int(0)
    if read_version != version:
        raise corrupt(0, f"unrecognised version {read_version}, expected {version}")
    if len(lines) == 1:
        return []
    expected = java_int(1)
    if expected < 0:
        raise corrupt(1, f"negative entry count {expected}")
    entries = []
    for index in range(2, len(lines)):
        try:
            entries.append(parse_entry(_split_fields(lines[index][1])))
        except ValueError:
            raise corrupt(index, f"malformed line {lines[index][1]!r}")
    if len(entries) != expected:
        raise corrupt(1, f"expected {expected} entries but found {len(entries)}")
    return entries


def write_checkpoint(entries: Iterable[str], *, version: int) -> bytes:
    """CheckpointWriteBuffer.write (CKPT-2): every line, the last included, ends with ``\\n``."""
    lines = list(entries)
    return "".join(f"{line}\n" for line in [str(version), str(len(lines)), *lines]).encode()


@dataclass(frozen=True, slots=True)
class TopicPartitionOffset:
    """An offset-checkpoint entry: ``<topic> <partition> <offset>``."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """A leader-epoch-checkpoint entry: ``<epoch> <startOffset>``."""

    epoch: int
    start_offset: int


def _offset_entry(fields: list[str]) -> TopicPartitionOffset:
    if len(fields) != 3:
        raise ValueError(f"{len(fields)} fields, not 3")
    return TopicPartitionOffset(
        fields[0], parse_java_long(fields[1], bits=32), parse_java_long(fields[2])
    )


def _epoch_entry(fields: list[str]) -> EpochEntry:
    if len(fields) != 2:
        raise ValueError(f"{len(fields)} fields, not 2")
    entry = EpochEntry(parse_java_long(fields[0], bits=32), parse_java_long(fields[1]))
    if entry.epoch < 0 or entry.start_offset < 0:
        raise ValueError("negative epoch or start offset")  # CKPT-10
    return entry


def read_offset_checkpoint(
    data: bytes | str, *, file: str | None = None
) -> list[TopicPartitionOffset]:
    """OffsetCheckpointFile (CKPT-9): exactly three whitespace-separated fields per entry."""
    return read_checkpoint(
        data, version=OFFSET_CHECKPOINT_VERSION, parse_entry=_offset_entry, file=file
    )


def write_offset_checkpoint(entries: Iterable[TopicPartitionOffset]) -> bytes:
    return write_checkpoint(
        (f"{e.topic} {e.partition} {e.offset}" for e in entries), version=OFFSET_CHECKPOINT_VERSION
    )


def read_leader_epoch_checkpoint(data: bytes | str, *, file: str | None = None) -> list[EpochEntry]:
    """LeaderEpochCheckpointFile (CKPT-10): exactly two non-negative fields per entry."""
    return read_checkpoint(
        data, version=LEADER_EPOCH_CHECKPOINT_VERSION, parse_entry=_epoch_entry, file=file
    )


def write_leader_epoch_checkpoint(entries: Iterable[EpochEntry]) -> bytes:
    return write_checkpoint(
        (f"{e.epoch} {e.start_offset}" for e in entries), version=LEADER_EPOCH_CHECKPOINT_VERSION
    )


# --- partition.metadata -----------------------------------------------------------------


def parse_uuid(text: str) -> bytes:
    """Kafka's Uuid.fromString: URL-safe base64 of 16 bytes, 22 characters (or 24 with
    ``==`` padding, which Java's decoder also takes). Raises ValueError."""
    if not _UUID_TEXT.fullmatch(text):
        raise ValueError(f"{text!r} is not 22 URL-safe base64 characters")
    return base64.urlsafe_b64decode(text[:22] + "==")


def format_uuid(uuid: bytes) -> str:
    """Uuid.toString: URL-safe base64 without padding."""
    if len(uuid) != 16:
        raise ValueError(f"a Uuid is 16 bytes, not {len(uuid)}")
    return base64.urlsafe_b64encode(uuid).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    version: int
    topic_id: str  # the Uuid's text form, as in the file


def read_partition_metadata(data: bytes | str, *, file: str | None = None) -> PartitionMetadata:
    """PartitionMetadataReadBuffer (PMETA-2 to PMETA-6): ``version: <int >= 0>`` then
    ``topic_id: <Uuid>``.

    Each line splits once on ``:`` plus whitespace; higher versions are accepted, the
    all-zero topic id is not, and lines after the second are ignored, as in Kafka.
    """
    lines = _lines(_decode(data, file))

    def field(index: int, key: str) -> str:
        if index >= len(lines):
            raise CheckpointLineError(f"missing '{key}: ' line", line=index + 1, file=file)
        parts = _METADATA_SEPARATOR.split(lines[index][1], maxsplit=1)
        if len(parts) != 2 or parts[0] != key:
            raise CheckpointLineError(
                f"expected '{key}: <value>', found {lines[index][1]!r}",
                line=index + 1, file=file, position=lines[index][0],
            )  # fmt: skip
        return parts[1]

    def invalid(index: int, message: str) -> CheckpointLineError:
        return CheckpointLineError(message, line=index + 1, file=file, position=lines[index][0])

    try:
        version = parse_java_long(field(0, "version"), bits=32)
    except ValueError:
        raise invalid(0, f"malformed version line {lines[0][1]!r}")
    if version < PARTITION_METADATA_VERSION:
        raise invalid(0, f"unrecognized version {version}")
    topic_id = field(1, "topic_id")
    try:
        uuid = parse_uuid(topic_id)
    except ValueError as exc:
        raise invalid(1, str(exc))
    if uuid == ZERO_UUID:
        raise invalid(1, "the topic id is the all-zero Uuid")
    return PartitionMetadata(version, topic_id)


def write_partition_metadata(metadata: PartitionMetadata) -> bytes:
    """PMETA-1, PartitionMetadata.encode: two lines, no newline after the second."""
    return f"version: {metadata.version}\ntopic_id: {metadata.topic_id}".encode()


# --- .kafka_cleanshutdown ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """The marker's content. ``readable`` is False when the content is not the JSON object
    of CLEAN-3; ``version`` and ``broker_epoch`` are then None, as for the empty marker of
    Kafka before 3.6 (which is readable: it just carries nothing)."""

    version: int | None
    broker_epoch: int | None
    readable: bool = True


def read_clean_shutdown(data: bytes, *, file: str | None = None) -> CleanShutdown:
    """CLEAN-1, CLEAN-2, CLEAN-4: the marker counts by its presence alone, so this never
    raises; unknown JSON fields are ignored and unparseable content gives an unknown
    broker epoch, as CleanShutdownFileHandler.read does."""
    if not data.strip():
        return CleanShutdown(None, None)
    try:
        content = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return CleanShutdown(None, None, readable=False)
    if not isinstance(content, dict):
        return CleanShutdown(None, None, readable=False)
    version, epoch = content.get("version"), content.get("brokerEpoch")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (version, epoch)):
        return CleanShutdown(None, None, readable=False)
    return CleanShutdown(version, epoch)


def write_clean_shutdown(broker_epoch: int, version: int = CLEAN_SHUTDOWN_VERSION) -> bytes:
    """CLEAN-3: Jackson's compact encoding of CleanShutdownFileHandler.Content, field order kept."""
    return json.dumps(
        {"version": version, "brokerEpoch": broker_epoch}, separators=(",", ":")
    ).encode()


# --- meta.properties --------------------------------------------------------------------

_PROPERTY_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def read_properties(data: bytes | str, *, file: str | None = None) -> dict[str, str]:
    """java.util.Properties.load, as far as Kafka's files need it: ``#``/``!`` comment lines,
    blank lines, a key ending at the first unescaped ``=``, ``:`` or whitespace, backslash
    line continuations and escapes (``\\t``, ``\\uXXXX``, ``\\=``...). Values may be empty.

    Bytes are read as ISO 8859-1, as Properties.load(InputStream) does.
    """
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    properties: dict[str, str] = {}
    logical = ""
    for _, raw in _lines(text):
        line = raw.lstrip(" \t\f")  # also on continuation lines
        if not logical and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd run of backslashes continues the line
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical, file)
        properties[key] = value
        logical = ""
    if logical:
        key, value = _split_property(logical, file)
        properties[key] = value
    return properties


def _split_property(line: str, file: str | None) -> tuple[str, str]:
    i = 0
    while i < len(line) and line[i] not in "=: \t\f":
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key, file), _unescape(rest, file)


def _unescape(text: str, file: str | None) -> str:
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        code = text[i + 1]
        if code == "u":
            digits = text[i + 2 : i + 6]
            if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                raise CorruptCheckpointError(f"malformed \\uxxxx escape {digits!r}", file=file)
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_PROPERTY_ESCAPES.get(code, code))
            i += 2
    return "".join(out)


def read_meta_properties(data: bytes | str, *, file: str | None = None) -> dict[str, str]:
    """``meta.properties``: Java properties whose ``version`` (0 for ZooKeeper-era brokers,
    1 for KRaft) must be present and an int; every other key is kept as is."""
    properties = read_properties(data, file=file)
    try:
        parse_java_long(properties["version"], bits=32)
    except (KeyError, ValueError):
        raise CorruptCheckpointError(
            f"meta.properties needs an integer 'version', found {properties.get('version')!r}",
            file=file,
        )
    return properties
