"""What ``klogspec recover`` refuses before it changes anything (spec/behaviour/recovery.md §7,
RECOV-23, RECOV-24).

* A partition directory whose topic is not a name Kafka allows. Kafka's ``Topic.validate``
  (clients' org.apache.kafka.common.internals.Topic) admits ASCII letters, digits, ``.``,
  ``_`` and ``-``, and not ``.`` or ``..``, so no broker makes any other directory (its
  length limit, 249 today, is not checked: older brokers allowed 255). Names
  are bytes on Linux and such a directory may still appear (``t\\xff\\xfe-0``); recovering it
  would end with writing its name into the log directory's checkpoints, which are UTF-8 text
  of space-separated fields (CKPT-B-5): a name that is not UTF-8, or holds a space, cannot
  be written there as it is, and a broker would not find it. It is refused by name (its
  bytes shown escaped), before the lock, the plan or the quarantine.
* A ``.lock`` that is not a regular file of the log directory (lock.py).

``shown`` renders any path for a terminal or JSON: bytes that are not UTF-8 as ``\\xNN``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import parse_partition_dir_name

LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")  # Topic.LEGAL_CHARS, one or more


def shown(path: Path | str) -> str:
    """``path`` as text: bytes that are not UTF-8 (surrogate-escaped by Python) as ``\\xNN``."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def refused_partition(path: Path) -> str | None:
    """Why ``recover`` refuses the partition directory ``path`` before changing anything (its
    topic is not one Kafka allows), or None."""
    try:
        topic = parse_partition_dir_name(path.name).topic
    except KafkaLogError as exc:
        return str(exc)
    if LEGAL_TOPIC.fullmatch(topic) and topic not in (".", ".."):
        return None
    return (
        f"the topic '{shown(topic)}' is not a Kafka topic name (ASCII letters, "
        "digits, '.', '_' and '-' only, as Topic.validate requires): no broker makes this "
        "directory, and its name cannot be written to the checkpoint files as a broker reads "
        "them; refused, nothing changed (rename the directory to the topic it holds first)"
    )
