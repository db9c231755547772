"""The mkdocs hook of the kafka-log-spec site (mkdocs.yml ``hooks:``).

* ``on_config``: the Specification section of the nav, from ``spec/``.
* ``on_files``: the spec pages (included from ``spec/``, not copied), the generated pages
  (format gallery, CLI reference, benchmarks, the requirement table when
  ``docs/requirements.md`` is absent, a pipeline placeholder when ``docs/pipeline.md`` is
  absent), the JSON Schemas of the conformance protocol and the example segment file.
* ``on_page_markdown``: repository-relative links made site-relative, requirement anchors on
  the spec pages, citations of requirement IDs linked to them, the generated sections of
  hand-written pages (placeholders.py: the features and operations tables, the protocol
  transcript).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

HOOKS = Path(__file__).resolve().parent
REPO = HOOKS.parent.parent
for path in (str(HOOKS), str(REPO)):
    if path not in sys.path:
        sys.path.insert(0, path)

import gallery  # noqa: E402
import generated  # noqa: E402
import placeholders  # noqa: E402
import spec_pages  # noqa: E402

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
    return files


# pages of wide tables, and single pages whose sidebar would list only themselves
NO_SIDEBAR = {"kafka-test-map.md", "requirements.md", "pipeline.md"}


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    if src in NO_SIDEBAR:
        page.meta.setdefault("hide", ["navigation"])
    markdown = spec_pages.rewrite_links(
        markdown, _state["repo_paths"][src], src, _state["docs"], _state["site_files"]
    )
    if src.startswith("spec/"):
        markdown = spec_pages.anchor_requirements(markdown)
    # the generated sections (also filled in the source: scripts/docs_placeholders.py)
    markdown = placeholders.fill(markdown, _state.setdefault("sections", {}))
    if not src.startswith("api/"):
        markdown = spec_pages.link_citations(markdown, src, _state["pages_by_id"])
    return markdown


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
    """Docstrings are rendered after ``on_page_markdown``: link their cited IDs here."""
    if not page.file.src_uri.startswith("api/"):
        return html
    urls = {}
    for rid, src_uri in _state["pages_by_id"].items():
        target = files.get_file_from_path(src_uri)
        if target is not None:
            urls[rid] = target.url
    return spec_pages.link_citations_html(html, page.url, urls)


PIPELINE_PLACEHOLDER = """# Pipeline

The Spark pipeline guide (running `klogspec scan` locally, on a cluster and against tiered
storage) is being written with the pipeline itself, in `docs/pipeline.md`; this page is a
placeholder until it lands.
"""
