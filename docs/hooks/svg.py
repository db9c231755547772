"""A small SVG writer for the diagrams of the site (diagrams.py): boxes, text that wraps
(with code spans in monospace), arrows and links. Styles live in docs/stylesheets/extra.css
(``.klog-fig``), so the diagrams follow the light and dark palettes."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

FONT = 13  # px, the body text of a diagram
SMALL = 11
# average advance widths (em) of the fonts Chromium picks for sans-serif and monospace;
# generous, so text fits whatever the reader's fonts
SANS_EM = 0.58
MONO_EM = 0.61
LINE = 1.35  # line height, in font sizes

# fills of boxes (text on them is dark in both palettes)
FILLS = {
    "log": "#8ecae6",
    "index": "#ffb703",
    "timeindex": "#a7c957",
    "txnindex": "#f4a261",
    "snapshot": "#cdb4db",
    "checkpoint": "#e9edc9",
    "step": "#dbe9f6",
    "check": "#fdebd3",
    "decision": "#fff3b0",
    "good": "#cfe8c1",
    "bad": "#f7c6c0",
    "quiet": "#e6e6e6",
    "accent": "#ffd166",
}


def text_width(text: str, size: int = FONT, mono: bool = False) -> float:
    return len(text) * size * (MONO_EM if mono else SANS_EM)


@dataclass
class Run:
    """A piece of a line of text: plain or code, maybe a link."""

    text: str
    code: bool = False
    href: str | None = None


INLINE = re.compile(r"(`[^`]*`|\[[^\]]+\]\([^)\s]+\))")
LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<href>[^)\s]+)\)")


def runs(markdown: str, href: str | None = None) -> list[Run]:
    """Inline markdown to runs: code spans are code, ``[text](href)`` links (their text may
    hold code spans); emphasis marks are dropped."""
    out: list[Run] = []
    for piece in INLINE.split(markdown):
        if not piece:
            continue
        link = LINK.fullmatch(piece) if href is None else None
        if link:
            out.extend(runs(link.group("text"), link.group("href")))
        elif piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            out.append(Run(piece[1:-1], True, href))
        else:
            out.append(Run(re.sub(r"\*\*|__|(?<!\w)[*_]|[*_](?!\w)", "", piece), False, href))
    return out


def _width(line: list[Run], size: int) -> float:
    return sum(text_width(r.text, size, r.code) for r in line)


def wrap(markdown: str, width: float | None, size: int = FONT) -> list[list[Run]]:
    """Lines of runs no wider than ``width`` (None: one line). Lines break only at spaces;
    a word wider than the line gets a line of its own."""
    words: list[list[Run]] = [[]]  # runs with no space between them
    spaces: list[Run] = []  # the space before each word after the first
    for run in runs(markdown):
        pieces = run.text.split(" ")
        for i, piece in enumerate(pieces):
            if i > 0:
                words.append([])
                spaces.append(Run(" ", run.code, run.href))
            if piece:
                words[-1].append(Run(piece, run.code, run.href))
    lines: list[list[Run]] = [[]]
    for i, word in enumerate(words):
        if not word:
            continue
        space = spaces[i - 1] if i > 0 and lines[-1] else None
        extra = _width(word, size) + (text_width(" ", size) if space else 0)
        if width is not None and lines[-1] and _width(lines[-1], size) + extra > width:
            lines.append([])
            space = None
        if space:
            lines[-1].append(space)
        lines[-1].extend(word)
    return lines


def _merge(line: list[Run]) -> list[Run]:
    merged: list[Run] = []
    for run in line:
        if merged and (merged[-1].code, merged[-1].href) == (run.code, run.href):
            merged[-1] = Run(merged[-1].text + run.text, run.code, run.href)
        else:
            merged.append(Run(run.text, run.code, run.href))
    return merged


def _spans(line: list[Run]) -> str:
    out = []
    for r in _merge(line):
        classes = " ".join(
            c for c in ("klog-code" if r.code else "", "klog-link" if r.href else "") if c
        )
        body = html.escape(r.text)
        if classes:
            body = f'<tspan class="{classes}">{body}</tspan>'
        if r.href:
            body = f'<a href="{html.escape(r.href)}">{body}</a>'
        out.append(body)
    return "".join(out)


@dataclass
class Svg:
    """One diagram. Coordinates in px of the viewBox; ``render`` closes it."""

    name: str  # unique on its page: prefixes the ids inside the SVG
    width: int
    title: str
    parts: list[str] = field(default_factory=list)

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: str | None = None,
        *,
        cls: str = "klog-box",
        dashed: bool = False,
        rx: float = 6,
        tip: str | None = None,
    ) -> None:
        style = f' fill="{fill}"' if fill else ""
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        body = f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}"{style}{dash}>'
        body += f"<title>{html.escape(tip)}</title></rect>" if tip else "</rect>"
        self.parts.append(body)

    def text(
        self,
        x: float,
        y: float,
        markdown: str,
        *,
        width: float | None = None,
        size: int = FONT,
        anchor: str = "start",
        cls: str = "klog-text",
        bold: bool = False,
        mono: bool = False,
    ) -> float:
        """Text from its first baseline at ``y``; wrapped to ``width`` when given. Returns the
        height it took (lines × line height)."""
        lines = wrap(markdown, width, size)
        if mono:
            lines = [[Run(r.text, True, r.href) for r in line] for line in lines]
        weight = ' font-weight="600"' if bold else ""
        for i, line in enumerate(lines):
            spans = _spans(line)
            self.parts.append(
                f'<text class="{cls}" x="{x:.1f}" y="{y + i * size * LINE:.1f}" '
                f'font-size="{size}" text-anchor="{anchor}"{weight}>{spans}</text>'
            )
        return len(lines) * size * LINE

    def line(
        self,
        points: list[tuple[float, float]],
        *,
        arrow: bool = True,
        cls: str = "klog-edge",
        dashed: bool = False,
    ) -> None:
        d = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        end = f' marker-end="url(#{self.name}-arrow)"' if arrow else ""
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        self.parts.append(f'<polyline class="{cls}" points="{d}"{end}{dash}/>')

    def open_link(self, href: str, tip: str | None = None) -> None:
        self.parts.append(f'<a href="{html.escape(href)}">')
        if tip:
            self.parts.append(f"<title>{html.escape(tip)}</title>")

    def close_link(self) -> None:
        self.parts.append("</a>")

    def render(self, height: float, caption_id: str | None = None) -> str:
        label = f' aria-describedby="{caption_id}"' if caption_id else ""
        head = (
            f'<svg class="klog-fig" id="{self.name}" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {self.width} {height:.0f}" width="{self.width}" '
            f'style="--klog-fig-width: {self.width}px" role="img" '
            f'aria-label="{html.escape(self.title)}"{label}>'
            f"<title>{html.escape(self.title)}</title>"
            f'<defs><marker id="{self.name}-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            '<path class="klog-arrowhead" d="M0,0 L10,5 L0,10 z"/></marker></defs>'
        )
        return head + "".join(self.parts) + "</svg>"
