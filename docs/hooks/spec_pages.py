"""The spec pages in the site: included from ``spec/`` (never copied), with links that work.

* ``spec/**/*.md`` join the build as ``spec/...`` pages (``spec/README.md`` is ``/spec/``).
* Every requirement item (``- **ROLL-3** MUST: ...``) gets the anchor ``id="ROLL-3"``, so
  ``/spec/behaviour/roll/#ROLL-3`` is stable, and a permalink on its bold ID.
* A requirement ID cited in prose or tables, on any page, links to its definition.
* A relative link is resolved against the file's place in the *repository* (as on GitHub),
  then made relative to the page's place in the *site*: ``../spec/README.md`` from
  ``docs/quickstart.md`` works in both. ``spec/requirements.yaml`` leads to the
  requirement table.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ID_RE = r"[A-Z]+(?:-[A-Z]+)?-\d+"
# a requirement item or paragraph: its bold ID, then its level (spec/README.md §1.4)
REQUIREMENT_LINE = re.compile(
    rf"^(?P<lead>\s*(?:[-*+]\s+|\d+\.\s+)?)\*\*(?P<id>{ID_RE})\*\*(?P<rest>\s+(?:MUST|SHOULD|MAY)\b)",
    re.M,
)
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
# inline code, links/images (text and target), raw HTML tags, autolinks: never touched
PROTECTED = re.compile(r"`+[^`]*`+|!?\[[^\]]*\]\([^)]*\)|<a\b[^>]*>.*?</a>|<[^>\n]+>")
# a link's text has no brackets and no blank line (``[69, 138)`` two paragraphs before a link
# is not its start)
MD_LINK = re.compile(
    r"(?P<pre>!?\[(?:[^\[\]\n]|\n(?![ \t]*\n))*\]\()(?P<target>[^)\s]+)(?P<post>(?:\s+\"[^\"]*\")?\))"
)

# Where repository paths land in the site (None: not in the site).
REQUIREMENTS_YAML = "spec/requirements.yaml"


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str
    page: str  # relative to spec/
    rule: str
    source: str

    @property
    def site_page(self) -> str:
        return f"spec/{self.page}"


def load_requirements(repo: Path) -> list[Requirement]:
    data = yaml.safe_load((repo / REQUIREMENTS_YAML).read_text(encoding="utf-8"))
    return [
        Requirement(r["id"], r["level"], r["page"], str(r["rule"]), str(r.get("source", "")))
        for r in data["requirements"]
    ]


KAFKA_PATH = re.compile(r"^(?:[a-z][\w-]*/)+(?:[\w.-]+\.(?:java|scala|json))?$")
SHORT_NAME = re.compile(r"^[A-Z]\w*\.(?:java|scala)$")


def link_kafka_sources(markdown: str, url_of) -> str:
    """In a page's ``Kafka source:`` paragraph, each Kafka path in code (``storage/src/...
    /LogSegment.java``, a folder ending in ``/``) links to that file at the cited commit, and
    so does a bare file name (``LocalLog.java``), resolved in the folder of the last path of
    the same language before it. ``url_of(path)`` makes the URL (traceability's
    ``kafka_source_url``)."""

    def paragraph(m: re.Match) -> str:
        folders: dict[str, str] = {}

        def code(c: re.Match) -> str:
            text = c.group(1)
            if KAFKA_PATH.match(text) and "/src/" in text:
                folder = text if text.endswith("/") else text.rsplit("/", 1)[0] + "/"
                language = text.rsplit(".", 1)[-1] if not text.endswith("/") else None
                for lang in (language,) if language else ("java", "scala"):
                    if lang == "json":
                        continue
                    if language or folder.split("/src/main/", 1)[-1].startswith(lang):
                        folders[lang] = folder
                return f"[`{text}`]({url_of(text)})"
            if SHORT_NAME.match(text):
                folder = folders.get(text.rsplit(".", 1)[-1])
                if folder:
                    return f"[`{text}`]({url_of(folder + text)})"
            return c.group(0)

        return re.sub(r"`([^`\n]+)`", code, m.group(0))

    return _outside_code(
        markdown, lambda text: re.sub(r"^Kafka source:(?:.+\n?)+", paragraph, text, flags=re.M)
    )


def source_urls(requirements: list[Requirement]) -> dict[str, str]:
    """Requirement ID -> the URL of its Kafka source file at the cited commit (rules of this
    project, whose source starts with ``kafka-log-spec``, have none)."""
    from conformance.traceability import kafka_source_url

    return {
        r.id: kafka_source_url(r.source)
        for r in requirements
        if r.source and not r.source.startswith("kafka-log-spec")
    }


def spec_markdown_files(repo: Path) -> list[str]:
    """Repository-relative paths of the spec pages, ``spec/README.md`` first."""
    spec = repo / "spec"
    paths = sorted(p.relative_to(repo).as_posix() for p in spec.rglob("*.md"))
    return sorted(paths, key=lambda p: p != "spec/README.md")


def spec_nav(repo: Path) -> list:
    """The Specification section: the overview, then formats and behaviour in the order of
    spec/README.md's page table; pages the table does not list follow, by name."""
    readme = (repo / "spec" / "README.md").read_text(encoding="utf-8")
    order = [m.group(1) for m in re.finditer(r"^\| \[[^\]]*\]\(([^)#]+\.md)\)", readme, re.M)]
    sections: dict[str, list[str]] = {"formats": [], "behaviour": []}
    others: list[str] = []
    pages = [p.removeprefix("spec/") for p in spec_markdown_files(repo)]
    ranked = sorted(
        (p for p in pages if p != "README.md"),
        key=lambda p: (order.index(p) if p in order else len(order), p),
    )
    for page in ranked:
        top = page.split("/", 1)[0] if "/" in page else ""
        (sections.get(top, others)).append(f"spec/{page}")
    nav: list = [{"Overview": "spec/README.md"}]
    if sections["formats"]:
        nav.append({"File formats": sections["formats"]})
    if sections["behaviour"]:
        nav.append({"Behaviour": sections["behaviour"]})
    nav.extend(others)
    return nav


def site_path_of(repo_path: str, docs_dir: str, site_files: set[str]) -> str | None:
    """The site's ``src_uri`` for a repository path, or None when it is not in the site."""
    if repo_path == REQUIREMENTS_YAML:
        return "requirements.md"
    if repo_path.startswith(docs_dir + "/"):
        candidate = repo_path[len(docs_dir) + 1 :]
    elif repo_path.startswith("spec/"):
        candidate = repo_path
    else:
        return None
    return candidate if candidate in site_files else None


def _repo_target(target: str, page_repo_path: str) -> tuple[str, str] | None:
    """A relative link's repository path and fragment, or None for an absolute link, a URL or
    a bare fragment."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
        return None
    path, _, anchor = target.partition("#")
    return posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path)), anchor


def rewrite_links(
    markdown: str, page_repo_path: str, page_site_path: str, docs_dir: str, site_files: set[str]
) -> str:
    """Resolve relative links as GitHub would (from the file's repository path) and point them
    at the same file in the site; links to repository files outside the site become code."""

    def fix(m: re.Match) -> str:
        resolved = _repo_target(m.group("target"), page_repo_path)
        if resolved is None:
            return m.group(0)
        repo_path, anchor = resolved
        path = m.group("target").partition("#")[0]
        site = site_path_of(repo_path, docs_dir, site_files)
        if site is None:
            if path.endswith(".md") or path.endswith(".yaml"):
                # a repository file the site does not hold: keep the name, drop the link
                text = m.group("pre")[1:-2] if not m.group("pre").startswith("!") else ""
                return f"{text} (`{repo_path}`)" if text else f"`{repo_path}`"
            return m.group(0)
        rel = posixpath.relpath(site, posixpath.dirname(page_site_path) or ".")
        return f"{m.group('pre')}{rel}{'#' + anchor if anchor else ''}{m.group('post')}"

    return _outside_code(markdown, lambda text: MD_LINK.sub(fix, text))


# --- link text: page and section titles, not file names -------------------------------------

# a link text that is only a file name, maybe with a section or table: `log-file.md`,
# `behaviour/model.md §5`, `model.md Table 2`
FILE_NAME_TEXT = re.compile(
    r"^`?(?:[\w.-]+/)*[\w.-]+\.md`?(?:\s+(?:§\s*(?P<section>\d+)(?:\.\d+)*|Table\s+(?P<table>\d+)))?$"
)
HEADING = re.compile(
    r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)(?:\s*\{\s*#(?P<id>[\w-]+)\s*\})?\s*#*\s*$"
)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # markdown, as written
    slug: str

    @property
    def number(self) -> str | None:
        m = re.match(r"^(\d+(?:\.\d+)*)\.?\s", self.text)
        return m.group(1) if m else None

    @property
    def name(self) -> str:
        """The heading without its section number."""
        return re.sub(r"^\d+(?:\.\d+)*\.?\s+", "", self.text)


def headings(markdown: str) -> list[Heading]:
    """The headings of a page (outside code fences), with the anchors the toc extension gives
    them."""
    from markdown.extensions.toc import slugify

    found: list[Heading] = []
    fence = None
    front_matter = markdown.startswith("---\n")
    for i, line in enumerate(markdown.splitlines()):
        if front_matter:
            front_matter = not (i > 0 and line.strip() == "---")
            continue
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(2)[0]
            elif m.group(2).startswith(fence):
                fence = None
            continue
        h = HEADING.match(line) if fence is None else None
        if h:
            plain = re.sub(r"<[^>]+>|[`*_]", "", h.group("text"))
            found.append(
                Heading(
                    len(h.group("hashes")), h.group("text"), h.group("id") or slugify(plain, "-")
                )
            )
    return found


def title_of(markdown: str) -> str | None:
    """A page's title: its first level-1 heading (markdown, as written)."""
    return next((h.text for h in headings(markdown) if h.level == 1), None)


def link_text_for(page_title: str, page_headings: list[Heading], anchor: str, text: str) -> str:
    """The text a link whose text was the file name ``text`` gets: the page's title, and the
    section the link points at or names (``§5``), or the table it names."""
    m = FILE_NAME_TEXT.match(" ".join(text.split()))
    section = None
    if anchor:
        section = next((h for h in page_headings if h.slug == anchor and h.level > 1), None)
        if section is None and re.fullmatch(ID_RE, anchor):
            return f"{page_title}, {anchor}"
    if section is None and m and m.group("section"):
        section = next((h for h in page_headings if h.number == m.group("section")), None)
    if m and m.group("table"):
        return f"{page_title}, Table {m.group('table')}"
    if section is not None:
        number = f"§{section.number} " if section.number else ""
        return f"{page_title}, {number}{section.name}"
    return page_title


def title_links(
    markdown: str,
    page_repo_path: str,
    docs_dir: str,
    site_files: set[str],
    page_markdown,
) -> str:
    """Links whose text is a file name (``[model.md §5](model.md#5-error-codes)``) get the
    target page's title, and section title, as their text. ``page_markdown(site_path)`` gives
    a page's markdown (None when unknown); run before ``rewrite_links``."""
    cache: dict[str, tuple[str, list[Heading]] | None] = {}

    def page_info(site: str):
        if site not in cache:
            text = page_markdown(site)
            title = title_of(text) if text else None
            cache[site] = (title, headings(text)) if title else None
        return cache[site]

    def fix(m: re.Match) -> str:
        pre = m.group("pre")
        if pre.startswith("!"):
            return m.group(0)
        text = pre[1:-2]
        if not FILE_NAME_TEXT.match(" ".join(text.split())):
            return m.group(0)
        resolved = _repo_target(m.group("target"), page_repo_path)
        if resolved is None:
            return m.group(0)
        repo_path, anchor = resolved
        site = site_path_of(repo_path, docs_dir, site_files)
        info = page_info(site) if site else None
        if info is None:
            return m.group(0)
        new_text = link_text_for(info[0], info[1], anchor, text)
        return f"[{new_text}]({m.group('target')}{m.group('post')}"

    return _outside_code(markdown, lambda text: MD_LINK.sub(fix, text))


def _outside_code(markdown: str, transform, *, skip_headings: bool = False) -> str:
    """Apply ``transform`` to the text outside fenced code blocks (and headings)."""
    out: list[str] = []
    chunk: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if chunk:
            out.append(transform("".join(chunk)))
            chunk.clear()

    for line in markdown.splitlines(keepends=True):
        m = FENCE.match(line)
        if fence is None and m:
            flush()
            fence = m.group(2)[0] * len(m.group(2))
            out.append(line)
        elif fence is not None:
            out.append(line)
            if m and m.group(2).startswith(fence):
                fence = None
        elif skip_headings and line.lstrip().startswith("#"):
            flush()
            out.append(line)
        else:
            chunk.append(line)
    flush()
    return "".join(out)


def anchor_requirements(markdown: str, sources: dict[str, str] | None = None) -> str:
    """``- **ROLL-3** MUST:`` -> an item whose bold ID carries ``id="ROLL-3"`` and links to
    itself; with ``sources`` (ID -> URL of its Kafka source), the item ends with a link to
    that file."""
    sources = sources or {}

    def anchor(m: re.Match) -> str:
        rid = m.group("id")
        return (
            f'{m.group("lead")}<a id="{rid}" class="klog-req" href="#{rid}" '
            f'title="Permalink to {rid}"><strong>{rid}</strong></a>{m.group("rest")}'
        )

    def source_link(m: re.Match) -> str:
        url = sources.get(m.group("id"))
        if not url:
            return m.group(0)
        name = url.rsplit("/", 1)[-1]
        return (
            f'{m.group(0).rstrip()} <a class="klog-src" href="{url}" '
            f'title="Kafka source: {url.split("/", 7)[-1]}">{name}</a>'
        )

    def transform(text: str) -> str:
        if sources:
            text = REQUIREMENT_ITEM.sub(source_link, text)
        return REQUIREMENT_LINE.sub(anchor, text)

    return _outside_code(markdown, transform)


# a whole requirement item: its line and the indented lines that continue it
REQUIREMENT_ITEM = re.compile(
    rf"^(?:\s*(?:[-*+]\s+|\d+\.\s+)?)\*\*(?P<id>{ID_RE})\*\*\s+(?:MUST|SHOULD|MAY)\b.*"
    r"(?:\n(?![ \t]*(?:[-*+]\s|\d+\.\s|\n|$))[ \t]+\S.*)*",
    re.M,
)


def add_case_aliases(html_text: str, ids: set[str]) -> str:
    """Before every element with a requirement's ID (``id="ROLL-3"``), an empty element with
    the lower-case ID (``#roll-3``) that site.js sends on to it; other cases are found by
    site.js alone."""

    def alias(m: re.Match) -> str:
        rid = m.group("id")
        if rid not in ids or rid.lower() == rid:
            return m.group(0)
        return f'<span id="{rid.lower()}" class="klog-alias" data-for="{rid}"></span>{m.group(0)}'

    return re.sub(r'<(?:a|span)\b[^>]*?\bid="(?P<id>[^"]+)"', alias, html_text)


def link_citations(markdown: str, page_site_path: str, pages_by_id: dict[str, str]) -> str:
    """Every cited requirement ID (``(BATCH-3)``, table cells) links to its definition; code,
    links, raw HTML and headings are left alone."""
    pattern = re.compile(rf"(?<![\w\-#/]){ID_RE}(?![\w\-])")
    here = posixpath.dirname(page_site_path) or "."

    def link(m: re.Match) -> str:
        rid = m.group(0)
        page = pages_by_id.get(rid)
        if page is None:
            return rid
        if page == page_site_path:
            return f"[{rid}](#{rid}){{ .klog-cite }}"
        return f"[{rid}]({posixpath.relpath(page, here)}#{rid}){{ .klog-cite }}"

    def transform(text: str) -> str:
        pieces: list[str] = []
        last = 0
        for m in PROTECTED.finditer(text):
            pieces.append(pattern.sub(link, text[last : m.start()]))
            pieces.append(m.group(0))
            last = m.end()
        pieces.append(pattern.sub(link, text[last:]))
        return "".join(pieces)

    return _outside_code(markdown, transform, skip_headings=True)


SKIP_TAGS = {"a", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "script", "style", "title"}
TAG = re.compile(r"<(/?)([a-zA-Z0-9]+)[^>]*?(/?)>")


def link_citations_html(html_text: str, page_url: str, urls_by_id: dict[str, str]) -> str:
    """The HTML form of ``link_citations``, for text that is rendered late (docstrings in
    the API pages): IDs in text outside links, code and headings link to their definition.
    ``page_url`` and the URLs are site-relative directory URLs (``api/log/``)."""
    pattern = re.compile(rf"(?<![\w\-#/]){ID_RE}(?![\w\-])")
    here = page_url.rstrip("/") or "."

    def link(m: re.Match) -> str:
        rid = m.group(0)
        url = urls_by_id.get(rid)
        if url is None:
            return rid
        rel = posixpath.relpath(url.rstrip("/") or ".", here)
        return f'<a class="klog-cite" href="{rel}/#{rid}">{rid}</a>'

    out: list[str] = []
    depth = 0
    last = 0
    for m in TAG.finditer(html_text):
        text = html_text[last : m.start()]
        out.append(pattern.sub(link, text) if depth == 0 else text)
        out.append(m.group(0))
        if m.group(2).lower() in SKIP_TAGS and not m.group(3):
            depth += -1 if m.group(1) else 1
            depth = max(depth, 0)
        last = m.end()
    tail = html_text[last:]
    out.append(pattern.sub(link, tail) if depth == 0 else tail)
    return "".join(out)
