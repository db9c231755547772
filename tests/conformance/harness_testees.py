"""Small testees that leave files the harness does not expect, for the harness's own tests:
the reference, with its files changed behind its back after each operation. None of them
may end a run in a traceback; each fails only the tests whose steps need those files.

``<name>`` is an in-process factory (``harness_testees:<name>`` with this directory on
the path); ``python -m conformance.testee --factory harness_testees:<name>`` serves it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from conformance.adapter import OperationError
from conformance.reference import ReferenceAdapter


class _AfterEachCall(ReferenceAdapter):
    """The reference; ``after(partition directory, op)`` runs after every operation."""

    def open(self, dir: str, config: dict, *, now_ms: int, topic_id: str | None = None) -> dict:
        self.dir = Path(dir)
        return super().open(self._where(self.dir), config, now_ms=now_ms, topic_id=topic_id)

    def _where(self, pdir: Path) -> str:
        return str(pdir)

    def after(self, pdir: Path, op: str) -> None:
        raise NotImplementedError

    def __getattribute__(self, name: str):
        method = super().__getattribute__(name)
        if name.startswith("_") or name in ("after", "hello", "dir") or not callable(method):
            return method

        def call(*args, **kwargs):
            try:
                return method(*args, **kwargs)
            finally:
                pdir = self.__dict__.get("dir")
                if pdir is not None and pdir.is_dir():
                    self.after(pdir, name)

        return call


class NoSnapshots(_AfterEachCall):
    """Deletes every producer snapshot it writes (while claiming producer_snapshots)."""

    def after(self, pdir: Path, op: str) -> None:
        for path in pdir.glob("*.snapshot"):
            path.unlink()


class RenamesSegments(_AfterEachCall):
    """At close, renames every segment file to ``<name>.old``."""

    def after(self, pdir: Path, op: str) -> None:
        if op == "close":
            for path in pdir.glob("0*.*"):
                if path.suffix in (".log", ".index", ".timeindex", ".snapshot"):
                    path.rename(path.with_name(path.name + ".old"))


class WritesNothing(_AfterEachCall):
    """Keeps its log somewhere else: the directory the harness gave it stays empty."""

    def _where(self, pdir: Path) -> str:
        self._elsewhere = getattr(self, "_elsewhere", None) or tempfile.mkdtemp(prefix="elsewhere-")
        return str(Path(self._elsewhere) / pdir.name)

    def after(self, pdir: Path, op: str) -> None:
        pass


class SegmentAsDirectory(_AfterEachCall):
    """At close, turns every segment's ``.log`` but the first into a directory."""

    def after(self, pdir: Path, op: str) -> None:
        if op == "close":
            for path in sorted(pdir.glob("*.log"))[1:]:
                path.unlink()
                path.mkdir()


class RemovesItsDirectory(_AfterEachCall):
    """At close, removes its partition directory."""

    def after(self, pdir: Path, op: str) -> None:
        if op == "close":
            shutil.rmtree(pdir)


class DoubleSpacedEpochs(_AfterEachCall):
    """Writes ``leader-epoch-checkpoint`` entries with two spaces: one root cause of many
    failures (CKPT-B-4)."""

    def after(self, pdir: Path, op: str) -> None:
        path = pdir / "leader-epoch-checkpoint"
        if path.is_file():
            path.write_text(re.sub(" +", "  ", path.read_text()))


OUTSIDE_TEXT = "a file outside the testee's directory: no byte of it may reach a report\n"


def outside_file() -> Path:
    """A file outside every scenario's directory (the test reads it back unchanged)."""
    path = Path(tempfile.gettempdir()) / f"klogspec-outside-{os.getpid()}.txt"
    if not path.is_file():
        path.write_text(OUTSIDE_TEXT)
    return path


class LinksOutside(_AfterEachCall):
    """At close, replaces its first ``.log`` with a symbolic link to a file outside its
    directory (issue 20 §1: a later damage step wrote into it, the report showed it)."""

    def after(self, pdir: Path, op: str) -> None:
        log = pdir / "00000000000000000000.log"
        if op == "close" and log.is_file() and not log.is_symlink():
            log.unlink()
            log.symlink_to(outside_file())


class FifoForLog(_AfterEachCall):
    """At close, replaces its first ``.log`` with a FIFO (a read of it would block)."""

    def after(self, pdir: Path, op: str) -> None:
        log = pdir / "00000000000000000000.log"
        if op == "close" and log.is_file() and not log.is_symlink():
            log.unlink()
            os.mkfifo(log)


class LinksToDevZero(_AfterEachCall):
    """At close, leaves a link to /dev/zero among its files (a read of it never ends)."""

    def after(self, pdir: Path, op: str) -> None:
        link = pdir / "leader-epoch-checkpoint.zero"
        if op == "close" and not link.is_symlink():
            link.symlink_to("/dev/zero")


class MovesItsDirectoryOutside(_AfterEachCall):
    """At close, moves its partition directory out and leaves a link to it in its place:
    a damage step must not write through the link."""

    def after(self, pdir: Path, op: str) -> None:
        if op == "close" and not pdir.is_symlink():
            elsewhere = Path(tempfile.mkdtemp(prefix="klogspec-outside-dir-")) / pdir.name
            shutil.move(pdir, elsewhere)
            pdir.symlink_to(elsewhere, target_is_directory=True)
            self.moved_to = elsewhere


class ExitsTheProcess(ReferenceAdapter):
    """Raises SystemExit(0) on append: an in-process testee must not end the run."""

    def append(self, *args, **kwargs) -> dict:
        raise SystemExit(0)


class Interrupts(ReferenceAdapter):
    """Raises KeyboardInterrupt on append."""

    def append(self, *args, **kwargs) -> dict:
        raise KeyboardInterrupt


class CrashesAtOpen(ReferenceAdapter):
    """Fails inside every open: each scenario stops at step 0, judging none of its later
    steps (a refused open does not stop it: the later steps are judged, and fail)."""

    def open(self, *args, **kwargs) -> dict:
        raise RuntimeError("a bug inside the testee's open")


class OffsetOfMaxTimestampOffByOne(ReferenceAdapter):
    """Answers an append's offset_of_max_timestamp one too high (APPEND-28)."""

    def append(self, *args, **kwargs) -> dict:
        result = super().append(*args, **kwargs)
        if result.get("offset_of_max_timestamp", -1) >= 0:
            result["offset_of_max_timestamp"] += 1
        return result


class CleansWithNoProgress(ReferenceAdapter):
    """Answers a dedupe buffer too small for one key as Kafka 4.1+ does (COMPACT-30, a MAY):
    a pass that makes no progress, ``end_offset`` the first dirty offset plus ``skew``."""

    skew = 0

    def clean(self, *args, now_ms: int, **kwargs) -> dict:
        try:
            return super().clean(*args, now_ms=now_ms, **kwargs)
        except OperationError as exc:
            if exc.code != "INVALID_ARGUMENT":
                raise
        counters = ("messages_read", "messages_written", "map_messages_read")
        return {"cleaned": True, "end_offset": self.skew, **dict.fromkeys(counters, 0)}


class CleansWithNoProgressKafkaExact(CleansWithNoProgress):
    """The same, claiming ``kafka_exact``: held to COMPACT-9's refusal, as a SHOULD."""

    def hello(self, *, now_ms: int, **_: object) -> dict:
        hello = super().hello(now_ms=now_ms)
        return {**hello, "features": [*hello["features"], "kafka_exact"]}


class CleansPastTheDirtyOffset(CleansWithNoProgress):
    """Neither answer: a pass that claims progress it did not make."""

    skew = 1


class NoOffsetOfMaxTimestamp(ReferenceAdapter):
    """Leaves the optional offset_of_max_timestamp out, as Kafka's releases could (APPEND-28)."""

    def append(self, *args, **kwargs) -> dict:
        result = super().append(*args, **kwargs)
        del result["offset_of_max_timestamp"]
        return result


class GzipOnly(ReferenceAdapter):
    """Claims one codec of the four."""

    def hello(self, *, now_ms: int, **_: object) -> dict:
        hello = super().hello(now_ms=now_ms)
        features = [f for f in hello["features"] if not f.startswith("compression")]
        return {**hello, "features": [*features, "compression.gzip"]}


class Raises(ReferenceAdapter):
    """Fails inside on every append with an exception that is not a refusal."""

    def append(self, *args, **kwargs) -> dict:
        raise RuntimeError("a bug inside the testee")


FACTORIES = {
    "no_snapshots": NoSnapshots,
    "renames_segments": RenamesSegments,
    "writes_nothing": WritesNothing,
    "segment_as_directory": SegmentAsDirectory,
    "removes_its_directory": RemovesItsDirectory,
    "double_spaced_epochs": DoubleSpacedEpochs,
    "offset_of_max_timestamp_off_by_one": OffsetOfMaxTimestampOffByOne,
    "no_offset_of_max_timestamp": NoOffsetOfMaxTimestamp,
    "gzip_only": GzipOnly,
    "cleans_with_no_progress": CleansWithNoProgress,
    "cleans_with_no_progress_kafka_exact": CleansWithNoProgressKafkaExact,
    "cleans_past_the_dirty_offset": CleansPastTheDirtyOffset,
    "raises": Raises,
    "links_outside": LinksOutside,
    "fifo_for_log": FifoForLog,
    "links_to_dev_zero": LinksToDevZero,
    "moves_its_directory_outside": MovesItsDirectoryOutside,
    "exits_the_process": ExitsTheProcess,
    "interrupts": Interrupts,
    "crashes_at_open": CrashesAtOpen,
}


def factory_that_fails():
    raise RuntimeError("no log today")


def __getattr__(name: str):
    """``harness_testees:<name>``: the factory of each testee above."""
    if name in FACTORIES:
        return FACTORIES[name]
    raise AttributeError(name)
