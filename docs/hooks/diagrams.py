"""The diagrams of the spec pages, drawn as inline SVG when the site is built, from the
project itself, so they cannot go stale:

* ``partition-directory``: the files the reference implementation writes for a small log
  (three producers, an aborted transaction, two leader epochs, a clean close), listed from
  the directory it wrote during the build;
* ``offset-index-lookup``: a lookup in that log's first segment, as the reference's
  ``translate_offset`` does it (INDEX-18, INDEX-20): its real index entries and batches;
* ``roll-decision``: the conditions of Table 1 of spec/behaviour/roll.md, read from its rows
  (:func:`roll_conditions`);
* ``append-path``: the steps of the table of spec/behaviour/append.md §1, read from its rows,
  with APPEND-1's "checks of steps N to M";
* ``recovery-flow``: a load, clean and unclean, by the sections of spec/behaviour/recovery.md
  and the rules they hold, and an unclean load of a damaged copy of the example log by the
  reference loader, segment by segment, from its load events;
* ``compaction-pass``: one pass of the reference cleaner, before and after
  (compaction_diagram.py).

A page asks for one with a line ``<!-- klogspec:diagram NAME -->``. Every rule ID a diagram
shows links to its anchor, so the strict build and the link test check them.
"""

from __future__ import annotations

import functools
import html
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import compaction_diagram
from svg import FILLS, FONT, LINE, SMALL, Svg, runs, text_width, wrap

MARKER = re.compile(r"^<!-- klogspec:diagram (?P<name>[\w-]+) -->[ \t]*$", re.M)
ID_RE = re.compile(r"[A-Z]+(?:-[A-Z])?-\d+")

# --- links --------------------------------------------------------------------------------


@dataclass
class Links:
    """How a diagram on one page links elsewhere: ``href(src_uri, anchor)`` is the URL of a
    page (``spec/formats/log-file.md``) and anchor, relative to the page drawn on."""

    href: Callable[[str, str], str]
    rule_pages: dict[str, str]  # requirement ID -> src_uri of its page
    page_markdown: str = ""  # the markdown of the page drawn on

    def rule(self, rid: str) -> str:
        return self.href(self.rule_pages[rid], rid)


def rule_links(text: str, links: Links) -> str:
    """``APPEND-5 to APPEND-8`` as inline markdown whose IDs link to their anchors."""
    return ID_RE.sub(
        lambda m: (
            f"[{m.group(0)}]({links.rule(m.group(0))})"
            if m.group(0) in links.rule_pages
            else m.group(0)
        ),
        text,
    )


# --- reading the spec's tables ----------------------------------------------------------------


def table_rows(markdown: str, after: str) -> list[list[str]]:
    """The body rows (cells stripped) of the first table after the first line that matches
    the regex ``after``."""
    lines = markdown.splitlines()
    start = next((i for i, line in enumerate(lines) if re.search(after, line)), None)
    if start is None:
        raise ValueError(f"no line matches {after!r}")
    rows: list[list[str]] = []
    in_table = False
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            if in_table:
                rows.append(cells)
            in_table = True  # the first row is the header
        elif in_table:
            break
    return rows


@dataclass(frozen=True)
class RollCondition:
    number: str
    condition: str  # inline markdown
    rules: str  # "ROLL-3, ROLL-4"


def roll_conditions(repo: Path) -> list[RollCondition]:
    """The roll conditions, one per row of Table 1 of spec/behaviour/roll.md. The roll
    diagram reads them here and nowhere else: point this function at another source (a data
    table in code, say) if the conditions move."""
    text = (repo / "spec" / "behaviour" / "roll.md").read_text(encoding="utf-8")
    return [RollCondition(*row[:3]) for row in table_rows(text, r"^Table 1:")]


@dataclass(frozen=True)
class AppendStep:
    number: int
    what: str
    rules: str


def append_steps(repo: Path) -> list[AppendStep]:
    """The steps of an append, one per row of the table of spec/behaviour/append.md §1."""
    text = (repo / "spec" / "behaviour" / "append.md").read_text(encoding="utf-8")
    return [AppendStep(int(r[0]), r[1], r[2]) for r in table_rows(text, r"^## 1\. Order")]


def checked_steps(rule_text: str) -> tuple[int, int]:
    """APPEND-1's "every check of steps 1 to 6": the steps that only check."""
    m = re.search(r"steps (\d+) to (\d+)", rule_text)
    if m is None:
        raise ValueError(f"APPEND-1 names no range of steps: {rule_text!r}")
    return int(m.group(1)), int(m.group(2))


# --- the example log, written by the reference implementation ----------------------------------

T0 = 1_700_000_000_000
TOPIC_ID = "3VNQK2cXRqeWkFJ2XN1_6A"
PARTITION = "orders-0"


@dataclass
class FileInfo:
    name: str
    size: int


@dataclass
class LookupExample:
    base_offset: int
    entries: list[tuple[int, int]]  # (offset, position) of the offset index
    batches: list[tuple[int, int, int, int]]  # (base offset, last offset, position, size)
    target: int
    floor: tuple[int, int]  # the entry the lookup found (or (base, 0))
    found_position: int


@dataclass
class SegmentOutcome:
    base_offset: int
    size: int
    outcome: str  # "not read", "read", "truncated", "deleted"
    kept: int  # bytes left
    error: str | None = None


@dataclass
class RecoveryExample:
    recovery_point: int
    damaged: tuple[int, int]  # (segment base offset, position of the flipped byte)
    segments: list[SegmentOutcome]
    recovery_point_after: int
    log_end_offset_after: int


@dataclass
class ExampleLog:
    appends: int
    root_files: list[FileInfo] = field(default_factory=list)
    partition_files: list[FileInfo] = field(default_factory=list)
    config: dict = field(default_factory=dict)
    lookup: LookupExample | None = None
    recovery: RecoveryExample | None = None


def _write_log(partition: Path):
    """A small log: four segments, three producers (plain, idempotent, transactional with an
    ABORT), leader epochs 0 and 1, then a clean close. Returns (config, number of appends)."""
    from reference_impl import Log, LogConfig, ManualClock
    from reference_impl.log.log_validator import AppendOrigin
    from reference_impl.records import (
        ControlRecordType,
        SimpleRecord,
        build_control_batch,
        build_record_batch,
    )

    config = LogConfig(segment_bytes=900, index_interval_bytes=150)
    clock = ManualClock(T0)
    log = Log.open(partition, config, clock, topic_id=TOPIC_ID)
    sequence = 0
    appends = 30

    def records(n: int, first: int) -> list:
        return [
            SimpleRecord(
                key=f"user-{(first + i) % 4}".encode(),
                value=f"order {first + i}".encode(),
                timestamp=clock.milliseconds(),
            )
            for i in range(n)
        ]

    for i in range(appends):
        clock.sleep(1000)
        epoch = 0 if i < 12 else 1
        origin = AppendOrigin.CLIENT
        if i == 14:  # a transaction of producer 5000 ...
            batch = build_record_batch(
                records(2, i),
                producer_id=5000,
                producer_epoch=0,
                base_sequence=0,
                is_transactional=True,
            )
        elif i == 16:  # ... that its coordinator aborts
            batch = build_control_batch(
                ControlRecordType.ABORT,
                producer_id=5000,
                producer_epoch=0,
                timestamp=clock.milliseconds(),
            )
            origin = AppendOrigin.COORDINATOR
        elif i % 3 == 1:  # an idempotent producer
            batch = build_record_batch(
                records(2, i), producer_id=4000, producer_epoch=0, base_sequence=sequence
            )
            sequence += 2
        else:
            batch = build_record_batch(records(3, i))
        log.append_as_leader(batch, leader_epoch=epoch, origin=origin)
    log.close()
    return config, appends


def _listing(folder: Path) -> list[FileInfo]:
    return [FileInfo(p.name, p.stat().st_size) for p in sorted(folder.iterdir()) if p.is_file()]


def _lookup(partition: Path, config) -> LookupExample:
    """A lookup in the first segment whose answer needs a forward scan past one batch."""
    from reference_impl import Log, ManualClock

    log = Log.open(partition, config, ManualClock(T0 + 100_000))
    try:
        segment = log.log_segments()[0]
        index = segment.offset_index
        entries = [(e.offset, e.position) for e in (index.entry(n) for n in range(index.entries))]
        batches = [
            (b.base_offset, b.last_offset, b.position, b.size_in_bytes)
            for b in segment.log.batches()
        ]
        positions = [p for _, p in entries]
        target = None
        for i, (_, position) in enumerate(entries):
            end = positions[i + 1] if i + 1 < len(positions) else None
            run = [b for b in batches if b[2] >= position and (end is None or b[2] < end)]
            if len(run) >= 2:
                target = run[1][0] + (1 if run[1][1] > run[1][0] else 0)
                break
        if target is None:
            raise RuntimeError("the example's first segment has no index entry with a scan")
        floor = index.lookup(target)
        found = segment.translate_offset(target)
        return LookupExample(
            segment.base_offset,
            entries,
            batches,
            target,
            (floor.offset, floor.position),
            found.position,
        )
    finally:
        log.close()


def _recovery(partition: Path, config) -> RecoveryExample:
    """An unclean load of a copy of the example whose third segment has one byte flipped,
    with the recovery point inside the second segment."""
    from reference_impl import LoadOptions, Log, ManualClock
    from reference_impl.log.load_events import LoadObserver
    from reference_impl.records import iter_file_batches

    logs = sorted(partition.glob("*.log"))
    bases = [int(p.stem) for p in logs]
    sizes = {int(p.stem): p.stat().st_size for p in logs}
    damaged = logs[2]
    with damaged.open("rb") as f:
        third = list(iter_file_batches(f))[2]
    flip = third.position + third.size_in_bytes - 1  # in the records: the CRC no longer matches
    data = bytearray(damaged.read_bytes())
    data[flip] ^= 0xFF
    damaged.write_bytes(bytes(data))
    recovery_point = bases[1] + 1
    observer = LoadObserver()
    load = LoadOptions(had_clean_shutdown=False, recovery_point=recovery_point, observer=observer)
    log = Log.open(partition, config, ManualClock(T0 + 200_000), load=load)
    try:
        after = (log.recovery_point, log.log_end_offset)
    finally:
        log.close()
    outcomes = {b: SegmentOutcome(b, sizes[b], "not read", sizes[b]) for b in bases}
    for event in observer.events:
        if event.file.suffix != ".log" or not event.file.stem.isdigit():
            continue
        o = outcomes.get(int(event.file.stem))
        if o is None:
            continue
        if event.action == "recover" and o.outcome == "not read":
            o.outcome = "read"
        elif event.action == "truncate":
            o.outcome, o.kept, o.error = "truncated", event.position, event.error
        elif event.action == "delete":
            o.outcome, o.kept = "deleted", 0
    return RecoveryExample(
        recovery_point, (int(damaged.stem), flip), [outcomes[b] for b in bases], *after
    )


@functools.cache
def example_log() -> ExampleLog:
    """Write the example with the reference implementation (once per build) and keep what
    the diagrams need of it."""
    tmp = Path(tempfile.mkdtemp(prefix="klogspec-site-"))
    try:
        partition = tmp / "data" / PARTITION
        config, appends = _write_log(partition)
        example = ExampleLog(appends)
        example.root_files = _listing(partition.parent)
        example.partition_files = _listing(partition)
        example.config = {
            "segment_bytes": config.segment_bytes,
            "index_interval_bytes": config.index_interval_bytes,
        }
        damaged_copy = tmp / "copy" / PARTITION
        shutil.copytree(partition, damaged_copy)
        example.lookup = _lookup(partition, config)
        example.recovery = _recovery(damaged_copy, config)
        return example
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- drawing ------------------------------------------------------------------------------------

WIDTH = 680  # every diagram's viewBox width, px

FORMAT_PAGES = {
    "log": ("spec/formats/log-file.md", "record batches"),
    "index": ("spec/formats/offset-index.md", "offset → position"),
    "timeindex": ("spec/formats/time-index.md", "time → offset"),
    "txnindex": ("spec/formats/transaction-index.md", "aborted txns"),
    "snapshot": ("spec/formats/producer-snapshot.md", "producer state"),
}
CHECKPOINT_PAGE = "spec/formats/checkpoint-files.md"


def _bytes(n: int) -> str:
    return f"{n:,} B"


def _box(
    svg: Svg,
    x: float,
    y: float,
    w: float,
    text: str,
    fill: str,
    rules: str = "",
    links: Links | None = None,
    *,
    dashed: bool = False,
) -> float:
    """A box with wrapped text (inline markdown) and a line of rule links; returns its
    height."""
    text_h = len(wrap(text, w - 20, FONT)) * FONT * LINE
    h = text_h + (SMALL * LINE + 2 if rules else 0) + 12
    svg.rect(x, y, w, h, fill, dashed=dashed)
    svg.text(x + 10, y + 18, text, width=w - 20, cls="klog-text klog-on-fill")
    if rules and links is not None:
        svg.text(
            x + 10,
            y + 16 + text_h,
            rule_links(rules, links),
            size=SMALL,
            cls="klog-text klog-on-fill",
        )
    return h


def _down(svg: Svg, x: float, y_from: float, y_to: float, label: str = "") -> None:
    svg.line([(x, y_from), (x, y_to - 2)])
    if label:
        svg.text(x + 8, (y_from + y_to) / 2 + 4, label, size=SMALL, cls="klog-text klog-muted")


def _chip(svg: Svg, x: float, y: float, name: str, size: int, href: str, fill: str) -> float:
    """A file as a labelled box linking to its format; returns its width."""
    w = text_width(f"{name}  {_bytes(size)}", SMALL, mono=True) + 16
    svg.open_link(href, f"{name}: {size} bytes")
    svg.rect(x, y, w, 22, fill, rx=4)
    svg.text(x + 8, y + 15, f"`{name}`  {_bytes(size)}", size=SMALL, cls="klog-text klog-on-fill")
    svg.close_link()
    return w


def partition_directory(links: Links) -> tuple[str, str]:
    example = example_log()
    files = {f.name: f.size for f in example.partition_files}
    pad = 14
    svg = Svg("fig-partition-directory", WIDTH, "The files of a partition directory")
    svg.rect(4, 4, WIDTH - 8, 1, cls="klog-frame")  # its height is set at the end
    outer = len(svg.parts) - 1
    y = 10.0
    svg.text(pad + 4, y + 16, "log directory (one of `log.dirs`)", bold=True)
    y += 30
    x = pad + 4
    checkpoints = links.href(CHECKPOINT_PAGE, "")
    for f in example.root_files:
        w = text_width(f"{f.name}  {_bytes(f.size)}", SMALL, mono=True) + 16
        if x + w > WIDTH - pad:
            x, y = pad + 4, y + 28
        x += _chip(svg, x, y, f.name, f.size, checkpoints, FILLS["checkpoint"]) + 8
    y += 36
    inner_x, inner_w = pad + 4, WIDTH - 2 * pad - 8
    part_top = y
    svg.rect(inner_x, y, inner_w, 1, cls="klog-frame")
    inner = len(svg.parts) - 1
    svg.text(
        inner_x + 10,
        y + 18,
        f"`{PARTITION}/`: the partition directory of topic `orders`, partition 0",
        bold=True,
    )
    y += 30
    x = inner_x + 10
    for name in ("leader-epoch-checkpoint", "partition.metadata"):
        if name in files:
            x += _chip(svg, x, y, name, files[name], checkpoints, FILLS["checkpoint"]) + 8
    y += 40
    # the segments: a row per offset some file is named after, a column per suffix
    label_w, col_w = 168, 94
    x0 = inner_x + 10
    svg.text(x0, y, "base offset", size=SMALL, bold=True)
    svg.text(x0, y + 13, "(the file names' 20 digits)", size=10, cls="klog-text klog-muted")
    for i, (suffix, (page, what)) in enumerate(FORMAT_PAGES.items()):
        cx = x0 + label_w + i * col_w
        svg.text(cx, y, f"[`.{suffix}`]({links.href(page, '')})", size=SMALL, bold=True)
        svg.text(cx, y + 13, what, size=10, cls="klog-text klog-muted")
    y += 24
    offsets = sorted({int(n.split(".")[0]) for n in files if n.split(".")[0].isdigit()})
    active = max(o for o in offsets if f"{o:020d}.log" in files)
    for offset in offsets:
        stem = f"{offset:020d}"
        svg.text(x0, y + 15, f"`{stem}`", size=SMALL)
        for i, suffix in enumerate(FORMAT_PAGES):
            cx = x0 + label_w + i * col_w
            name = f"{stem}.{suffix}"
            if name in files:
                svg.open_link(
                    links.href(FORMAT_PAGES[suffix][0], ""), f"{name}: {files[name]} bytes"
                )
                svg.rect(cx, y + 1, col_w - 12, 20, FILLS[suffix], rx=4)
                svg.text(
                    cx + 6, y + 15, _bytes(files[name]), size=SMALL, cls="klog-text klog-on-fill"
                )
                svg.close_link()
            else:
                svg.text(cx + 6, y + 15, "–", size=SMALL, cls="klog-text klog-muted")
        note = ""
        if offset == active:
            note = "the active segment"
        elif f"{stem}.log" not in files:
            note = "no segment: the snapshot at the log end offset"
        if note:
            svg.text(x0, y + 29, note, size=10, cls="klog-text klog-muted")
            y += 12
        y += 26
    y += 6
    svg.parts[inner] = svg.parts[inner].replace('height="1.0"', f'height="{y - part_top:.1f}"')
    y += 10
    svg.parts[outer] = svg.parts[outer].replace('height="1.0"', f'height="{y - 4:.1f}"')
    caption = (
        f"The files of a log that the reference implementation wrote when this site was "
        f"built: {example.appends} appends from three producers (one idempotent, one "
        f"transactional whose transaction was aborted) in leader epochs 0 and 1, with "
        f"`segment_bytes` {example.config['segment_bytes']} and `index_interval_bytes` "
        f"{example.config['index_interval_bytes']}, then a clean close. Sizes in bytes; each "
        "file links to its format."
    )
    return svg.render(y + 4, "fig-partition-directory-caption"), caption


def offset_index_lookup(links: Links) -> tuple[str, str]:
    example = example_log()
    ex = example.lookup
    assert ex is not None
    svg = Svg("fig-offset-index-lookup", WIDTH, f"Looking up offset {ex.target} in an offset index")
    row_h, top = 30, 78
    left_x, left_w = 16, 210
    right_x, right_w = 372, 250
    entry_at = {p: o for o, p in ex.entries}
    first = next(i for i, b in enumerate(ex.batches) if b[2] == ex.floor[1])
    found = next(i for i, b in enumerate(ex.batches) if b[2] == ex.found_position)
    svg.rect(left_x, 8, WIDTH - 32, 34, FILLS["decision"])
    svg.text(
        left_x + 10,
        30,
        f"find offset **{ex.target}** in the segment with base offset {ex.base_offset}",
        cls="klog-text klog-on-fill",
    )
    svg.text(
        WIDTH - 26,
        30,
        rule_links("INDEX-18, INDEX-20", links),
        size=SMALL,
        anchor="end",
        cls="klog-text klog-on-fill",
    )
    svg.text(left_x, top - 12, "`.index`: sparse entries", bold=True, size=SMALL)
    svg.text(right_x, top - 12, "`.log`: every batch", bold=True, size=SMALL)
    for i, (base, last, position, _size) in enumerate(ex.batches):
        y = top + i * row_h
        fill = (
            FILLS["good"]
            if i == found
            else (FILLS["step"] if first <= i < found else FILLS["quiet"])
        )
        svg.rect(right_x, y, right_w, row_h - 6, fill, rx=4)
        offsets = f"offsets {base}–{last}" if last > base else f"offset {base}"
        svg.text(
            right_x + 8,
            y + 17,
            f"{offsets} at position {position}",
            size=SMALL,
            cls="klog-text klog-on-fill",
        )
        if position in entry_at:
            offset = entry_at[position]
            hit = (offset, position) == ex.floor
            above = offset > ex.target
            fill = FILLS["accent"] if hit else (FILLS["quiet"] if above else FILLS["index"])
            svg.rect(left_x, y, left_w, row_h - 6, fill, dashed=above, rx=4)
            label = f"offset {offset} → position {position}" + ("  (> target)" if above else "")
            svg.text(left_x + 8, y + 17, label, size=SMALL, cls="klog-text klog-on-fill")
            svg.line(
                [(left_x + left_w + 2, y + 12), (right_x - 4, y + 12)],
                cls="klog-edge klog-strong" if hit else "klog-edge klog-faint",
                dashed=not hit,
            )
        elif i == 0 and ex.floor == (ex.base_offset, 0):
            svg.rect(left_x, y, left_w, row_h - 6, FILLS["accent"], dashed=True, rx=4)
            svg.text(
                left_x + 8,
                y + 17,
                f"none ≤ {ex.target}: ({ex.base_offset}, 0)",
                size=SMALL,
                cls="klog-text klog-on-fill",
            )
            svg.line(
                [(left_x + left_w + 2, y + 12), (right_x - 4, y + 12)], cls="klog-edge klog-strong"
            )
    # the forward scan: a bracket down the right side, from the floor's batch to the answer
    sx = right_x + right_w + 14
    y1, y2 = top + first * row_h + 12, top + found * row_h + 12
    if found > first:
        svg.line(
            [(right_x + right_w + 2, y1), (sx, y1), (sx, y2), (right_x + right_w + 4, y2)],
            cls="klog-edge klog-strong",
        )
        svg.text(sx + 6, (y1 + y2) / 2 + 4, "scan", size=SMALL, cls="klog-text klog-muted")
    svg.text(
        right_x + right_w - 10, y2 + 5, "✔", size=FONT, anchor="end", cls="klog-text klog-on-fill"
    )
    y = top + len(ex.batches) * row_h + 10
    batch = ex.batches[found]
    steps = [
        f"① A binary search of the index finds the greatest entry whose offset is at most {ex.target}: "
        + (
            f"({ex.floor[0]}, {ex.floor[1]})."
            if ex.floor != (ex.base_offset, 0) or ex.floor in ex.entries
            else f"none, so the segment's start ({ex.base_offset}, 0)."
        ),
        f"② The read starts at position {ex.floor[1]} of the `.log` and skips each batch whose last offset is below {ex.target}.",
        f"③ The first batch whose last offset is at least {ex.target} holds it: offsets {batch[0]}–{batch[1]}, at position {batch[2]}.",
    ]
    for step in steps:
        y += svg.text(left_x, y + 10, step, width=WIDTH - 40, size=SMALL) + 4
    caption = (
        "A lookup in the first segment of the example log of "
        f"[Partition directory]({links.href('spec/formats/partition-directory.md', 'figure-partition-directory')}), "
        "by the reference implementation's `translate_offset` when this site was built. An "
        "append adds an index entry (the largest offset of the set, and its position) only "
        f"after more than `index_interval_bytes` ({example.config['index_interval_bytes']}) "
        "bytes since the last one, so most batches have none."
    )
    return svg.render(y + 6, "fig-offset-index-lookup-caption"), caption


@dataclass
class Column:
    """Boxes stacked down a column, each joined to the one above by an arrow."""

    svg: Svg
    x: float
    w: float
    links: Links
    y: float = 10.0
    gap: float = 22
    boxes: int = 0

    @property
    def mid(self) -> float:
        return self.x + self.w / 2

    def row(self, items: list[tuple[str, str, str]], *, label: str = "", arrow: bool = True):
        """Boxes (text, fill, rules) side by side below the last; (top, height)."""
        if self.boxes and arrow:
            _down(self.svg, self.mid, self.y - self.gap, self.y, label)
        inner = 12
        w = (self.w - inner * (len(items) - 1)) / len(items)
        heights = [
            _box(self.svg, self.x + i * (w + inner), self.y, w, text, fill, rules, self.links)
            for i, (text, fill, rules) in enumerate(items)
        ]
        top, h = self.y, max(heights)
        self.y += h + self.gap
        self.boxes += 1
        return top, h

    def box(self, text: str, fill: str, rules: str = "", **kw):
        return self.row([(text, fill, rules)], **kw)


def _panel(svg: Svg, x, top, w, h, fill, title, notes, links: Links) -> None:
    """A box of height ``h`` with a bold title and notes, each (text, rules)."""
    svg.rect(x, top, w, h, fill)
    y = top + 22
    y += svg.text(x + 12, y, title, bold=True, cls="klog-text klog-on-fill") + 4
    for text, rules in notes:
        on = "klog-text klog-on-fill"
        y += svg.text(x + 12, y, text, width=w - 24, size=SMALL, cls=on)
        y += svg.text(x + 12, y, rule_links(rules, links), size=SMALL, cls=on) + 8


def roll_decision(repo: Path, links: Links) -> tuple[str, str]:
    conditions = roll_conditions(repo)
    roll_step = next(s.number for s in append_steps(repo) if "ROLL-1" in s.rules)
    svg = Svg("fig-roll-decision", WIDTH, "When an append rolls")
    col = Column(svg, 16, 390, links, gap=26)
    roll_x, roll_w = 470, 194
    col.box(f"a set of batches that passed steps 1 to {roll_step - 1} of an append", FILLS["step"])
    boxes = []
    for i, c in enumerate(conditions):
        top, h = col.box(
            f"{c.number}. {c.condition}?", FILLS["decision"], c.rules, label="no" if i else ""
        )
        boxes.append((top, h))
        svg.line([(col.x + col.w + 2, top + h / 2), (roll_x - 4, top + h / 2)])
        svg.text(col.x + col.w + 12, top + h / 2 - 6, "yes", size=SMALL, cls="klog-text klog-muted")
    write_y, write_h = col.box(
        "write the set at the end of the active segment", FILLS["good"], "APPEND-22", label="no"
    )
    top, bottom = boxes[0][0], boxes[-1][0] + boxes[-1][1]
    _panel(
        svg,
        roll_x,
        top,
        roll_w,
        bottom - top,
        FILLS["accent"],
        "roll first",
        (
            ("any one condition is enough", "ROLL-1"),
            ("the new segment's base offset is `max(roll_offset, LEO)`", "ROLL-11"),
            ("the old segment gets its last time-index entry and is trimmed", "ROLL-17, ROLL-18"),
            ("a new empty `.log` becomes the active segment", "ROLL-19"),
        ),
        links,
    )
    mid, into = roll_x + roll_w / 2, write_y + write_h / 2
    svg.line([(mid, bottom + 2), (mid, into), (col.x + col.w + 4, into)])
    svg.text(mid + 8, bottom + 18, "then", size=SMALL, cls="klog-text klog-muted")
    caption = (
        "The roll decision, drawn from the rows of Table 1 when this site was built: the "
        "conditions are checked against the active segment before a byte is written."
    )
    return svg.render(write_y + write_h + 8, "fig-roll-decision-caption"), caption


def append_path(repo: Path, links: Links, rule_text: str) -> tuple[str, str]:
    first_check, last_check = checked_steps(rule_text)
    svg = Svg("fig-append-path", WIDTH, "The steps of an append")
    col = Column(svg, 24, 450, links)
    col.box(
        "`append_as_leader(records, leader_epoch)` or `append_as_follower(records)`", FILLS["step"]
    )
    by_number: dict[int, list[AppendStep]] = {}
    for s in append_steps(repo):
        by_number.setdefault(s.number, []).append(s)
    frame_top = frame_bottom = None
    for number, parallel in sorted(by_number.items()):
        checking = first_check <= number <= last_check
        fill = FILLS["check"] if checking else FILLS["good"]
        top, h = col.row([(f"{s.number}. {s.what}", fill, s.rules) for s in parallel])
        if checking:
            frame_top = top - 10 if frame_top is None else frame_top
            frame_bottom = top + h + 10
    if frame_top is not None and frame_bottom is not None:
        svg.rect(
            col.x - 10,
            frame_top,
            col.w + 20,
            frame_bottom - frame_top,
            None,
            cls="klog-frame",
            dashed=True,
        )
        mid, side_x = (frame_top + frame_bottom) / 2, 530
        svg.line([(col.x + col.w + 12, mid), (side_x - 4, mid)])
        _panel(
            svg,
            side_x,
            mid - 50,
            134,
            100,
            FILLS["bad"],
            "refused",
            (("with an error code; nothing has changed", "APPEND-1"),),
            links,
        )
    caption = (
        "The steps of an append, drawn from the rows of the table above when this site was "
        f"built. Steps {first_check} to {last_check} (in the dashed frame) only check, so a "
        "refused append changes nothing (APPEND-1); a step with two boxes differs between a "
        "leader and a follower."
    )
    return svg.render(col.y - col.gap + 8, "fig-append-path-caption"), caption


def _section(links: Links, number: int) -> str:
    """``[§N Name](#anchor)`` for section ``number`` of the page drawn on."""
    import spec_pages

    for h in spec_pages.headings(links.page_markdown):
        if h.level == 2 and h.number == str(number):
            return f"[§{number} {h.name}](#{h.slug})"
    raise ValueError(f"the page has no section {number}")


def recovery_flow(links: Links) -> tuple[str, str]:
    svg = Svg("fig-recovery-flow", WIDTH, "Loading a log, after a clean or an unclean shutdown")
    main = Column(svg, 16, WIDTH - 32, links)
    step = FILLS["step"]
    main.box(
        f"{_section(links, 1)}: is `.kafka_cleanshutdown` at the log directory's root? Note it, then delete it",
        step,
        "LOAD-1, LOAD-2",
    )
    main.box(
        f"{_section(links, 2)}: delete `.deleted` and `.cleaned` files; finish the replacements `.swap` files show",
        step,
        "LOAD-6 to LOAD-10",
    )
    main.box(
        f"{_section(links, 3)}: open every `.log` as a segment, delete orphan indexes, recover a segment without an `.index` or with a bad `.txnindex`",
        step,
        "LOAD-11 to LOAD-15",
    )
    # two lanes: clean on the left, unclean on the right (narrower: edges pass beside it)
    lane_w = (main.w - 24) / 2
    split, start = main.y - main.gap, main.y + 18
    clean = Column(svg, main.x, lane_w, links, y=start)
    unclean = Column(svg, main.x + lane_w + 24 + 14, lane_w - 28, links, y=start)
    for lane, label in ((clean, "clean: the marker was there"), (unclean, "unclean: it was not")):
        svg.line(
            [
                (main.mid, split),
                (main.mid, split + 12),
                (lane.mid, split + 12),
                (lane.mid, start - 2),
            ]
        )
        svg.text(lane.mid + 8, split + 30, label, size=SMALL, cls="klog-text klog-muted")
    clean.box("trust every segment: no `.log` loses a byte", FILLS["good"], "LOAD-17")
    clean.box("recovery point = the log end offset", FILLS["good"], "RECOV-8")
    unclean.box(
        f"{_section(links, 4)}: start at the segment holding the recovery point of `recovery-point-offset-checkpoint`",
        step,
        "RECOV-1, LOAD-4",
    )
    read_y, read_h = unclean.box(
        "read its `.log` batch by batch; check each size and CRC", FILLS["decision"], "RECOV-2"
    )
    unclean.y += 4
    valid_y, valid_h = unclean.box(
        "rebuild its indexes; go on with the next segment",
        FILLS["good"],
        "RECOV-4",
        label="all valid",
    )
    unclean.y += 8
    fail_y, _ = unclean.box(
        "truncate the `.log` after the last valid batch; rebuild its indexes",
        FILLS["bad"],
        "RECOV-3, RECOV-4",
        arrow=False,
    )
    unclean.box("delete every later segment, unread", FILLS["bad"], "RECOV-5")
    end_y, end_h = unclean.box(
        "recovery point = min(checkpoint, log end offset)", FILLS["good"], "RECOV-9"
    )
    # next segment: back up on the right; none left: down on the right; a batch fails: the left
    edge, x = unclean.x + unclean.w, unclean.x
    svg.line(
        [
            (edge + 2, valid_y + 14),
            (edge + 8, valid_y + 14),
            (edge + 8, read_y + 14),
            (edge + 4, read_y + 14),
        ]
    )
    svg.line(
        [
            (edge + 2, valid_y + valid_h - 10),
            (edge + 16, valid_y + valid_h - 10),
            (edge + 16, end_y + end_h / 2),
            (edge + 4, end_y + end_h / 2),
        ]
    )
    svg.text(
        edge - 4,
        valid_y + valid_h + 14,
        "no segment left",
        size=10,
        anchor="end",
        cls="klog-text klog-muted",
    )
    svg.line(
        [
            (x - 2, read_y + read_h - 10),
            (x - 10, read_y + read_h - 10),
            (x - 10, fail_y + 14),
            (x - 4, fail_y + 14),
        ]
    )
    svg.text(x + 4, fail_y - 6, "a batch fails", size=10, cls="klog-text klog-muted")
    main.y = max(clean.y, unclean.y) + 14
    join = main.y - 12
    svg.line(
        [
            (clean.mid, clean.y - clean.gap + 2),
            (clean.mid, join),
            (main.mid, join),
            (main.mid, main.y - 2),
        ]
    )
    svg.line(
        [(unclean.mid, unclean.y - unclean.gap + 2), (unclean.mid, join), (main.mid, join)],
        arrow=False,
    )
    main.box(
        f"{_section(links, 5)}: the log start offset, the log end offset and the leader epochs; then the producer state",
        step,
        "LOAD-18 to LOAD-24, SNAP-B-2",
        arrow=False,
    )
    caption = (
        "A load, by the sections of this page and the rules in them: after a clean shutdown "
        "the files are trusted; after a crash the segments from the recovery point on are read "
        "again, and the first damage ends the log."
    )
    return svg.render(main.y - main.gap + 8, "fig-recovery-flow-caption"), caption


OUTCOMES = {
    "not read": ("not read: below the recovery point", FILLS["quiet"], "RECOV-1"),
    "read": ("read: every batch valid; indexes rebuilt", FILLS["good"], "RECOV-2, RECOV-4"),
    "truncated": ("truncated after its last valid batch", FILLS["bad"], "RECOV-3"),
    "deleted": ("deleted, unread", FILLS["bad"], "RECOV-5"),
}


def recovery_example(links: Links) -> tuple[str, str]:
    ex = example_log().recovery
    assert ex is not None
    svg = Svg("fig-recovery-example", WIDTH, "An unclean load of a damaged log, segment by segment")
    bar_x, bar_w = 176, 200
    text_x = bar_x + bar_w + 16
    biggest = max(s.size for s in ex.segments)
    holder = max(
        (s.base_offset for s in ex.segments if s.base_offset <= ex.recovery_point), default=None
    )
    y = 16.0
    svg.text(16, y, "segment (base offset)", size=SMALL, bold=True)
    svg.text(bar_x, y, "its `.log`: kept, removed", size=SMALL, bold=True)
    svg.text(text_x, y, "what the load did", size=SMALL, bold=True)
    y += 10
    for s in ex.segments:
        svg.text(16, y + 19, f"`{s.base_offset:020d}`", size=SMALL)
        if s.base_offset == holder:
            svg.text(
                16,
                y + 33,
                f"holds the recovery point, {ex.recovery_point}",
                size=10,
                cls="klog-text klog-muted",
            )
        if s.base_offset == ex.damaged[0]:
            svg.text(
                16,
                y + 33,
                f"one byte flipped at position {ex.damaged[1]}",
                size=10,
                cls="klog-text klog-muted",
            )
        w, kept_w = bar_w * s.size / biggest, bar_w * s.kept / biggest
        if kept_w > 0:
            svg.rect(bar_x, y + 6, kept_w, 22, FILLS["log"], rx=3, tip=f"{s.kept} bytes kept")
        if w - kept_w > 0.5:
            svg.rect(
                bar_x + kept_w,
                y + 6,
                w - kept_w,
                22,
                FILLS["bad"],
                dashed=True,
                rx=3,
                tip=f"{s.size - s.kept} bytes removed",
            )
        text, _fill, rules = OUTCOMES[s.outcome]
        if s.outcome == "truncated":
            why = (s.error or "damage").replace("_", " ")
            text += f" (position {s.kept}): {s.size - s.kept} bytes removed, {why}"
        h = svg.text(text_x, y + 14, text, width=WIDTH - text_x - 12, size=SMALL)
        svg.text(text_x, y + 14 + h, rule_links(rules, links), size=10)
        y += max(42, h + 26)
    y += 4
    y += svg.text(
        16,
        y + 10,
        f"Loaded as after an unclean shutdown with the recovery point {ex.recovery_point}; afterwards the recovery point is {ex.recovery_point_after} and the log end offset {ex.log_end_offset_after}.",
        width=WIDTH - 32,
        size=SMALL,
    )
    caption = (
        "The reference loader on a damaged copy of the example log of "
        f"[Partition directory]({links.href('spec/formats/partition-directory.md', 'figure-partition-directory')}) "
        "when this site was built: each segment's outcome comes from the events the load "
        "reported, its bar from the file's size before and after."
    )
    return svg.render(y + 8, "fig-recovery-example-caption"), caption


# --- on a page ------------------------------------------------------------------------------


def figure(name: str, svg_html: str, caption: str) -> str:
    """The HTML of a figure: the SVG, scrolling sideways on a narrow screen, and its caption
    (inline markdown: code spans)."""
    cap = _caption_html(caption)
    return (
        f'<figure class="klog-figure" id="figure-{name}">'
        f'<div class="klog-diagram klog-scroll-x">{svg_html}</div>'
        f'<figcaption id="fig-{name}-caption">{cap}</figcaption></figure>'
    )


def _caption_html(caption: str) -> str:
    """Inline markdown (code spans, links) to HTML."""
    out = []
    for r in runs(caption):
        body = f"<code>{html.escape(r.text)}</code>" if r.code else html.escape(r.text)
        out.append(f'<a href="{html.escape(r.href)}">{body}</a>' if r.href else body)
    return "".join(out)


def render(name: str, repo: Path, links: Links, rules: dict[str, str]) -> str:
    """The figure ``name`` (see the module's docstring)."""
    makers: dict[str, Callable[[], tuple[str, str]]] = {
        "partition-directory": lambda: partition_directory(links),
        "offset-index-lookup": lambda: offset_index_lookup(links),
        "roll-decision": lambda: roll_decision(repo, links),
        "append-path": lambda: append_path(repo, links, rules["APPEND-1"]),
        "recovery-flow": lambda: recovery_flow(links),
        "recovery-example": lambda: recovery_example(links),
        "compaction-pass": lambda: compaction_diagram.compaction_pass(links),
    }
    if name not in makers:
        raise ValueError(f"no diagram named {name!r} (known: {', '.join(makers)})")
    svg_html, caption = makers[name]()
    return figure(name, svg_html, caption)


NAMES = (
    "partition-directory",
    "offset-index-lookup",
    "roll-decision",
    "append-path",
    "recovery-flow",
    "recovery-example",
    "compaction-pass",
)


def replace_markers(markdown: str, repo: Path, links: Links, rules: dict[str, str]) -> str:
    """Every ``<!-- klogspec:diagram NAME -->`` line of a page becomes its figure."""
    return MARKER.sub(lambda m: "\n" + render(m.group("name"), repo, links, rules) + "\n", markdown)
