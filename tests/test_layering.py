"""The layering of the project's packages, checked over the import graph (DESIGN.md §6).

Every import statement is an edge: at module level, under ``if TYPE_CHECKING:`` and inside
functions alike, since a reader has to follow each of them. The rules:

* ``reference_impl`` is the log and nothing else: it imports no other first-party package
  (not the tools, the suite, the pipeline or the Kaitai parsers, which are an independent
  reading of the formats) and nothing that prints or parses a command line;
* ``klogspec``, the tools, is built on ``reference_impl`` and imports nothing else of ours
  (``conformance`` and ``pipeline`` add their commands through entry points, not imports);
* ``conformance`` and ``pipeline`` import the log or the tools, never each other;
* inside ``reference_impl``, layers from the bottom: ``errors``, ``constants`` and
  ``kernels`` (the compiled kernels and their switch; the glue that drives a kernel lives
  beside the code it speeds up); then ``records/`` (bytes of batches); then ``formats/``
  (the other files, as codecs) and, beside it, ``messages/`` (the meaning of internal topics'
  records, which the log never reads); then ``log/`` (the log, on files); a module imports only
  its own layer and those below, and only the package root, which re-exports the public
  API, may import everything;
* inside ``conformance``, the harness, layers from the bottom: what every part reads (the
  protocol, the scenario's batches, the harness's own file access and words); the testee's
  files read with the reference decoders (``disk``, the ``files`` checks, the invariants,
  damage); the testees and how to reach them (the drivers, the reference behind the
  contract, the Kafka testees); the scenarios; one scenario's run (steps, responses, the
  golden comparison, the epilogue, the verdict); the suite (goldens, expected failures,
  reports, mutants); the commands. As in ``reference_impl``, a module imports only its own
  layer and those below, and every module of the harness has a layer;
* no import cycle anywhere among them;
* the kernels' consumers are known (``KERNEL_CONSUMERS``): only they import
  ``reference_impl.kernels``, only through its public API (never an extension module
  ``kernels._*``), and no module imports another module's private name.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("reference_impl", "klogspec", "conformance", "pipeline")

# package -> the first-party packages it may import (itself always)
ALLOWED = {
    "reference_impl": set(),
    "klogspec": {"reference_impl"},
    "conformance": {"reference_impl", "klogspec"},
    "pipeline": {"reference_impl", "klogspec"},
}
FIRST_PARTY = {*PACKAGES, "kaitai", "tests", "benchmarks"}
# reference_impl's layers, bottom up (longest prefix wins)
LAYERS = {
    "reference_impl.errors": 0,
    "reference_impl.constants": 0,
    "reference_impl.kernels": 0,  # the compiled kernels and their switch: import nothing of ours
    "reference_impl.records": 1,
    "reference_impl.formats": 2,
    "reference_impl.messages": 2,  # what internal topics' records mean: beside formats, off the log's path
    "reference_impl.log": 3,
    "reference_impl": 4,
}
# the harness's layers, bottom up (longest prefix wins; every module of conformance has one)
CONFORMANCE_LAYERS = {
    **dict.fromkeys(("adapter", "protocol", "batches", "check_rules", "file_names", "scratch",
                     "diagnostics", "options", "same_records", "requirements"), 0),
    **dict.fromkeys(("disk", "file_checks", "index_invariants", "golden_files", "damage"), 1),
    **dict.fromkeys(("driver", "inproc_driver", "subprocess_driver", "transport", "reference",
                     "testee", "kafka_jars", "kafka_broker", "kafka_testee_cli", "kafka_dump",
                     "dump_differential", "decode_differential", "broker_recovery"), 2),
    **dict.fromkeys(("scenarios", "families", "traceability"), 3),
    **dict.fromkeys(("run_state", "steps", "responses", "file_comparison", "epilogue",
                     "crossload", "results", "runner"), 4),
    **dict.fromkeys(("suite", "goldens", "milestones", "expected", "report", "kafka_versions",
                     "mutants"), 5),
    **dict.fromkeys(("cli", "cli_golden", "cli_scenarios", "plugin", "pytest_suite",
                     "__main__"), 6),
}  # fmt: skip
LAYERS.update({f"conformance.{name}": layer for name, layer in CONFORMANCE_LAYERS.items()})
LAYERS["conformance"] = 7  # the package root
# the modules that import the kernels (reference_impl/kernels/__init__.py): each readable
# module that chooses its path at import, and the glue beside it that drives a kernel
KERNEL_CONSUMERS = {
    "reference_impl.records.default_record": "the record decoder (records)",
    "reference_impl.log.segment_recovery": "LogSegment.recover's walk (recovery)",
    "reference_impl.log._compiled_recovery": "its glue",
    "reference_impl.log.unified_log": "a client's common append (append)",
    "reference_impl.log._compiled_append": "its glue",
    "klogspec.verify.segment": "verify's walk (scan)",
    "klogspec.verify._compiled_walk": "its glue",
    "pipeline.reader": "the record level (columns)",
    "pipeline._columnar": "its glue: records into Arrow columns",
    "pipeline._compiled_walk": "its glue: a range's clean batches",
}
# third-party imports a package must not make: the log neither prints nor parses argv
FORBIDDEN_THIRD_PARTY = {"reference_impl": {"click", "rich"}}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def collect_modules(root: Path, packages) -> dict[str, Path]:
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            modules[module_name(path, root)] = path
    return modules


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _known_prefix(name: str, modules) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def compiled_modules(root: Path, packages) -> set[str]:
    """The compiled extensions' modules (a Cython ``.pyx`` each): nodes of the graph that
    import nothing of ours (tests/test_speedups.py checks what they call)."""
    return {module_name(p, root) for package in packages for p in (root / package).rglob("*.pyx")}


def import_graph(root: Path, packages) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(first-party edges, third-party top-level names) of every module, every import
    statement counted wherever it stands."""
    modules = collect_modules(root, packages)
    known_modules = set(modules) | compiled_modules(root, packages)
    edges: dict[str, set[str]] = defaultdict(set)
    external: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(node, module, is_package)
                names = [f"{target}.{alias.name}" for alias in node.names]
                # ``from package import name``: the submodule if there is one, else the package
                names = [n if n in known_modules else target for n in names]
            else:
                continue
            for name in names:
                known = _known_prefix(name, known_modules)
                if known is not None:
                    edges[module].add(known)
                elif name.split(".")[0] in FIRST_PARTY:
                    edges[module].add(name)  # a first-party package outside ``packages``
                elif name:
                    external[module].add(name.split(".")[0])
    return edges, external


def wrong_way(edges, allowed) -> list[str]:
    """Imports from one package into another it may not import."""
    found = []
    for module, targets in sorted(edges.items()):
        package = module.split(".")[0]
        for target in sorted(targets):
            other = target.split(".")[0]
            if other != package and other not in allowed.get(package, set()):
                found.append(f"{module} imports {target}")
    return found


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:end]))
        if layer is not None:
            return layer
    return None


def downward(edges) -> list[str]:
    """Imports inside reference_impl, or inside conformance, that reach up a layer."""
    found = []
    for module, targets in sorted(edges.items()):
        here = layer_of(module)
        if here is None:
            continue
        for target in sorted(targets):
            there = layer_of(target)
            same_package = target.split(".")[0] == module.split(".")[0]
            if same_package and there is not None and there > here:
                found.append(f"{module} (layer {here}) imports {target} (layer {there})")
    return found


def cycles(edges) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing
    itself), each sorted: Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph(ROOT, PACKAGES)


def test_imports_point_one_way(graph):
    """reference_impl <- klogspec <- conformance, pipeline; never the reverse, nor sideways."""
    edges, _ = graph
    assert wrong_way(edges, ALLOWED) == []


def test_the_log_is_built_bottom_up(graph):
    """errors, constants <- records <- formats <- log <- the package root; and the harness
    from its files and testees up to its commands (CONFORMANCE_LAYERS)."""
    edges, _ = graph
    assert downward(edges) == []


def test_every_module_of_the_harness_has_a_layer():
    modules = collect_modules(ROOT, ("conformance",))
    assert sorted(m for m in modules if m != "conformance" and layer_of(m) in (None, 7)) == []


def test_no_import_cycle(graph):
    """No cycle among the modules of the project, TYPE_CHECKING and function imports included."""
    edges, _ = graph
    assert cycles(edges) == []


def test_the_log_does_not_print_or_parse_argv(graph):
    _, external = graph
    found = [
        f"{module} imports {name}"
        for module, names in sorted(external.items())
        for name in sorted(names & FORBIDDEN_THIRD_PARTY.get(module.split(".")[0], set()))
    ]
    assert found == []


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_checks_find_cycles_and_wrong_way_imports(tmp_path):
    """The checker itself: a cycle hidden behind TYPE_CHECKING, a function-level import of the
    tools from the log, and a relative import resolved to its module."""
    _write(
        tmp_path,
        {
            "reference_impl/__init__.py": "",
            "reference_impl/a.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from .b import B\n",
            "reference_impl/b.py": "from . import a\n",
            "reference_impl/c.py": "def f():\n    from conformance import x\n",
            "conformance/__init__.py": "",
            "conformance/x.py": "from reference_impl import a\n",
        },
    )
    edges, _ = import_graph(tmp_path, ("reference_impl", "conformance"))
    assert edges["reference_impl.b"] == {"reference_impl.a"}
    assert cycles(edges) == [["reference_impl.a", "reference_impl.b"]]
    assert wrong_way(edges, ALLOWED) == ["reference_impl.c imports conformance.x"]


def test_the_layer_check_finds_an_upward_import(tmp_path):
    _write(
        tmp_path,
        {
            "reference_impl/__init__.py": "",
            "reference_impl/records/__init__.py": "",
            "reference_impl/records/batch.py": "from ..log.segment import LogSegment\n",
            "reference_impl/log/__init__.py": "",
            "reference_impl/log/segment.py": "from ..records.batch import X\n",
        },
    )
    edges, _ = import_graph(tmp_path, ("reference_impl",))
    assert downward(edges) == [
        "reference_impl.records.batch (layer 1) imports reference_impl.log.segment (layer 3)"
    ]


def test_the_layer_check_finds_an_upward_import_in_the_harness(tmp_path):
    """A file check (layer 1) that reaches for the runner (layer 4); the harness's imports of
    the log are not compared with the log's layers."""
    _write(
        tmp_path,
        {
            "conformance/__init__.py": "",
            "conformance/disk.py": "from reference_impl.log import segment\n",
            "conformance/file_checks.py": "from .runner import Runner\n",
            "conformance/runner.py": "from . import disk\n",
        },
    )
    edges, _ = import_graph(tmp_path, ("conformance",))
    assert downward(edges) == [
        "conformance.file_checks (layer 1) imports conformance.runner (layer 4)"
    ]


def test_the_log_never_reads_what_records_mean(graph):
    """``messages/`` decodes internal topics' records for the tools; nothing else of the
    reference imports it, so the log reads and recovers the same bytes with or without it."""
    edges, _ = graph
    users = sorted(
        module
        for module, targets in edges.items()
        if module.startswith("reference_impl")
        and not module.startswith("reference_impl.messages")
        and any(t.startswith("reference_impl.messages") for t in targets)
    )
    assert users == []


def _private_imports(root: Path, packages) -> list[str]:
    """``from module import _name`` of another module's private name (a name of the package
    itself, ``from . import _module``, is a submodule: allowed)."""
    modules = collect_modules(root, packages)
    found = []
    for module, path in sorted(modules.items()):
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _resolve(node, module, is_package)
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and f"{target}.{alias.name}" not in modules:
                    found.append(f"{module} imports {target}.{alias.name}")
    return found


def _private_attributes(root: Path, modules) -> list[str]:
    """``thing._member`` where ``thing`` is not ``self``, ``cls`` or ``super()``: a reach
    into another object's private state (a member the module itself defines, such as a
    classmethod's ``log._write_checkpoints()`` on the instance it built, is its own)."""
    found = []
    for module in sorted(modules):
        path = root / (module.replace(".", "/") + ".py")
        if not path.exists():  # a package: its __init__.py
            path = path.with_suffix("") / "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _members_defined(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            owner = ast.unparse(node.value)
            if node.attr.startswith("__") or node.attr in own:
                continue
            if owner not in ("self", "cls", "super()"):
                found.append(f"{module}:{node.lineno} {owner}.{node.attr}")
    return found


def _members_defined(tree: ast.Module) -> set[str]:
    """The methods a module's classes define and the attributes they assign on ``self``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.update([node.attr] if ast.unparse(node.value) == "self" else [])
    return names


def test_only_the_known_consumers_import_the_kernels(graph):
    """Who may import the kernels, and only the package's public API: the extension
    modules (``kernels._records``, ...) are the package's own."""
    edges, _ = graph
    users = {
        module: sorted(t for t in targets if t.startswith("reference_impl.kernels"))
        for module, targets in edges.items()
        if not module.startswith("reference_impl.kernels")
    }
    users = {module: targets for module, targets in users.items() if targets}
    assert sorted(users) == sorted(KERNEL_CONSUMERS)
    assert all(targets == ["reference_impl.kernels"] for targets in users.values()), users


def test_no_module_imports_a_private_name():
    """The fast paths use the log through public methods (``append_packed``,
    ``file_source``, ``recover_batch``), not its private members; so do the log, the tools,
    the harness and the pipeline throughout: a name another module imports is public."""
    assert _private_imports(ROOT, PACKAGES) == []


def test_kernel_consumers_reach_into_no_private_member():
    """No ``log._handle``, ``index._slots()`` or ``segment._recover_batch``: the kernels'
    consumers use what the log's classes make public."""
    assert _private_attributes(ROOT, KERNEL_CONSUMERS) == []


# where a reach into another object's private member is the point: a mutant patches the
# smallest seam of the log (conformance/mutants/originals.py names each); os._exit is the
# testee's crash (no flush, no atexit); a namedtuple's fields are ``_fields``
PRIVATE_REACH_ALLOWED = ("conformance.mutants.",)
PRIVATE_MEMBERS_ALLOWED = {"os._exit", "value._fields"}


def test_no_module_reaches_into_private_members():
    """Every module but the mutants uses other objects through their public members."""
    modules = [
        module
        for module in collect_modules(ROOT, PACKAGES)
        if not module.startswith(PRIVATE_REACH_ALLOWED)
    ]
    found = [
        line
        for line in _private_attributes(ROOT, modules)
        if line.split()[1] not in PRIVATE_MEMBERS_ALLOWED
    ]
    assert found == []


def test_the_consumer_checks_see_an_extension_module_and_a_private_import(tmp_path):
    """The checker itself: an import of an extension module and of a private name."""
    _write(
        tmp_path,
        {
            "reference_impl/__init__.py": "",
            "reference_impl/kernels/__init__.py": "",
            "reference_impl/kernels/_records.pyx": "",
            "reference_impl/records/__init__.py": "",
            "reference_impl/records/stream.py": "class _FileSource: ...\n",
            "reference_impl/records/batch.py": "from ..kernels import _records\n"
            "from .stream import _FileSource\n",
        },
    )
    edges, _ = import_graph(tmp_path, ("reference_impl",))
    assert edges["reference_impl.records.batch"] >= {"reference_impl.kernels._records"}
    assert _private_imports(tmp_path, ("reference_impl",)) == [
        "reference_impl.records.batch imports reference_impl.kernels._records",
        "reference_impl.records.batch imports reference_impl.records.stream._FileSource",
    ]


def test_the_reach_check_sees_a_private_member_and_spares_its_own(tmp_path):
    """The checker itself: ``log._begin()`` from outside is a reach, in a package's
    ``__init__.py`` too; a member the module defines (``self._x``, its own class's) is not."""
    _write(
        tmp_path,
        {
            "tools/__init__.py": "def run(log):\n    log._begin()\n",
            "tools/own.py": "class A:\n    def _m(self):\n        self._x = 1\n"
            "def f(a):\n    a._m()\n",
        },
    )
    assert _private_attributes(tmp_path, ["tools", "tools.own"]) == ["tools:2 log._begin"]
