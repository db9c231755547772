"""The docs site: a strict mkdocs build, a requirement anchor for every ID, the generated
pages, and the site served on loopback and opened in headless Chromium.

The browser part skips, with the reason, when Chromium is not installed (scripts/setup.sh
installs Debian's ``chromium``). Screenshots are kept under ``artifacts/docs/`` (git-ignored)
as test artefacts.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
HOOKS = REPO / "docs" / "hooks"
ARTIFACTS = REPO / "artifacts" / "docs"
BUILD_TIMEOUT_S = 180
BROWSER_TIMEOUT_S = 60

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e .[docs])")
pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e .[docs])")


def _hooks():
    if str(HOOKS) not in sys.path:
        sys.path.insert(0, str(HOOKS))
    import gallery
    import spec_pages

    return gallery, spec_pages


def _generated():
    _hooks()
    import generated

    return generated


# --- the build --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]
    assert not warnings, "\n".join(warnings)
    return out


def _page(site: Path, src_uri: str) -> str:
    """The built HTML of a page, by its source path (``spec/behaviour/roll.md``)."""
    stem = src_uri.removesuffix(".md")
    last = stem.rsplit("/", 1)[-1]
    if last == "README" or (last == "index" and not stem.startswith("spec/")):
        stem = stem.rsplit("/", 1)[0] if "/" in stem else ""
    path = site / stem / "index.html" if stem else site / "index.html"
    return path.read_text(encoding="utf-8")


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tables = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "table":
            self.tables += 1


def _parse(html: str) -> _Ids:
    parser = _Ids()
    parser.feed(html)
    return parser


def test_every_requirement_has_an_anchor(site):
    """Every ID of spec/requirements.yaml is an anchor on its own spec page, so
    /spec/<page>/#<ID> is a stable link (and the requirement table has a row for it)."""
    data = yaml.safe_load((REPO / "spec" / "requirements.yaml").read_text(encoding="utf-8"))
    missing = []
    pages: dict[str, set[str]] = {}
    for entry in data["requirements"]:
        page = f"spec/{entry['page']}"
        if page not in pages:
            pages[page] = _parse(_page(site, page)).ids
        if entry["id"] not in pages[page]:
            missing.append(f"{entry['id']} ({page})")
    assert not missing, f"{len(missing)} requirements without an anchor: {', '.join(missing)}"
    table = _page(site, "requirements.md")
    absent = [
        e["id"]
        for e in data["requirements"]
        if not re.search(rf"(?<![\w-]){re.escape(e['id'])}(?![\w-])", table)
    ]
    assert not absent, f"not in the requirement table: {absent}"


def test_spec_pages_are_included_not_copied(site):
    spec_pages_in_docs = list((REPO / "docs").rglob("spec/**/*.md"))
    assert not spec_pages_in_docs, f"spec pages copied into docs/: {spec_pages_in_docs}"
    for md in (REPO / "spec").rglob("*.md"):
        rel = md.relative_to(REPO).as_posix()
        html = _page(site, rel)
        title = md.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        words = re.sub(r"[`*]", "", title).split()[0]
        assert words in html, f"{rel}: its title is not in the built page"


def test_citations_link_to_definitions(site):
    """A cited ID (``(APPEND-24)``) links to the anchor of its definition."""
    roll = _page(site, "spec/behaviour/roll.md")
    assert 'href="../append/#APPEND-24"' in roll
    test_map = _page(site, "kafka-test-map.md")
    assert 'href="../spec/behaviour/roll/#ROLL-2"' in test_map
    assert 'href="../spec/behaviour/kafka-tests/"' in test_map  # ../spec/... resolved


def test_format_gallery(site):
    gallery, _ = _hooks()
    html = _page(site, "formats.md")
    parsed = _parse(html)
    for fmt in gallery.GALLERY:
        assert fmt.slug in parsed.ids, fmt.title
    assert parsed.tables >= len(gallery.GALLERY) + 2  # one per format, the index, the hex dump
    assert html.count('class="klog-layout"') == len(gallery.GALLERY)
    assert 'class="klog-hex"' in html
    # the batch header offsets computed from the ksy agree with the spec's Table 1
    layout = gallery.KsyLibrary(REPO / "kaitai").layout(gallery.GALLERY[0])
    offsets = {f.kafka: f.offset for f in layout}
    assert offsets["crc"] == 17 and offsets["attributes"] == 21 and offsets["records"] == 61
    example = site / "assets" / f"{gallery.EXAMPLE_BASE_OFFSET:020d}.log"
    assert example.read_bytes() == gallery.example_batch()


def test_hex_dump_labels_every_byte():
    gallery, _ = _hooks()
    data = gallery.example_batch()
    spans = gallery.annotate_batch(data, gallery.KsyLibrary(REPO / "kaitai"))
    covered = [b for s in spans for b in range(s.start, s.end)]
    assert covered == list(range(len(data)))
    values = {s.field: s.value for s in spans}
    assert values["baseOffset"] == str(gallery.EXAMPLE_BASE_OFFSET)
    assert values["record 0: key"] == "b'user-1'"
    assert values["record 1: valueLength"] == "5"


def test_example_batch_reads_with_the_kaitai_parser():
    """The hex dump's bytes parse with the compiled Kaitai spec as they are labelled."""
    gallery, _ = _hooks()
    from kaitai.generated.kafka_log_segment import KafkaLogSegment

    segment = KafkaLogSegment.from_bytes(gallery.example_batch())
    (entry,) = segment.entries
    assert entry.base_offset == gallery.EXAMPLE_BASE_OFFSET
    assert entry.body.producer_id == 4000
    records = entry.body.records.records
    assert [getattr(r.body, "key", None) for r in records] == [b"user-1", None]
    assert [r.body.value for r in records] == [b"hello", b"world"]


def test_cli_reference_lists_every_command(site):
    html = _page(site, "cli.md")
    for command in ("dump", "verify", "testee"):
        assert f'id="klogspec-{command}"' in html, command
    assert "--verify-index-only" in html


def test_conformance_guide_has_a_live_transcript(site):
    html = _page(site, "conformance/protocol.md")
    assert "&quot;op&quot;:&quot;hello&quot;" in html or '"op":"hello"' in html
    assert "OFFSET_OUT_OF_RANGE" in html
    assert (site / "schemas" / "protocol.schema.json").is_file()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def test_internal_links_resolve(site):
    """Every relative link of every page (those the hook adds to rendered HTML included)
    reaches a file of the site and, with a fragment, an element with that id."""
    ids: dict[Path, set[str]] = {}
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html":
            continue
        links = _Links()
        links.feed(page.read_text(encoding="utf-8"))
        for href in links.hrefs:
            if re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("//"):
                continue
            path, _, fragment = href.partition("#")
            target = (page.parent / path).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href}")
                continue
            if fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = _parse(target.read_text(encoding="utf-8")).ids
                if fragment not in ids[target]:
                    broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:40])


def test_benchmarks_page_from_results(tmp_path):
    """The figures of benchmarks/run (schema 1) become a table and two charts."""
    generated = _generated()
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    run = {"timestamp": "2026-01-01T00:00:00+00:00", "commit": "0123456789abcdef", "cpus": 2}
    figures = [
        {
            "name": "verify-16k",
            "title": "Batch-level verify",
            "unit": "MiB/s",
            "ours": 1700.0,
            "baseline": 3100.0,
            "ratio": 0.55,
            "ours_label": "verify_segment",
            "baseline_label": "crc32c",
            "target": {"on": "ratio", "op": ">=", "value": 0.5, "text": "ratio >= 0.5"},
            "status": "PASS",
            "run": run,
        },
        {
            "name": "memory-dump",
            "title": "Peak RSS of dump",
            "unit": "MiB",
            "ours": 27.8,
            "baseline": 25.8,
            "ratio": 1.08,
            "ours_label": "klogspec dump",
            "baseline_label": "python -c pass",
            "target": {
                "on": "ours",
                "op": "<",
                "value": 200,
                "unit": "MiB",
                "text": "ours < 200 MiB",
            },
            "status": "PASS",
            "run": run,
        },
    ]
    (results / "latest.json").write_text(
        __import__("json").dumps({"schema": 1, "run": run, "figures": figures})
    )
    page = generated.benchmarks_page(tmp_path)
    assert "Not yet measured" not in page
    assert "[Batch-level verify](#verify-16k)" in page and "0.55" in page
    assert page.count('class="klog-chart"') == 2
    assert "commit `0123456789`" in page
    empty = generated.benchmarks_page(tmp_path / "nowhere")
    assert "Not yet measured" in empty


def test_link_rewriting():
    _, spec_pages = _hooks()
    files = {"spec/behaviour/roll.md", "kafka-test-map.md", "requirements.md", "index.md"}
    out = spec_pages.rewrite_links(
        "[c](../spec/behaviour/roll.md#ROLL-3) [y](../spec/requirements.yaml) "
        "[x](https://kafka.apache.org) [s](#here) [g](../pyproject.md)",
        "docs/kafka-test-map.md",
        "kafka-test-map.md",
        "docs",
        files,
    )
    assert "[c](spec/behaviour/roll.md#ROLL-3)" in out
    assert "[y](requirements.md)" in out
    assert "[x](https://kafka.apache.org)" in out and "[s](#here)" in out
    assert "g (`pyproject.md`)" in out
    spec = spec_pages.rewrite_links(
        "[r](requirements.yaml)", "spec/README.md", "spec/README.md", "docs", files
    )
    assert spec == "[r](../requirements.md)"


def test_requirement_anchors_and_citations():
    _, spec_pages = _hooks()
    text = (
        "- **ROLL-3** MUST: rolls (ROLL-4).\n"
        "```text\n- **ROLL-9** MUST: in a fence\n```\n"
        "`ROLL-4` in code, [ROLL-4](x.md) linked, UTF-8 not an ID\n"
    )
    anchored = spec_pages.anchor_requirements(text)
    assert '<a id="ROLL-3" class="klog-req" href="#ROLL-3"' in anchored
    assert 'id="ROLL-9"' not in anchored
    linked = spec_pages.link_citations(
        anchored,
        "spec/behaviour/roll.md",
        {"ROLL-3": "spec/behaviour/roll.md", "ROLL-4": "spec/behaviour/roll.md"},
    )
    assert "rolls ([ROLL-4](#ROLL-4){ .klog-cite })" in linked
    assert "<strong>ROLL-3</strong></a>" in linked  # the definition is not linked again
    assert "`ROLL-4` in code, [ROLL-4](x.md) linked, UTF-8" in linked


# --- in a browser -------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def _chromium(url: str, screenshot: Path, height: int) -> str:
    """Open ``url`` in headless Chromium: the DOM after scripts ran, and a screenshot."""
    with tempfile.TemporaryDirectory(prefix="klogspec-chromium-") as profile:
        proc = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--hide-scrollbars",
                f"--window-size=1280,{height}",
                "--virtual-time-budget=5000",
                f"--screenshot={screenshot}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=BROWSER_TIMEOUT_S,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


PAGES = [
    # (name, path, text that must be on the page, tables at least, height)
    ("home", "", "Who it is for", 2, 1000),
    ("spec-roll", "spec/behaviour/roll/", "When an append rolls", 1, 1000),
    ("format-gallery", "formats/", "Annotated hex dump", 14, 2400),
]


@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it)"
)
@pytest.mark.parametrize(
    ("name", "path", "text", "tables", "height"), PAGES, ids=[p[0] for p in PAGES]
)
def test_pages_render_in_chromium(server, name, path, text, tables, height):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    shot.unlink(missing_ok=True)
    dom = _chromium(f"{server}/{path}", shot, height)
    parsed = _parse(dom)
    assert text in dom
    assert parsed.tables >= tables, f"{parsed.tables} tables"
    # navigation: the header tabs and the sidebar, rendered by the theme's scripts
    assert 'class="md-tabs' in dom and 'class="md-nav' in dom
    assert "md-tabs__link--active" in dom or "md-tabs__item--active" in dom
    assert shot.is_file() and shot.stat().st_size > 20_000, "the screenshot is missing or blank"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
