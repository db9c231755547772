"""The compiled kernels, chosen at import (issue 14; benchmarks/README.md).

The readable modules are the reference: each hot loop there has a compiled twin in
``_kernels.pyx`` (Cython), which a readable module installs beside its own function
with a few lines at its end, when ``kernels`` is not None. A kernel handles the common,
well-formed case; on anything else it hands the bytes back to the readable function, so
every error comes from the readable code. tests/test_speedups.py holds the two together.

This package is only the extension and this switch, below every layer of the log (it
imports nothing of ours). The glue that drives a kernel lives, private, beside the code
it speeds up: ``records/default_record.py`` (the record decoder), ``log/_compiled_recovery.py``
(LogSegment.recover's walk), ``log/_compiled_append.py`` (a client's common append),
``klogspec/verify/_compiled_walk.py`` (verify's walk), ``pipeline/_columnar.py`` (the
reader's record columns) and ``pipeline/_compiled_walk.py`` (the reader's walk of a range).

``kernels`` is None, and every module keeps its readable code, when:

* ``KLOGSPEC_PURE_PYTHON`` is set to anything but ``0`` or the empty string (the CI runs
  the suite this way too);
* the extension was not built (no C compiler at install time): one warning then.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

PURE_PYTHON_VARIABLE = "KLOGSPEC_PURE_PYTHON"


def _load():
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return None, f"{PURE_PYTHON_VARIABLE} is set"
    try:
        from . import _kernels
    except ImportError as exc:
        # Python's own message for a module that is not there blames a circular import
        if importlib.util.find_spec(f"{__name__}._kernels") is None:
            why = "the compiled kernels are not built (no C compiler or Cython at install time)"
        else:
            why = f"the compiled kernels are built but do not load ({exc})"
        warnings.warn(
            f"klogspec: {why}; running on the pure-Python path, which is correct but slower. "
            "Install a C compiler and the Python headers, then reinstall "
            "(pip install -e .), or set KLOGSPEC_PURE_PYTHON=1 to silence this.",
            RuntimeWarning,
            stacklevel=2,
        )
        return None, why
    return _kernels, ""


kernels, why_pure = _load()
"""The ``_kernels`` extension module, or None (pure Python; ``why_pure`` says why)."""


def path() -> str:
    """``compiled`` or ``pure``: which path this process runs (benchmarks print it)."""
    return "pure" if kernels is None else "compiled"
