"""Box-and-arrow diagrams as inline SVG drawn at build time (no script from a CDN, as
Mermaid was): Python places the boxes, the ``svg.html`` template writes (and escapes) them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from masrl_kb.site.templates import macro

CHAR_W, LINE_H, PAD = 7.2, 16, 10  # 12 px text: about 7 px a character
ROW_GAP, COL_GAP = 44, 24


@dataclass(frozen=True)
class Box:
    """A labelled box at a grid spot: ``row`` top to bottom, ``col`` left to right
    (``-1`` centres the box across the drawing)."""

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
    # Down, across the gap under the source's row, down again (a straight line to a box
    # below and beside would cross the box beside the source).
    elbow: bool = False


def _size(box: Box) -> tuple[float, float]:
    return max(len(t) for t in box.lines) * CHAR_W + 2 * PAD, len(box.lines) * LINE_H + PAD


def diagram(boxes: list[Box], arrows: list[Arrow], title: str, heads: Sequence[str] = ()) -> Markup:
    """Boxes on a grid (column widths from the widest label), arrows between box edges;
    ``heads`` titles the columns (a lane per agent, say)."""
    cols = max((b.col for b in boxes), default=0) + 1
    rows = max((b.row for b in boxes), default=0) + 1
    col_w = [max([_size(b)[0] for b in boxes if b.col == c] + [60]) for c in range(cols)]
    if heads:
        col_w = [max(w, len(h) * CHAR_W + 2 * PAD) for w, h in zip(col_w, heads, strict=True)]
    row_h = max((_size(b)[1] for b in boxes), default=LINE_H)
    top = 28 if heads else 4
    x0 = [4 + sum(col_w[:c]) + c * COL_GAP for c in range(cols)]
    width = x0[-1] + col_w[-1] + 4
    spot, placed = {}, []
    for box in boxes:
        w, h = _size(box)
        x = (width - w) / 2 if box.col < 0 else x0[box.col] + (col_w[box.col] - w) / 2
        y = top + box.row * (row_h + ROW_GAP)
        spot[box.id] = (x, y, w, h)
        lines = [(y + PAD / 2 + LINE_H * (i + 0.8), line) for i, line in enumerate(box.lines)]
        placed.append({"x": x, "y": y, "w": w, "h": h, "cls": box.cls, "lines": lines})
    return macro("svg.html", "diagram")(
        {
            "title": title,
            "width": width,
            "height": top + rows * row_h + (rows - 1) * ROW_GAP + 4,
            "heads": [(x0[c] + col_w[c] / 2, head) for c, head in enumerate(heads)],
            "boxes": placed,
            "arrows": [_arrow(spot[a.src], spot[a.dst], a) for a in arrows],
        }
    )


def _arrow(src: tuple[float, ...], dst: tuple[float, ...], arrow: Arrow) -> dict:
    """An arrow's ends: box edge to box edge, by where the boxes sit."""
    sx, sy, sw, sh = src
    dx, dy, dw, dh = dst
    if dy > sy + sh:  # below: bottom edge to top edge
        x1, y1, x2, y2 = sx + sw / 2, sy + sh, dx + dw / 2, dy
    elif dy + dh < sy:  # above
        x1, y1, x2, y2 = sx + sw / 2, sy, dx + dw / 2, dy + dh
    else:  # same band: side to side
        x1, x2 = (sx + sw, dx) if dx > sx else (sx, dx + dw)
        y1 = y2 = sy + sh / 2
    path = ""
    if arrow.elbow and dy > sy + sh:
        x1 = sx + sw * 0.75  # beside the trunk a straight arrow down would take
        mid = dy - ROW_GAP / 2
        path = f"M{x1:.1f} {y1:.1f}V{mid:.1f}H{x2:.1f}V{y2:.1f}"
    return {
        "x1": x1,
        "y1": y1,
        "x2": x2,
        "y2": y2,
        "path": path,
        "dashed": arrow.dashed,
        "label": arrow.label,
    }


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
    lanes = list(dict.fromkeys(event["agent"] for event in doc["events"]))
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
