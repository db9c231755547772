"""``python -m conformance.mutants NAME``: serve the reference with one mutant's bug over
the JSON-lines protocol (the subprocess form of a mutant)."""

import sys

from ..reference import ReferenceAdapter
from ..testee import serve
from . import mutants

if len(sys.argv) != 2 or sys.argv[1] not in mutants():
    sys.exit(f"usage: python -m conformance.mutants NAME (one of {', '.join(sorted(mutants()))})")
with mutants()[sys.argv[1]].applied():
    serve(ReferenceAdapter())
