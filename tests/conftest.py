"""Shared pytest fixtures: where the real-broker corpus lives, and the slow-test switch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def corpus_root() -> Path | None:
    """The real-broker corpus: $KLOGSPEC_CORPUS, else ../shared/kafka-corpus beside the repo."""
    configured = os.environ.get("KLOGSPEC_CORPUS")
    candidate = Path(configured) if configured else REPO_ROOT.parent / "shared" / "kafka-corpus"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def corpus() -> Path:
    root = corpus_root()
    if root is None:
        pytest.skip(
            "real-broker corpus not found: set KLOGSPEC_CORPUS or place it at ../shared/kafka-corpus"
        )
    return root


@pytest.fixture
def kafka_or_skip():
    """``kafka_or_skip(what, make, *args)``: ``make(*args)``, Kafka's side of a differential
    or a broker run; without Java, Maven or the release jars (KafkaJarsError), a skip that
    names ``what`` and the reason."""
    from conformance.kafka_jars import KafkaJarsError

    def call(what: str, make, *args):
        try:
            return make(*args)
        except KafkaJarsError as exc:
            pytest.skip(f"no Kafka {what}: {exc}")

    return call


def pytest_configure(config: pytest.Config) -> None:
    """Without the compiled kernels (no C compiler at install) this process has warned once;
    the commands the tests start then take the pure path by choice, so that their stderr, which
    tests read, holds no repeat of that warning."""
    from reference_impl import kernels

    if not kernels.compiled:
        os.environ.setdefault(kernels.PURE_PYTHON_VARIABLE, "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runslow", action="store_true", help="run long fuzzing and big-data tests too"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow test: pass --runslow to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
