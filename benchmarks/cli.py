"""``benchmarks/run``: measure every figure, print one line each, write the JSON results."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from reference_impl import kernels

from . import (
    bench_append,
    bench_cluster,
    bench_conformance,
    bench_corpus,
    bench_decode,
    bench_extract,
    bench_kafka,
    bench_kafka_jvm,
    bench_memory,
    bench_recover,
    bench_scan,
    bench_verify,
)
from .harness import (
    Context,
    Figure,
    describe,
    flush_print,
    make_tmp,
    markdown_table,
    run_info,
    write_results,
)
from .workload import RecordShape, parse_size

MODULES = [
    bench_verify, bench_corpus, bench_decode, bench_extract, bench_append, bench_recover,
    bench_kafka, bench_kafka_jvm, bench_conformance, bench_memory, bench_scan, bench_cluster,
]  # fmt: skip
DEFAULT_SIZE = "512MiB"
DEFAULT_MEMORY_SIZE = "2GiB"
QUICK_SIZE = "4MiB"
QUICK_MEMORY_SIZE = "8MiB"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run",
        description="Run the performance benchmarks: each figure against a baseline measured "
        "in the same run. See benchmarks/README.md.",
    )
    parser.add_argument("--size", help=f"log size for the throughput figures (default {DEFAULT_SIZE}; "
                        "decode and append use an eighth of it)")  # fmt: skip
    parser.add_argument("--memory-size", help="segment size for the memory figures (default "
                        f"{DEFAULT_MEMORY_SIZE}; a segment holds at most 2^31-1 bytes)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help=f"a smoke run: {QUICK_SIZE} logs, "
                        f"{QUICK_MEMORY_SIZE} for memory, one repeat, no conformance suite")  # fmt: skip
    parser.add_argument("--repeats", type=int, help="best of this many runs (default 3, quick 1)")
    parser.add_argument("--value-bytes", type=int, default=RecordShape.value_bytes,
                        help="record value size (default %(default)s)")  # fmt: skip
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="only figures whose name starts with NAME (repeatable)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results",
                        help="where the JSON goes (default benchmarks/results)")  # fmt: skip
    parser.add_argument("--tmp", help="parent of the temp dir for generated data (default $TMPDIR)")
    parser.add_argument("--profile", action="store_true",
                        help="also profile our side of each figure with pyinstrument "
                        "(text in OUT/profiles/NAME.txt)")  # fmt: skip
    parser.add_argument("--path", choices=("both", "compiled", "pure"), default="both",
                        help="measure our side on the compiled kernels, the readable "
                        "pure-Python path (KLOGSPEC_PURE_PYTHON=1, in a child process) or both "
                        "(default; each figure twice, one line each)")  # fmt: skip
    parser.add_argument("--exact", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--list", action="store_true", help="list the figure names and exit")
    parser.add_argument("--markdown", action="store_true",
                        help="print OUT/latest.json as a Markdown table and exit")  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.markdown:
        print(markdown_table(json.loads((args.out / "latest.json").read_text())))
        return 0
    size = parse_size(args.size or (QUICK_SIZE if args.quick else DEFAULT_SIZE))
    memory_size = parse_size(
        args.memory_size or (QUICK_MEMORY_SIZE if args.quick else DEFAULT_MEMORY_SIZE)
    )
    tmp = make_tmp(args.tmp)
    ctx = Context(
        size=size, memory_size=memory_size, quick=args.quick,
        repeats=args.repeats or (1 if args.quick else 3),
        shape=RecordShape(value_bytes=args.value_bytes), tmp=tmp, out=args.out,
        profile=args.profile, only=tuple(args.only),
    )  # fmt: skip
    entries = [entry for module in MODULES for entry in module.figures(ctx)]
    report_order = [name for names, _ in entries for name in names]
    if args.exact:  # a child measuring the pure-Python path of given figures
        entries = [(names, thunk) for names, thunk in entries if set(names) & set(args.exact)]
    if args.only:
        entries = [(names, thunk) for names, thunk in entries
                   if any(name.startswith(prefix) for name in names for prefix in args.only)]  # fmt: skip
    if args.list:
        print("\n".join(name for names, _ in entries for name in names))
        return 0
    paths = _paths(args.path)
    if not args.exact:
        flush_print(f"{describe(ctx)}; paths: {', '.join(paths)}")
    figures: list[Figure] = []
    try:
        for names, thunk in entries:
            if kernels.path() in paths:
                for figure in _measure(names, thunk):
                    figures.append(figure.judge())
                    flush_print(figure.line())
            if "pure" in paths and kernels.path() != "pure":
                figures += _measure_pure(names, argv if argv is not None else sys.argv[1:], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_results(figures, run_info(ctx), args.out, report_order)
    counts = {
        status: sum(f.status == status for f in figures)
        for status in ("PASS", "MISS", "INFO", "SKIP", "ERROR")
    }
    if not args.exact:
        flush_print(
            ", ".join(f"{n} {status}" for status, n in counts.items() if n)
            + f"; JSON in {args.out}"
        )
    return 1 if counts["ERROR"] else 0


def _paths(choice: str) -> tuple[str, ...]:
    """The paths to measure: a compiled one only where the kernels are built."""
    wanted = ("compiled", "pure") if choice == "both" else (choice,)
    if kernels.path() == "pure":
        if "compiled" in wanted:
            flush_print(f"compiled path not measured: {kernels.why_pure}")
        return ("pure",)
    return wanted


def _measure_pure(names: list[str], argv: list[str], tmp: Path) -> list[Figure]:
    """The same figures on the readable path: this command again in a child process with
    KLOGSPEC_PURE_PYTHON=1 (the switch is made at import), its JSON read back."""
    out = Path(tempfile.mkdtemp(prefix="pure-", dir=tmp))
    options = _without_values(argv, ("--out", "--path", "--only", "--exact"))
    child = [sys.executable, str(Path(__file__).parent / "run"), *options, "--path", "pure",
             "--out", str(out), *(f"--exact={name}" for name in names)]  # fmt: skip
    env = {**os.environ, kernels.PURE_PYTHON_VARIABLE: "1"}
    subprocess.run(child, env=env, stdout=sys.stdout, stderr=sys.stderr, check=False)
    figures = []
    for name in names:
        path = out / f"{name}.pure.json"
        if not path.exists():
            figures.append(Figure(name, name, "", None, "", None, "", None, status="ERROR",
                                  note="the pure-Python child wrote no result", path="pure"))  # fmt: skip
            continue
        data = json.loads(path.read_text())
        figures.append(_figure_from_json(data))
    return figures


def _without_values(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """``argv`` less the given options and their values (``--opt v`` or ``--opt=v``)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in options:
            skip = True
            continue
        if arg.startswith(tuple(f"{o}=" for o in options)):
            continue
        kept.append(arg)
    return kept


def _figure_from_json(data: dict) -> Figure:
    from .harness import Target

    def target(raw):
        return None if raw is None else Target(raw["on"], raw["op"], raw["value"], raw["unit"])

    return Figure(
        name=data["name"], title=data["title"], unit=data["unit"], ours=data["ours"],
        ours_label=data["ours_label"], baseline=data["baseline"],
        baseline_label=data["baseline_label"], target=target(data["target"]),
        alternative=target(data.get("alternative")), higher_is_better=data["higher_is_better"],
        status=data["status"], note=data["note"], details=data["details"], path="pure",
    )  # fmt: skip


def _measure(names: list[str], thunk) -> list[Figure]:
    """A figure group's figures, or ERROR figures naming the exception when it raises."""
    try:
        result = thunk()
    except Exception as exc:  # one broken benchmark must not hide the others
        traceback.print_exc(file=sys.stderr)
        return [Figure(name, name, "", None, "", None, "", None, status="ERROR",
                       note=f"{type(exc).__name__}: {exc}"[:300]) for name in names]  # fmt: skip
    return result if isinstance(result, list) else [result]
