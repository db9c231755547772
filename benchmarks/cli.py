"""``benchmarks/run``: measure every figure, print one line each, write the JSON results."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import traceback
from pathlib import Path

from . import (
    bench_append,
    bench_conformance,
    bench_decode,
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
    bench_verify, bench_decode, bench_append, bench_recover, bench_conformance, bench_memory,
    bench_scan,
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
        profile=args.profile,
    )  # fmt: skip
    entries = [entry for module in MODULES for entry in module.figures(ctx)]
    if args.only:
        entries = [(names, thunk) for names, thunk in entries
                   if any(name.startswith(prefix) for name in names for prefix in args.only)]  # fmt: skip
    if args.list:
        print("\n".join(name for names, _ in entries for name in names))
        return 0
    flush_print(describe(ctx))
    figures: list[Figure] = []
    try:
        for names, thunk in entries:
            for figure in _measure(names, thunk):
                figures.append(figure.judge())
                flush_print(figure.line())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_results(figures, run_info(ctx), args.out)
    counts = {
        status: sum(f.status == status for f in figures)
        for status in ("PASS", "MISS", "INFO", "SKIP", "ERROR")
    }
    flush_print(
        ", ".join(f"{n} {status}" for status, n in counts.items() if n) + f"; JSON in {args.out}"
    )
    return 1 if counts["ERROR"] else 0


def _measure(names: list[str], thunk) -> list[Figure]:
    """A figure group's figures, or ERROR figures naming the exception when it raises."""
    try:
        result = thunk()
    except Exception as exc:  # one broken benchmark must not hide the others
        traceback.print_exc(file=sys.stderr)
        return [Figure(name, name, "", None, "", None, "", None, status="ERROR",
                       note=f"{type(exc).__name__}: {exc}"[:300]) for name in names]  # fmt: skip
    return result if isinstance(result, list) else [result]
