"""The compiled kernels: the public API of the fast paths, chosen at import (issues 14
and 24; benchmarks/README.md).

The readable modules are the reference, and run whenever the kernels are off. A kernel is
a compiled twin (Cython) of one hot loop there: it takes the common, well-formed case and
on anything else hands the bytes back to the readable function, so every error comes
from the readable code; tests/test_speedups.py holds the two together. The kernels are
split by what they serve, around one shared framing (``_framing.pxd``: byte order,
framing of a v2 entry, CRC-32C, varints, a record's fields), each module below None
when the kernels are off:

* ``records``: the record decoder (``records/default_record.py``'s ``records_of``);
* ``scan``: ``klogspec verify``'s and ``scan``'s walk (``klogspec/verify/_compiled_walk.py``);
* ``recovery``: ``LogSegment.recover``'s walk (``log/_compiled_recovery.py``);
* ``append``: a client's common append (``log/_compiled_append.py``);
* ``columns``: the pipeline's record level (``pipeline/_columnar.py``, ``pipeline/_compiled_walk.py``).

The glue that drives a kernel lives beside the code it speeds up, and only those modules
import this package (tests/test_layering.py); this package imports nothing of ours.

The kernels are off, and every module keeps its readable code, when:

* ``KLOGSPEC_PURE_PYTHON`` is set to anything but ``0`` or the empty string (the CI runs
  the suite this way too);
* the extensions were not built (no C compiler at install time): one warning then.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings

PURE_PYTHON_VARIABLE = "KLOGSPEC_PURE_PYTHON"
MODULES = ("records", "scan", "recovery", "append", "columns")  # setup.py builds each


def _load() -> tuple[dict, str]:
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return {}, f"{PURE_PYTHON_VARIABLE} is set"
    try:
        return {name: importlib.import_module(f"{__name__}._{name}") for name in MODULES}, ""
    except ImportError as exc:
        # Python's own message for a module that is not there blames a circular import
        if any(importlib.util.find_spec(f"{__name__}._{name}") is None for name in MODULES):
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
        return {}, why


_modules, why_pure = _load()
"""``why_pure``: why the kernels are off ("" when they are on)."""
compiled = bool(_modules)
records = _modules.get("records")
scan = _modules.get("scan")
recovery = _modules.get("recovery")
append = _modules.get("append")
columns = _modules.get("columns")


def path() -> str:
    """``compiled`` or ``pure``: which path this process runs (benchmarks print it)."""
    return "compiled" if compiled else "pure"


def crc_sources() -> dict[str, str]:
    """What each kernel module computes the CRC-32C with (tests check the C function)."""
    return {name: module.CRC_SOURCE for name, module in _modules.items()}
