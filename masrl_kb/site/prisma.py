"""PRISMA 2020 flow diagrams (the layout for updated reviews) as inline SVG.

Drawn in Python with fixed geometry: no script, no external file, every text
escaped. Each box is a ``<g data-kb-flow="<name>">`` holding its count in a
``data-n`` attribute, so tests read the numbers the diagram shows.
"""

from __future__ import annotations

import itertools
import textwrap
from dataclasses import dataclass, field

from masrl_kb.site.html import esc

LINE = 17  # px per text line
PAD = 10
GAP = 34
CHARS = 38  # characters per line in a box of the standard width
COLUMNS = {"previous": (10, 230), "main": (270, 270), "side": (580, 270)}
WIDTH = 860
NBSP = "\u00a0"  # keeps '(n = 12)' on one line when wrapping


@dataclass
class Box:
    """One box: a name for tests, its count, and its lines of text."""

    name: str
    n: int
    lines: list[str]
    column: str
    x: int = 0
    y: int = 0
    w: int = 0
    wrapped: list[str] = field(default_factory=list)

    @property
    def h(self) -> int:
        return len(self.wrapped) * LINE + 2 * PAD

    def layout(self, y: int) -> None:
        self.x, self.w = COLUMNS[self.column]
        width = max(12, CHARS * self.w // 270)
        self.wrapped = [
            part.replace(NBSP, " ")
            for line in self.lines
            for part in textwrap.wrap(line.replace("n = ", f"n{NBSP}={NBSP}"), width) or [""]
        ]
        self.y = y


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

    @property
    def total(self) -> int:
        return self.previous + self.included


def _boxes(flow: Flow) -> list[list[Box]]:
    reasons = [f"{label}: {n}" for label, n in flow.reasons]
    return [
        [
            Box(
                "previous",
                flow.previous,
                [
                    "Studies included in the previous version of the review",
                    f"(n = {flow.previous})",
                ],
                "previous",
            ),
            Box(
                "identified",
                flow.identified,
                [f"Records identified from arXiv ({flow.source_note})", f"(n = {flow.identified})"],
                "main",
            ),
            Box(
                "removed",
                flow.duplicates + flow.outside_window,
                [
                    "Records removed before screening:",
                    f"duplicates of the pool, exclusions or earlier rounds (n = {flow.duplicates})",
                    f"submitted outside the window (n = {flow.outside_window})",
                ],
                "side",
            ),
        ],
        [
            Box("screened", flow.screened, ["Records screened", f"(n = {flow.screened})"], "main"),
            Box(
                "excluded",
                flow.excluded,
                ["Records excluded", f"(n = {flow.excluded})", *reasons],
                "side",
            ),
        ],
        [
            Box(
                "included",
                flow.included,
                ["New studies included in the review", f"(n = {flow.included})"],
                "main",
            ),
            Box(
                "awaiting",
                flow.awaiting,
                ["Records awaiting a decision", f"(n = {flow.awaiting})"],
                "side",
            ),
        ],
        [
            Box(
                "total",
                flow.total,
                ["Total studies included in the review", f"(n = {flow.total})"],
                "main",
            ),
        ],
    ]


def _box_svg(box: Box) -> str:
    texts = "".join(
        f'<text x="{box.x + PAD}" y="{box.y + PAD + (i + 1) * LINE - 4}">{esc(t)}</text>'
        for i, t in enumerate(box.wrapped)
    )
    return (
        f'<g data-kb-flow="{esc(box.name)}" data-n="{box.n}">'
        f'<rect x="{box.x}" y="{box.y}" width="{box.w}" height="{box.h}" rx="4"/>{texts}</g>'
    )


def _arrow(x1: int, y1: int, x2: int, y2: int, head: bool = True) -> str:
    kind = "kb-arrow" if head else "kb-link"
    return f'<line class="{kind}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>'


def flow_svg(flow: Flow) -> str:
    """The flow diagram as an ``<svg>`` element (with a text title for screen readers)."""
    rows = _boxes(flow)
    y = 36
    for row in rows:
        for box in row:
            box.layout(y)
        y += max(b.h for b in row) + GAP
    by_name = {b.name: b for row in rows for b in row}
    main = [by_name[n] for n in ("identified", "screened", "included", "total")]
    arrows = [
        _arrow(a.x + a.w // 2, a.y + a.h, b.x + b.w // 2, b.y) for a, b in itertools.pairwise(main)
    ]
    for src, dst in (("identified", "removed"), ("screened", "excluded")):
        a, b = by_name[src], by_name[dst]
        arrows.append(_arrow(a.x + a.w, a.y + a.h // 2, b.x, a.y + a.h // 2))
    # undecided records branch off the line between screening and inclusion
    screened, included, awaiting = by_name["screened"], by_name["included"], by_name["awaiting"]
    branch_y = included.y - GAP // 2
    centre, side = screened.x + screened.w // 2, awaiting.x + awaiting.w // 2
    arrows.append(_arrow(centre, branch_y, side, branch_y, head=False))
    arrows.append(_arrow(side, branch_y, side, awaiting.y))
    prev, total = by_name["previous"], by_name["total"]
    arrows.append(
        _arrow(
            prev.x + prev.w // 2,
            prev.y + prev.h,
            prev.x + prev.w // 2,
            total.y + total.h // 2,
            head=False,
        )
    )
    arrows.append(
        _arrow(prev.x + prev.w // 2, total.y + total.h // 2, total.x, total.y + total.h // 2)
    )
    height = y
    heads = (
        f'<text class="kb-flow-head" x="{COLUMNS["previous"][0]}" y="22">Previous studies</text>'
        f'<text class="kb-flow-head" x="{COLUMNS["main"][0]}" y="22">'
        "New records from this update</text>"
    )
    boxes = "".join(_box_svg(b) for row in rows for b in row)
    return (
        f'<svg class="kb-prisma" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" style="max-width:{WIDTH}px" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{esc(flow.title)}</title>"
        '<defs><marker id="kb-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker></defs>'
        "<style>.kb-prisma rect{fill:none;stroke:currentColor}"
        ".kb-prisma text{font-size:13px;fill:currentColor}"
        ".kb-prisma .kb-flow-head{font-weight:bold}"
        ".kb-prisma line{stroke:currentColor}"
        ".kb-prisma .kb-arrow{marker-end:url(#kb-head)}</style>"
        f"{heads}{boxes}{''.join(arrows)}</svg>"
    )
