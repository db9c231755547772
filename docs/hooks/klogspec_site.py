"""The mkdocs hook of the kafka-log-spec site (mkdocs.yml ``hooks:``).

* ``on_config``: the Specification section of the nav, from ``spec/``.
* ``on_files``: the spec pages (included from ``spec/``, not copied), the generated pages
  (format gallery, CLI reference, benchmarks, the requirement table when
  ``docs/requirements.md`` is absent, a pipeline placeholder when ``docs/pipeline.md`` is
  absent), the JSON Schemas of the conformance protocol and the example segment file.
* ``on_page_markdown``: links whose text is a file name get the page's title instead,
  repository-relative links made site-relative, requirement anchors on the spec pages,
  citations of requirement IDs linked to them, the generated sections of hand-written pages
  (placeholders.py: the features and operations tables, the protocol transcript). Last, the
  diagrams a page asks for (``<!-- klogspec:diagram NAME -->``, diagrams.py).
* ``on_post_build``: the search index and worker taught requirement IDs (site_search.py).
"""

from __future__ import annotations

import logging
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

HOOKS = Path(__file__).resolve().parent
REPO = HOOKS.parent.parent
for path in (str(HOOKS), str(REPO)):
    if path not in sys.path:
        sys.path.insert(0, path)

import diagrams  # noqa: E402
import gallery  # noqa: E402
import generated  # noqa: E402
import kafka_tests  # noqa: E402
import placeholders  # noqa: E402
import python_api  # noqa: E402
import site_search  # noqa: E402
import spec_pages  # noqa: E402

from conformance.traceability import kafka_source_url  # noqa: E402

log = logging.getLogger("mkdocs.hooks.klogspec")

EXAMPLE_SEGMENT = f"assets/{gallery.EXAMPLE_BASE_OFFSET:020d}.log"

_state: dict = {}


def on_config(config):
    nav = config.nav or []
    for i, item in enumerate(nav):
        if isinstance(item, dict) and "Specification" in item:
            nav[i] = {"Specification": spec_pages.spec_nav(REPO)}
    _state["requirements"] = spec_pages.load_requirements(REPO)
    _state["pages_by_id"] = {r.id: r.site_page for r in _state["requirements"]}
    _state["sources"] = spec_pages.source_urls(_state["requirements"])
    return config


def on_files(files: Files, config) -> Files:
    for repo_path in spec_pages.spec_markdown_files(REPO):
        files.append(_spec_file(repo_path, config))
    library = gallery.KsyLibrary(REPO / "kaitai")
    pages = {
        "formats.md": lambda: gallery.gallery_page(
            library, gallery.example_section(library, EXAMPLE_SEGMENT)
        ),
        "cli.md": lambda: generated.cli_page(REPO),
        "benchmarks.md": lambda: generated.benchmarks_page(REPO),
    }
    if files.get_file_from_path("requirements.md") is None:
        log.info("docs/requirements.md is absent: generating the requirement table")
        pages["requirements.md"] = lambda: generated.requirement_table_page(
            REPO, _state["requirements"]
        )
    if files.get_file_from_path("pipeline.md") is None:
        pages["pipeline.md"] = lambda: PIPELINE_PLACEHOLDER
    for src_uri, make in pages.items():
        files.append(File.generated(config, src_uri, content=make()))
    files.append(File.generated(config, EXAMPLE_SEGMENT, content=gallery.example_batch()))
    for schema in sorted((REPO / "conformance" / "schemas").glob("*.json")):
        files.append(File.generated(config, f"schemas/{schema.name}", content=schema.read_bytes()))
    # repository path of each page, to resolve its links as GitHub does
    docs = Path(config.docs_dir).resolve().relative_to(REPO).as_posix()
    _state["docs"] = docs
    _state["repo_paths"] = {
        f.src_uri: f.src_uri if f.src_uri.startswith("spec/") else f"{docs}/{f.src_uri}"
        for f in files
    }
    _state["site_files"] = {f.src_uri for f in files}
    _state["urls"] = {f.src_uri: f.url for f in files if f.src_uri.endswith(".md")}
    return files


# pages of wide tables, and single pages whose sidebar would list only themselves
NO_SIDEBAR = {kafka_tests.PAGE, "requirements.md", "pipeline.md"}


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    markdown = placeholders.strip_forge_notes(markdown)
    if src in NO_SIDEBAR:
        page.meta.setdefault("hide", ["navigation"])
    if python_api.has_marker(markdown):
        markdown = python_api.replace_markers(markdown, REPO)
    if src == kafka_tests.PAGE:
        page.meta["hide"] = ["navigation", "toc"]  # its tables need the width
    markdown = spec_pages.title_links(
        markdown,
        _state["repo_paths"][src],
        _state["docs"],
        _state["site_files"],
        lambda site_path: _page_markdown(files, site_path),
    )
    markdown = spec_pages.rewrite_links(
        markdown, _state["repo_paths"][src], src, _state["docs"], _state["site_files"]
    )
    if src == kafka_tests.PAGE:
        markdown = kafka_tests.add_our_tests(markdown, REPO)
    if src == "reading-order.md" and config.repo_url:
        markdown = link_source_files(markdown, config.repo_url)
    if src.startswith("spec/"):
        markdown = spec_pages.anchor_requirements(markdown, _state["sources"])
        markdown = spec_pages.link_kafka_sources(markdown, kafka_source_url)
    # the generated sections (also filled in the source: scripts/docs_placeholders.py)
    markdown = placeholders.fill(markdown, _state.setdefault("sections", {}))
    if not src.startswith("api/"):
        markdown = spec_pages.link_citations(markdown, src, _state["pages_by_id"])
    if diagrams.MARKER.search(markdown):  # last: nothing above may touch the SVG
        links = diagrams.Links(
            lambda target, anchor: _href(page, files, target, anchor),
            _state["pages_by_id"],
            markdown,
        )
        rules = {r.id: r.rule for r in _state["requirements"]}
        markdown = diagrams.replace_markers(markdown, REPO, links, rules)
    return markdown


SOURCE_FILE = re.compile(r"`((?:reference_impl|klogspec|conformance|pipeline|tests)/[\w/]+\.py)`")
SOURCE_BRANCH = "main"


def link_source_files(markdown: str, repo_url: str) -> str:
    """Each `path/to/module.py` of the repository, a link to its source at ``repo_url``
    (mkdocs.yml), breakable only after a slash (no mid-word breaks on a phone)."""

    def link(match: re.Match) -> str:
        path = match.group(1)
        if not (REPO / path).is_file():
            return match.group(0)
        url = f"{repo_url.rstrip('/')}/blob/{SOURCE_BRANCH}/{path}"
        code = path.replace("/", "/<wbr>")
        return f'<a class="klog-source" href="{url}"><code>{code}</code></a>'

    return SOURCE_FILE.sub(link, markdown)


def _href(page, files: Files, target: str, anchor: str) -> str:
    """The URL of page ``target`` (a src_uri) and ``anchor``, relative to ``page``."""
    fragment = f"#{anchor}" if anchor else ""
    if not target or target == page.file.src_uri:
        return fragment or "./"
    file = files.get_file_from_path(target)
    if file is None:
        raise ValueError(f"{page.file.src_uri}: a diagram links to {target}, not in the site")
    here = page.file.url.rstrip("/") or "."
    there = file.url.rstrip("/") or "."
    return posixpath.relpath(there, here) + "/" + fragment


def _page_markdown(files: Files, site_path: str) -> str | None:
    file = files.get_file_from_path(site_path)
    if file is None or not site_path.endswith(".md"):
        return None
    try:
        return file.content_string
    except (OSError, UnicodeDecodeError):
        return None


def _spec_file(repo_path: str, config) -> File:
    """A spec page read from spec/. ``behaviour/index.md`` (the index files' behaviour) is a
    page like the others, at ``spec/behaviour/index/``: not the folder's index page, and not
    the Behaviour section's index in the nav."""
    dest_uri = None
    is_named_index = Path(repo_path).stem == "index"
    if is_named_index and config.use_directory_urls:
        dest_uri = f"{repo_path.removesuffix('.md')}/index.html"
    file = File(
        repo_path,
        src_dir=str(REPO),
        dest_dir=config.site_dir,
        use_directory_urls=config.use_directory_urls,
        dest_uri=dest_uri,
    )
    if is_named_index:
        file.name = "index-page"  # File.name == "index" makes a page its section's index
    return file


def on_page_content(html: str, page, config, files) -> str:
    """Lower-case aliases of the requirement anchors; docstrings are rendered after
    ``on_page_markdown``: link their cited IDs here."""
    html = spec_pages.add_case_aliases(html, set(_state["pages_by_id"]))
    if not page.file.src_uri.startswith("api/"):
        return html
    urls = {}
    for rid, src_uri in _state["pages_by_id"].items():
        target = files.get_file_from_path(src_uri)
        if target is not None:
            urls[rid] = target.url
    return spec_pages.link_citations_html(html, page.url, urls)


def on_post_build(config) -> None:
    """Search: an entry per requirement at its anchor, and the worker's query lexer taught
    to keep an ID whole (site_search.py). Runs after material's search plugin wrote the
    index (hooks come after plugins)."""
    site = Path(config.site_dir)
    index = site / "search" / "search_index.json"
    if not index.is_file():
        return
    entries = site_search.requirement_entries(_state["requirements"], _state["urls"])
    added = site_search.add_entries(index, entries)
    if not site_search.patch_worker(site):
        log.warning("material's search worker was not found: rule IDs will not search well")
    log.info("search: %d requirement entries added", added)


PIPELINE_PLACEHOLDER = """# Pipeline

The Spark pipeline guide (running `klogspec scan` locally, on a cluster and against tiered
storage) is being written with the pipeline itself, in `docs/pipeline.md`; this page is a
placeholder until it lands.
"""
