"""A testee without the optional feature ``leader_epoch_checkpoint``, for the harness's own
tests: the reference with its leader epoch cache kept in memory only. It never creates or
writes ``leader-epoch-checkpoint`` (so a reopened log starts with an empty cache) and claims
every other feature of the reference.

``factory`` is the in-process factory (``no_epoch_testee:factory`` with this directory on
the path).
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from conformance.reference import FEATURES, ReferenceAdapter
from reference_impl.log.leader_epoch import LeaderEpochFileCache

NO_EPOCH_FEATURES = [f for f in FEATURES if f != "leader_epoch_checkpoint"]


def _in_memory_cache(self: LeaderEpochFileCache, checkpoint: str | Path) -> None:
    self.checkpoint = Path(checkpoint)
    self._epochs = []


class NoEpochFileAdapter:
    def __init__(self) -> None:
        self._inner = ReferenceAdapter()

    def hello(self, *, now_ms: int, **_: object) -> dict:
        return {**self._inner.hello(now_ms=now_ms), "features": list(NO_EPOCH_FEATURES)}

    def __getattr__(self, name: str):
        method = getattr(self._inner, name)

        def call(*args, **kwargs):
            with (
                mock.patch.object(LeaderEpochFileCache, "__init__", _in_memory_cache),
                mock.patch.object(LeaderEpochFileCache, "_write", lambda self: None),
            ):
                return method(*args, **kwargs)

        return call


def factory() -> NoEpochFileAdapter:
    return NoEpochFileAdapter()
