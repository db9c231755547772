"""Search that finds requirement IDs and file names.

mkdocs-material's search (lunr in a web worker) indexes one entry per heading, and splits
text and queries with the ``separator`` of ``mkdocs.yml``. Three things make a query for a
rule ID land on the rule:

* the separator (mkdocs.yml, :data:`SEPARATOR`) keeps an ID (``RECOV-14``, ``CKPT-B-8``)
  one token and drops the dot before a file suffix, so ``txnindex`` and
  ``kafka_cleanshutdown`` match ``.txnindex`` and ``.kafka_cleanshutdown``;
* every requirement gets its own index entry, at its anchor (``spec/behaviour/recovery/
  #RECOV-14``), titled with its ID (:func:`requirement_entries`);
* a few lines appended to material's search worker (:data:`WORKER_PATCH`) make lunr's query
  lexer split a query like the text (it otherwise splits ``RECOV-14`` at its hyphen, whatever
  the separator), and give an exact ID a boost over the IDs it is a prefix of (material
  appends ``*`` to every query term, so ``ROLL-3`` would also match ``ROLL-30`` equally).

The browser test of tests/test_docs.py checks the whole chain in Chromium.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

# Keep in step with plugins.search.separator in mkdocs.yml (tests/test_docs.py checks it):
# whitespace and punctuation; a dot not before a digit (file suffixes, not versions); a
# hyphen unless what follows is the rest of a requirement ID (a digit, or the `B-8` of
# CKPT-B-8).
SEPARATOR = r"""[\s,;:!=\[\]()"/|]+|\.(?!\d)|-(?!(?:[A-Za-z]-)?\d)|&[lg]t;"""

ID_QUERY = r"^[a-z]+(?:-[a-z]+)?-\d+$"

WORKER_PATCH = (
    """
/* kafka-log-spec (docs/hooks/site_search.py): requirement IDs are one search term. */
(function () {
  var lunr = self.lunr;
  if (!lunr || !lunr.QueryLexer || !lunr.Index) return;
  /* lunr's query lexer keeps the separator it was loaded with ([\\s-]+) and tests it one
     character at a time; material splits each term with the configured separator anyway. */
  lunr.QueryLexer.termSeparator = /\\s+/;
  var ID = /"""
    + ID_QUERY
    + """/i;
  var search = lunr.Index.prototype.search;
  lunr.Index.prototype.search = function (query) {
    var exact = String(query).split(/\\s+/).map(function (term) {
      var bare = term.replace(/^[+]/, "").replace(/\\*$/, "");
      return ID.test(bare) ? bare + "^100" : null;
    }).filter(Boolean);
    return search.call(this, exact.length ? query + " " + exact.join(" ") : query);
  };
})();
"""
)
PATCH_MARK = "kafka-log-spec (docs/hooks/site_search.py)"


def rule_html(rule: str) -> str:
    """A rule sentence of requirements.yaml (markdown code spans) as the HTML the search shows."""
    parts = re.split(r"(`[^`]*`)", rule)
    return "".join(
        f"<code>{html.escape(p[1:-1])}</code>" if p.startswith("`") else html.escape(p)
        for p in parts
    )


def requirement_entries(requirements, urls: dict[str, str]) -> list[dict]:
    """One search entry per requirement, at its anchor on its spec page."""
    entries = []
    for r in requirements:
        url = urls.get(r.site_page)
        if url is None:
            continue
        entries.append(
            {
                "location": f"{url}#{r.id}",
                "title": r.id,
                "text": f"<p><strong>{r.level}</strong>: {rule_html(r.rule)}</p>",
            }
        )
    return entries


def add_entries(index_path: Path, entries: list[dict]) -> int:
    """Append ``entries`` to material's search_index.json, after their pages' own entries
    (the worker takes the first entry of a page as the page). Returns how many were added."""
    data = json.loads(index_path.read_text(encoding="utf-8"))
    pages = {doc["location"].split("#", 1)[0] for doc in data["docs"]}
    known = {doc["location"] for doc in data["docs"]}
    fresh = [
        e for e in entries if e["location"].split("#", 1)[0] in pages and e["location"] not in known
    ]
    data["docs"].extend(fresh)
    index_path.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    return len(fresh)


def patch_worker(site_dir: Path) -> list[Path]:
    """Append :data:`WORKER_PATCH` to material's search worker(s) in the built site."""
    patched = []
    for worker in sorted((site_dir / "assets" / "javascripts" / "workers").glob("search.*.js")):
        if worker.suffix != ".js" or worker.name.endswith(".map"):
            continue
        text = worker.read_text(encoding="utf-8")
        if PATCH_MARK not in text:
            worker.write_text(text + WORKER_PATCH, encoding="utf-8")
        patched.append(worker)
    return patched
