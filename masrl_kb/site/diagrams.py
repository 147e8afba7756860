"""Box-and-arrow diagrams drawn as inline SVG at build time (no script, no network).

The screening flow on the exclusions page and the example trace on the traces
page were Mermaid, which the theme fetched from a CDN; these draw the same
pictures in Python. Every label goes through :func:`esc`.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from masrl_kb.site.html import esc

CHAR_W, LINE_H, PAD = 7.2, 16, 10  # 12 px text: about 7 px a character
ROW_GAP, COL_GAP = 44, 24


@dataclass(frozen=True)
class Box:
    """A labelled box at a grid spot: ``row`` top to bottom, ``col`` left to right.

    ``col=-1`` centres the box across the whole drawing.
    """

    id: str
    lines: tuple[str, ...]
    row: int
    col: int
    cls: str = ""


@dataclass(frozen=True)
class Arrow:
    src: str
    dst: str
    label: str = ""
    dashed: bool = False


def _size(box: Box) -> tuple[float, float]:
    return max(len(t) for t in box.lines) * CHAR_W + 2 * PAD, len(box.lines) * LINE_H + PAD


def diagram(boxes: list[Box], arrows: list[Arrow], title: str, heads: list[str] = ()) -> Markup:
    """Boxes on a grid (column widths from the widest label), arrows between box edges.

    ``heads`` titles the columns (a lane per agent, say).
    """
    cols = max((b.col for b in boxes), default=0) + 1
    placed = [b for b in boxes if b.col >= 0]
    rows = max((b.row for b in boxes), default=0) + 1
    col_w = [max([_size(b)[0] for b in placed if b.col == c] + [60]) for c in range(cols)]
    if heads:
        col_w = [max(w, len(h) * CHAR_W + 2 * PAD) for w, h in zip(col_w, heads, strict=True)]
    row_h = max((_size(b)[1] for b in boxes), default=LINE_H)
    top = 28 if heads else 4
    x0 = [4 + sum(col_w[:c]) + c * COL_GAP for c in range(cols)]
    width = x0[-1] + col_w[-1] + 4
    height = top + rows * row_h + (rows - 1) * ROW_GAP + 4
    spot = {}
    parts = [
        '<defs><marker id="kb-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" '
        'class="kb-arrow-head"/></marker></defs>'
    ]
    for c, head in enumerate(heads):
        parts.append(
            f'<text class="kb-lane" x="{x0[c] + col_w[c] / 2:.1f}" y="16" '
            f'text-anchor="middle">{esc(head)}</text>'
        )
    for box in boxes:
        w, h = _size(box)
        x = (width - w) / 2 if box.col < 0 else x0[box.col] + (col_w[box.col] - w) / 2
        y = top + box.row * (row_h + ROW_GAP)
        spot[box.id] = (x, y, w, h)
        texts = "".join(
            f'<text x="{x + w / 2:.1f}" y="{y + PAD / 2 + LINE_H * (i + 0.8):.1f}" '
            f'text-anchor="middle">{esc(line)}</text>'
            for i, line in enumerate(box.lines)
        )
        parts.append(
            f'<g class="kb-box {esc(box.cls)}"><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
            f'height="{h:.1f}" rx="4"/>{texts}</g>'
        )
    for arrow in arrows:
        parts.append(_arrow(spot[arrow.src], spot[arrow.dst], arrow))
    return Markup(
        f'<div class="kb-scroll" tabindex="0" role="region" aria-label="{esc(title)}">'
        f'<figure class="kb-figure kb-diagram"><svg class="kb-chart" viewBox="0 0 {width:.0f} '
        f'{height:.0f}" width="{width:.0f}" role="img" aria-label="{esc(title)}"><title>'
        f"{esc(title)}</title>{''.join(parts)}</svg></figure></div>"
    )


def _arrow(src: tuple, dst: tuple, arrow: Arrow) -> str:
    sx, sy, sw, sh = src
    dx, dy, dw, dh = dst
    if dy > sy + sh:  # below: bottom edge to top edge
        x1, y1, x2, y2 = sx + sw / 2, sy + sh, dx + dw / 2, dy
    elif dy + dh < sy:  # above
        x1, y1, x2, y2 = sx + sw / 2, sy, dx + dw / 2, dy + dh
    else:  # same band: side to side
        right = dx > sx
        x1, x2 = (sx + sw, dx) if right else (sx, dx + dw)
        y1 = y2 = sy + sh / 2
    dash = ' stroke-dasharray="4 3"' if arrow.dashed else ""
    tip = f"<title>{esc(arrow.label)}</title>" if arrow.label else ""
    return (
        f'<line class="kb-edge" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"'
        f'{dash} marker-end="url(#kb-arrow)">{tip}</line>'
    )


def flow_diagram(
    screened: int, pooled: int, excluded: int, stages: list[tuple[str, int]]
) -> Markup:
    """The screening flow: screened -> retained / excluded -> excluded per stage."""
    boxes = [
        Box("s", (f"Records screened: {screened}",), 0, -1),
        Box("k", (f"Retained in the pool: {pooled}",), 1, 0, "kb-box-keep"),
        Box("x", (f"Excluded: {excluded}",), 1, max(len(stages) - 1, 1), "kb-box-out"),
    ]
    arrows = [Arrow("s", "k"), Arrow("s", "x")]
    for i, (label, n) in enumerate(stages):
        boxes.append(Box(f"x{i}", (label, str(n)), 2, i, "kb-box-out"))
        arrows.append(Arrow("x", f"x{i}"))
    return diagram(boxes, arrows, "Screening flow: records screened, retained and excluded")


def trace_diagram(doc: dict) -> Markup:
    """An orchestration trace: a lane per agent, events top to bottom in time order."""
    lanes: list[str] = []
    for event in doc["events"]:
        if event["agent"] not in lanes:
            lanes.append(event["agent"])
    rank = _time_rows(doc["events"])
    boxes = []
    for event in doc["events"]:
        detail = event.get("decision") or event.get("tool") or event.get("to")
        head = f"{event['id']} {event['type']}" + (f" {detail}" if detail else "")
        end = event.get("t_end", event["t"])
        when = f"{event['t']:g}-{end:g} s"
        boxes.append(Box(event["id"], (head, when), rank[event["id"]], lanes.index(event["agent"])))
    arrows = [
        Arrow(e["src"], e["dst"], e["type"], dashed=e["type"] == "temporal") for e in doc["edges"]
    ]
    return diagram(boxes, arrows, "Example orchestration trace, one lane per agent", lanes)


def _time_rows(events: list[dict]) -> dict[str, int]:
    """A row per event: events starting together share a row, unless their lane is taken."""
    rank: dict[str, int] = {}
    lane_row: dict[str, int] = {}
    row, last_t = -1, None
    for event in sorted(events, key=lambda e: (e["t"], e.get("t_end", e["t"]))):
        if event["t"] != last_t:
            row, last_t = row + 1, event["t"]
        spot = max(row, lane_row.get(event["agent"], -1) + 1)
        rank[event["id"]] = lane_row[event["agent"]] = spot
    return rank
