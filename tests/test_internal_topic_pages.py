"""The spec pages of the internal topics hold the field tables the decoder reads
(scripts/internal_topic_pages.py generates them from reference_impl/messages/tables/)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import internal_topic_pages  # noqa: E402

from reference_impl.messages.schema import TABLES, load_table  # noqa: E402


def test_pages_and_tables_agree():
    """A table changed without its page (or a page edited by hand) fails here: run
    ``python scripts/internal_topic_pages.py``."""
    assert internal_topic_pages.main(["--check"]) == 0


def test_every_table_is_on_a_page_and_every_message_has_a_heading():
    on_pages = {name for names in internal_topic_pages.PAGES.values() for name in names}
    assert on_pages == set(TABLES)
    for page, names in internal_topic_pages.PAGES.items():
        text = (internal_topic_pages.PAGES_DIR / page).read_text(encoding="utf-8")
        for name in names:
            for message in load_table(name).messages:
                assert f"#### {message}\n" in text, (page, message)


def test_a_changed_table_shows_on_the_page():
    table = load_table("transaction_state")
    rendered = internal_topic_pages.render(table)
    assert "| `TransactionalId` | `string` | 0 |" in rendered
    assert "| `PreviousProducerId` | `int64` | 1+ |  | 0 (1+) | `-1` |  |" in rendered
    assert "| `NextProducerEpoch` | `int16` | 1+ |  | 3 (1+) | `-1` | Kafka 4.1 |" in rendered
