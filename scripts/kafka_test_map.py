"""Each Kafka test of the catalogue and the tests of ours that restate it.

Usage: python scripts/kafka_test_map.py [--check]

The catalogue (spec/behaviour/kafka-tests.md) lists Kafka's tests with the requirements
they pin. Our tests are named after Kafka's (``testSizeBasedLogRoll`` ->
``test_size_based_log_roll``, optionally with a suffix) in the file that mirrors Kafka's
test class, or name the Kafka tests they restate in their docstring (``{Sync,Async}``
alternatives allowed); this module finds them, so the map cannot drift from the code.
The site's hook (docs/hooks/klogspec_site.py) adds them to the catalogue's tables as a
column, so the catalogue is the one page of Kafka's tests. The script prints the map;
``--check`` exits 1 when an applicable Kafka test has no restatement.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CATALOGUE = REPO / "spec" / "behaviour" / "kafka-tests.md"

# Kafka's test class (the catalogue's abbreviation) -> where our restatements live.
TEST_FILES = {
    "LST": ["tests/log/test_log_segment.py"],
    "OIT": ["tests/log/test_offset_index.py"],
    "TIT": ["tests/log/test_time_index.py"],
    "XIT": ["tests/log/test_transaction_index.py"],
    "LSsT": ["tests/log/test_log_segments.py"],
    "ULT": ["tests/log/test_unified_log_*.py"],
    "LLocT": ["tests/log/test_local_log.py"],
    "LLT": ["tests/recovery/*.py", "tests/log/*.py"],
    "FRT": ["tests/log/test_file_records.py"],
    "FLIST": ["tests/log/test_file_records.py", "tests/test_records_unit.py"],
    "DLST": ["tests/test_dump.py"],
    "LogCleanerTest": ["tests/recovery/*.py", "tests/log/test_log_cleaner.py"],
    "LogCleanerManagerTest": ["tests/log/test_log_cleaner.py"],
    "LogManagerTest": ["tests/recovery/*.py", "tests/log/*.py"],
    "PSMT": ["tests/log/test_producer_state.py", "tests/test_producer_snapshot_format.py"],
}
EVERYWHERE = ["tests/**/test_*.py"]  # where to look when the class's own files have no match
ROW = re.compile(r"^\| (?P<num>[^|]*)\| (?P<tests>[^|]*)\| (?P<reqs>[^|]*)\| (?P<note>[^|]*)\|$")
KAFKA_NAME = re.compile(r"`(\w+)`")
CLASS = re.compile(r"\b(" + "|".join(sorted(TEST_FILES, key=len, reverse=True)) + r")\b")
CITED = re.compile(r"\b(test[A-Z]\w*(?:\{[\w,]*\}\w*)*|[a-z]\w*Test\b)")


def snake(name: str) -> str:
    """testSizeBasedLogRoll -> test_size_based_log_roll; randomLookupTest -> test_random_lookup."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
    words = words.removesuffix("_test")
    return words if words.startswith("test_") else f"test_{words}"


def expand(cited: str) -> list[str]:
    """testDeleteSegmentFiles{Sync,Async} -> both names."""
    brace = re.search(r"\{([^}]*)\}", cited)
    if not brace:
        return [cited]
    head, tail = cited[: brace.start()], cited[brace.end() :]
    return [name for alt in brace[1].split(",") for name in expand(head + alt + tail)]


def our_tests(patterns: list[str]) -> dict[str, tuple[str, set[str]]]:
    """test function -> (its file, the Kafka test names its docstring cites)."""
    return _our_tests(tuple(patterns))


@functools.cache
def _our_tests(patterns: tuple[str, ...]) -> dict[str, tuple[str, set[str]]]:
    found: dict[str, tuple[str, set[str]]] = {}
    for pattern in patterns:
        for path in sorted(REPO.glob(pattern)):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                    doc = ast.get_docstring(node) or ""
                    cited = {n for c in CITED.findall(doc) for n in expand(c)}
                    found.setdefault(node.name, (str(path.relative_to(REPO)), cited))
    return found


def match(kafka_name: str, candidates: dict[str, tuple[str, set[str]]]) -> list[str]:
    wanted = snake(kafka_name)
    return [
        f"`{file}::{name}`"
        for name, (file, cited) in candidates.items()
        if name == wanted or name.startswith(wanted + "_") or kafka_name in cited
    ]


def row_tests(tests: str, reqs: str, note: str) -> list[tuple[str, list[str], str]]:
    """For one catalogue row (its Kafka tests, requirements and note cells): each Kafka test
    named in it, ``(class and name, our tests as "file::function", why none)``."""
    out = []
    kafka_class = None
    for part in re.split(r";\s*", tests):
        kafka_class = (CLASS.search(part) or [None, kafka_class])[1]
        for kafka_name in KAFKA_NAME.findall(part):
            if not kafka_name[0].islower():
                continue  # "`testX1` to `Phase5`": the range's end is no test name
            ours = match(kafka_name, our_tests(TEST_FILES.get(kafka_class, [])))
            ours = ours or match(kafka_name, our_tests(EVERYWHERE))
            why = "" if ours else _why_not(reqs, note)
            out.append((f"{kafka_class} `{kafka_name}`", [o.strip("`") for o in ours], why))
    return out


def rows() -> list[tuple[str, str, str, str]]:
    """(section heading or '', kafka test, our tests, requirements) in catalogue order."""
    out = []
    for line in CATALOGUE.read_text().splitlines():
        if line.startswith("## "):
            out.append((line[3:], "", "", ""))
            continue
        row = ROW.match(line)
        if not row or not KAFKA_NAME.search(row["tests"]):
            continue
        for kafka, ours, why in row_tests(row["tests"], row["reqs"], row["note"]):
            status = "; ".join(f"`{o}`" for o in ours) if ours else why
            out.append(("", kafka, status, row["reqs"].strip()))
    return out


def _why_not(reqs: str, note: str) -> str:
    note = note.strip()
    if "not applicable" in note or "later" in note or reqs.strip() == "none":
        return f"none: {note or 'not applicable'}"
    return "**missing**"


def missing() -> list[str]:
    """Applicable Kafka tests of the catalogue that no test of ours restates."""
    return [f"{kafka} ({reqs})" for _, kafka, ours, reqs in rows() if ours == "**missing**"]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        gaps = missing()
        for gap in gaps:
            print(f"no test restates {gap}")
        return 1 if gaps else 0
    for heading, kafka, ours, reqs in rows():
        print(f"\n{heading}" if heading else f"{kafka}: {ours} [{reqs}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
