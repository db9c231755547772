"""Deliberately wrong implementations: the suite's own power, measured.

Each mutant is the reference with one realistic bug (catalog.py): a patch of
``reference_impl`` applied only while the mutant runs. The same mutant runs through
both transports:

* in process: ``conformance.mutants:<name>`` (dashes as underscores) is a factory whose
  adapter applies the patch around each call, so the harness and the reference in the
  same process never see it;
* as a subprocess: ``python -m conformance.mutants <name>`` applies the patch to its
  whole process and serves the JSON-lines protocol.

A mutant is *killed* when the suite fails at least one of its scenarios with every one
of its expected requirement IDs among the failed ones (tests/conformance).
"""

from __future__ import annotations

from .mutant import Mutant, MutantAdapter


def mutants() -> dict[str, Mutant]:
    from .catalog import CATALOG

    return {m.name: m for m in CATALOG}


def __getattr__(attr: str):
    """``conformance.mutants:<name>``: the in-process factory of a mutant."""
    for mutant in mutants().values():
        if mutant.attr == attr:
            return lambda: MutantAdapter(mutant)
    raise AttributeError(attr)
