"""PRISMA 2020 flow diagrams (the layout for updated reviews): :func:`flow_svg` places a
:class:`Flow`'s numbers on the grid of :func:`masrl_kb.site.diagrams.diagram` (the rounds
template gives the same numbers as table rows, readable without the picture)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from markupsafe import Markup

from masrl_kb.site.diagrams import Arrow, Box, diagram

WRAP = 24  # characters per line inside a box: three columns fit the text column
# A phone's text column (390 px wide, about 350 px of text) holds two columns of this width.
STACKED_WRAP = 18
NBSP = "\u00a0"  # keeps "(n = 12)" on one line when wrapping
# Column heads of the update layout: the previous review, this update, what left it.
HEADS = ["Previous studies", "New records from this update", "Removed or excluded"]


@dataclass
class Flow:
    """The numbers of one flow diagram (one round, or all rounds together)."""

    title: str
    previous: int  # studies in the pool before these rounds
    identified: int
    source_note: str  # e.g. "7 query families"
    duplicates: int
    outside_window: int
    screened: int
    excluded: int
    reasons: list[tuple[str, int]]  # (reason label, count)
    awaiting: int
    included: int
    # (source label, source id, records identified there), in the order first searched
    sources: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def removed(self) -> int:
        return self.duplicates + self.outside_window

    @property
    def total(self) -> int:
        return self.previous + self.included


def _lines(*texts: str, wrap: int = WRAP) -> tuple[str, ...]:
    """Each text wrapped to the box width, "n = N" never split."""
    return tuple(
        part.replace(NBSP, " ")
        for text in texts
        for part in textwrap.wrap(text.replace("n = ", f"n{NBSP}={NBSP}"), wrap) or [""]
    )


def flow_svg(flow: Flow) -> Markup:
    """The flow twice: the update layout for wide screens and a stacked one for phones
    (the stylesheet shows one; a phone never opens on the empty previous-studies column)."""
    wide = _flow_diagram(flow, stacked=False)
    stacked = _flow_diagram(flow, stacked=True)
    return Markup(
        f'<div class="kb-flow-wide">{wide}</div><div class="kb-flow-stacked">{stacked}</div>'
    )


def _flow_diagram(flow: Flow, stacked: bool) -> Markup:
    """The update layout: previous studies beside the total, new records down the middle;
    stacked: new records down the left, what left them on the right, previous studies
    beside the total (escaped by :func:`masrl_kb.site.diagrams.diagram`)."""
    reasons = [f"{label}: {n}" for label, n in flow.reasons]
    sources = [f"{label}: {n}" for label, _, n in flow.sources]
    removed = (
        "Records removed before screening:",
        f"duplicates of the pool, exclusions or earlier rounds (n = {flow.duplicates})",
        f"first published outside the window (n = {flow.outside_window})",
    )
    keep, out = "kb-box-keep", "kb-box-out"
    previous = "Studies included in the previous version"
    spots: list[tuple[str, int, int, str, tuple[str, ...]]] = [
        ("identified", 0, 1, "", ("Records identified", f"(n = {flow.identified})", *sources)),
        ("removed", 0, 2, out, removed),
        ("screened", 1, 1, "", ("Records screened", f"(n = {flow.screened})")),
        ("excluded", 1, 2, out, ("Records excluded", f"(n = {flow.excluded})", *reasons)),
        ("included", 2, 1, keep, ("New studies included", f"(n = {flow.included})")),
        ("awaiting", 2, 2, "", ("Records awaiting a decision", f"(n = {flow.awaiting})")),
        ("previous", 3, 0, keep, (previous, f"(n = {flow.previous})")),
        ("total", 3, 1, keep, ("Total studies included", f"(n = {flow.total})")),
    ]  # fmt: skip
    wrap, heads = (STACKED_WRAP, ["This update", "Left out"]) if stacked else (WRAP, HEADS)
    if stacked:  # two columns: the flow, and beside each step what left it
        spots = [
            (b, r, 1 if b == "previous" else max(c - 1, 0), cls, t) for b, r, c, cls, t in spots
        ]
    boxes = [
        Box(bid, _lines(*texts, wrap=wrap), row, col, cls) for bid, row, col, cls, texts in spots
    ]
    edges = [("identified", "removed"), ("identified", "screened"), ("screened", "excluded"),
             ("screened", "included"), ("included", "total"), ("previous", "total")]  # fmt: skip
    arrows = [Arrow(src, dst) for src, dst in edges]
    arrows.insert(4, Arrow("screened", "awaiting", "not yet decided", dashed=True, elbow=True))
    return diagram(boxes, arrows, flow.title, heads)
