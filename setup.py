"""Build the optional compiled kernels (reference_impl/_speedups, issue 14).

Everything else is in pyproject.toml. The kernels are Cython (a build requirement there),
compiled by the C compiler found at install time. They are optional: without a compiler
(or without Cython, under ``--no-build-isolation``) the build goes on without them and
the package runs on its readable pure-Python path, with one warning at run time
(reference_impl/_speedups/__init__.py).
"""

from setuptools import Extension, setup

KERNELS = Extension(
    "reference_impl._speedups._kernels",
    ["reference_impl/_speedups/_kernels.pyx"],
    extra_compile_args=["-O2"],
    optional=True,  # a failed compile is a warning, not a failed install
)


def extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("klogspec: Cython is not installed; building without the compiled kernels")
        return []
    extensions = cythonize(
        [KERNELS], language_level=3, quiet=True,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )  # fmt: skip
    for extension in extensions:
        extension.optional = True  # cythonize's copies do not keep it
    return extensions


setup(ext_modules=extensions())
