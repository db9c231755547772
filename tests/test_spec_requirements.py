"""spec/requirements.yaml and the spec pages must agree on every requirement ID and level."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SPEC = REPO_ROOT / "spec"
REQUIREMENTS = SPEC / "requirements.yaml"

ID_PATTERN = re.compile(r"^[A-Z]+(-[A-Z]+)?-\d+$")
LEVELS = {"MUST", "SHOULD", "MAY"}
FIELDS = ("id", "level", "page", "rule", "source")
# How a page defines a requirement: "**BATCH-3** MUST:" (README §1.4).
DEFINITION = re.compile(r"\*\*([A-Z]+(?:-[A-Z]+)?-\d+)\*\* (MUST|SHOULD|MAY):")
# The whole definition line: the page's sentence is the rule's one source (issue 28, 6).
DEFINITION_LINE = re.compile(r"^- \*\*([A-Z]+(?:-[A-Z]+)?-\d+)\*\* (?:MUST|SHOULD|MAY): (.+)$")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def load_requirements() -> list[dict]:
    data = yaml.safe_load(REQUIREMENTS.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and isinstance(data.get("requirements"), list), (
        "requirements.yaml must be a mapping with a 'requirements' list"
    )
    return data["requirements"]


def page_definitions() -> dict[str, list[tuple[str, str]]]:
    """(id, level) of every requirement defined on each spec page, keyed by page path."""
    return {
        path.relative_to(SPEC).as_posix(): DEFINITION.findall(path.read_text(encoding="utf-8"))
        for path in sorted(SPEC.rglob("*.md"))
    }


def test_every_entry_has_the_required_fields():
    for entry in load_requirements():
        assert isinstance(entry, dict), entry
        missing = [f for f in FIELDS if not isinstance(entry.get(f), str) or not entry[f].strip()]
        assert not missing, f"{entry.get('id')}: missing or empty {missing}"


def test_ids_are_well_formed_and_unique():
    ids = [entry["id"] for entry in load_requirements()]
    malformed = [i for i in ids if not ID_PATTERN.match(i)]
    assert not malformed, f"malformed IDs: {malformed}"
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"duplicate IDs: {duplicates}"


def test_levels_are_must_should_or_may():
    bad = [(e["id"], e["level"]) for e in load_requirements() if e["level"] not in LEVELS]
    assert not bad, f"bad levels: {bad}"


def test_pages_exist():
    missing = [
        (e["id"], e["page"]) for e in load_requirements() if not (SPEC / e["page"]).is_file()
    ]
    assert not missing, f"pages not found under spec/: {missing}"


def test_ids_are_numbered_from_one_without_gaps():
    numbers: dict[str, list[int]] = defaultdict(list)
    for entry in load_requirements():
        prefix, _, number = entry["id"].rpartition("-")
        numbers[prefix].append(int(number))
    gaps = {p: sorted(n) for p, n in numbers.items() if sorted(n) != list(range(1, len(n) + 1))}
    assert not gaps, f"prefixes not numbered 1..n: {gaps}"


def test_each_prefix_lives_on_one_page():
    pages: dict[str, set[str]] = defaultdict(set)
    for entry in load_requirements():
        pages[entry["id"].rpartition("-")[0]].add(entry["page"])
    spread = {p: sorted(s) for p, s in pages.items() if len(s) > 1}
    assert not spread, f"prefixes on several pages: {spread}"


def test_every_yaml_id_is_defined_on_its_page_with_the_same_level():
    defined = page_definitions()
    problems = []
    for entry in load_requirements():
        levels = [lvl for rid, lvl in defined.get(entry["page"], []) if rid == entry["id"]]
        if not levels:
            problems.append(f"{entry['id']}: no '**{entry['id']}** LEVEL:' on {entry['page']}")
        elif levels != [entry["level"]]:
            problems.append(
                f"{entry['id']}: yaml says {entry['level']}, {entry['page']} says {levels}"
            )
    assert not problems, "\n".join(problems)


def test_every_page_definition_is_in_the_yaml():
    known = {entry["id"]: entry["page"] for entry in load_requirements()}
    problems = []
    for page, definitions in page_definitions().items():
        for rid, _level in definitions:
            if rid not in known:
                problems.append(f"{page}: {rid} is not in requirements.yaml")
            elif known[rid] != page:
                problems.append(f"{page}: {rid} belongs to {known[rid]}")
    assert not problems, "\n".join(problems)


def test_each_id_is_defined_exactly_once_across_pages():
    counts = Counter(rid for defs in page_definitions().values() for rid, _level in defs)
    repeated = sorted(rid for rid, n in counts.items() if n > 1)
    assert not repeated, f"defined more than once: {repeated}"


def page_rule_texts() -> dict[str, str]:
    """Each requirement's sentence as its page defines it, links flattened to their text
    (the form requirements.yaml keeps)."""
    texts = {}
    for path in sorted(SPEC.rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            found = DEFINITION_LINE.match(line)
            if found:
                texts[found.group(1)] = LINK.sub(r"\1", found.group(2)).strip()
    return texts


def test_every_yaml_rule_is_its_page_sentence():
    """The page is the source of a rule's text; requirements.yaml (and so
    docs/requirements.md) copies it word for word, links flattened."""
    texts = page_rule_texts()
    drifted = [
        f"{e['id']} ({e['page']}):\n  page: {texts[e['id']]}\n  yaml: {e['rule'].strip()}"
        for e in load_requirements()
        if e["id"] in texts and texts[e["id"]] != e["rule"].strip()
    ]
    assert not drifted, "rule texts differ; copy the page's sentence:\n" + "\n".join(drifted)
