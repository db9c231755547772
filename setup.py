"""Build the optional compiled kernels (reference_impl/kernels, issues 14 and 24).

Everything else is in pyproject.toml. The kernels are Cython (a build requirement there),
one extension per thing they serve (``KERNELS``), each cimporting the shared framing of
``_framing.pxd``; compiled by the C compiler found at install time. They are optional:
without a compiler (or without Cython, under ``--no-build-isolation``) the build goes on
without them and the package runs on its readable pure-Python path, with one warning at
run time (reference_impl/kernels/__init__.py).
"""

from setuptools import Extension, setup

# the extension modules of reference_impl/kernels, by what they serve (its __init__.py)
KERNELS = ("_records", "_scan", "_recovery", "_append", "_columns")


def extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("klogspec: Cython is not installed; building without the compiled kernels")
        return []
    modules = [
        Extension(
            f"reference_impl.kernels.{name}",
            [f"reference_impl/kernels/{name}.pyx"],
            extra_compile_args=["-O2"],
        )
        for name in KERNELS
    ]
    extensions = cythonize(
        modules, language_level=3, quiet=True,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )  # fmt: skip
    for extension in extensions:
        extension.optional = True  # a failed compile is a warning, not a failed install
    return extensions


setup(ext_modules=extensions())
