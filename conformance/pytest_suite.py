"""The conformance suite as pytest tests (plugin.py parametrizes them):

pytest -p conformance.plugin --pyargs conformance.pytest_suite --klogspec-impl reference
"""


def test_conformance(klogspec_case):
    """One scenario of conformance/scenarios on the implementation under test."""
    klogspec_case.check()
