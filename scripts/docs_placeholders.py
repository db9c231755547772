"""Fill the generated sections of the hand-written docs pages in the source.

Usage: python scripts/docs_placeholders.py [--check]

Pages such as docs/conformance/protocol.md hold sections made from the project itself (the
features table, the operations table, a live protocol transcript) between
``<!-- klogspec:NAME -->`` and ``<!-- /klogspec:NAME -->``. The site's hook fills them when
it builds; this script fills them in the files, so the raw markdown reads complete.
``--check`` exits 1, naming the stale pages, when a page differs from a fresh copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for path in (str(REPO / "docs" / "hooks"), str(REPO)):
    if path not in sys.path:
        sys.path.insert(0, path)

import placeholders  # noqa: E402


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print(__doc__, file=sys.stderr)
        return 2
    stale = placeholders.stale_pages(REPO, write=not check)
    for page in stale:
        verb = "is stale: run python scripts/docs_placeholders.py" if check else "filled"
        print(f"{page} {verb}", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
