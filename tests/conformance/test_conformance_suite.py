"""The whole conformance suite against the reference, through both transports (the
conformance plugin parametrizes ``test_conformance``: one test per scenario and
transport, IDs like ``inproc:roll.size.one-before.at``)."""

from conformance.pytest_suite import test_conformance  # noqa: F401
