"""The harness's own steps on the testee's files: ``damage`` (docs/conformance/scenarios.md,
schema ``#/$defs/damage``), and how a step the harness cannot do is reported
(``StepError``: the step fails as ``harness_step``, naming the operation and the file).

Only regular files inside the scenario's directory are read or written, never through a
link (scratch.py).
"""

from __future__ import annotations

import errno
from pathlib import Path

from . import scratch
from .batches import build_all
from .diagnostics import (
    describe_damage,
)
from .file_names import expand_name


class StepError(Exception):
    """A step the harness does itself (damage, set_mtime, snapshot, files) could not be
    done on the testee's files: the test fails with this message, the run goes on."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


_OS_REASONS = {
    errno.ENOENT: "does not exist",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "is not a directory, or a directory on its path is a file",
    errno.EACCES: "cannot be read or written (permission denied)",
    errno.EPERM: "cannot be read or written (operation not permitted)",
    errno.EEXIST: "already exists",
}


def os_reason(exc: OSError) -> str:
    return _OS_REASONS.get(exc.errno, exc.strerror or type(exc).__name__)


def apply_damage(
    root: Path, pdir: Path, damage: dict, now_ms: int = 0, anchor: Path | None = None
) -> None:
    """One damage operation of a scenario (schema: #/$defs/damage). Only regular files
    inside ``anchor`` (the scenario's directory; ``root``'s parent by default) are read or
    written, never through a link (scratch.py): anything else raises scratch.UnsafeFile."""
    anchor = root.parent if anchor is None else anchor

    def resolve(name: str) -> Path:
        return root / name[3:] if name.startswith("../") else pdir / expand_name(name)

    path = resolve(damage["file"])
    if damage.get("delete"):
        scratch.unlink(path, anchor)
        return
    if damage.get("make_dir"):
        scratch.make_dirs(path, anchor)
        return
    if (
        "write_hex" in damage
        or "write_text" in damage
        or "write_batches" in damage
        or "copy_from" in damage
    ):
        if "write_hex" in damage:
            data = bytes.fromhex(damage["write_hex"])
        elif "write_text" in damage:
            data = damage["write_text"].encode()
        elif "copy_from" in damage:
            data = scratch.read_bytes(resolve(damage["copy_from"]), anchor)
        else:
            data = b"".join(build_all(damage["write_batches"], now_ms))
        scratch.write_bytes(path, anchor, data)
        return
    data = bytearray(scratch.read_bytes(path, anchor))

    def at(position: int) -> int:
        found = position if position >= 0 else len(data) + position
        if not 0 <= found < len(data):
            raise StepError(
                f"{describe_damage(damage)}, but {expand_name(damage['file'])} holds only {len(data)} bytes",
                "damage of a byte beyond the end of a file",
            )
        return found

    if "truncate_to" in damage:
        cut = damage["truncate_to"]
        del data[(cut if cut >= 0 else at(cut)) :]
    elif "flip_bit" in damage:
        data[at(damage["flip_bit"]["at"])] ^= 1 << damage["flip_bit"].get("bit", 0)
    elif "zero" in damage:
        start = at(damage["zero"]["at"])
        end = min(len(data), start + damage["zero"]["length"])
        data[start:end] = bytes(end - start)
    elif "append_hex" in damage:
        data += bytes.fromhex(damage["append_hex"])
    elif "append_zeros" in damage:
        data += bytes(damage["append_zeros"])
    scratch.write_bytes(path, anchor, bytes(data))
