"""``trace metrics --html``: one self-contained page (no script, no external file, all trace
text escaped) with each trace's timeline as SVG: agents are rows, events bars."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from pathlib import Path
from string import Template

from masrl_kb.traces.trace_schema import enum_of

# A million bars would make a page no browser can draw; the critical path is always kept.
MAX_BARS = 20_000
# Bars are labelled with their span names only in timelines of at most this many events.
MAX_LABELS = 2_000
ROW_H = 22
LABEL_W = 160
PLOT_W = 960
AXIS_H = 28
LABEL_CHARS = 22
TICKS = 8
CHAR_W = 6.5  # average width of an 11px character, to fit labels in bars
DECISION_NAMES = {"O1": "spawn", "O2": "delegate", "O3": "communicate", "O4": "aggregate"}
DECISION_NAMES["O5"] = "stop"
# The page around the timelines, with a colour per event type (a CSS class) and for the
# critical path. Its Content-Security-Policy lets nothing load or run, even if an escaping
# bug let markup through.
PAGE_TEMPLATE = Path(__file__).parent / "data" / "timeline.html"


def esc(text: object) -> str:
    """Text made safe in HTML and SVG element content and attribute values."""
    return html.escape(str(text), quote=True)


def _cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters, an ellipsis marking the cut."""
    return text if len(text) <= room else text[: room - 1] + "\u2026"


def _shown_events(doc: dict, critical: set[str]) -> list[dict]:
    events = doc["events"]
    if len(events) <= MAX_BARS:
        return events
    kept = [e for e in events if e["id"] in critical]
    room = MAX_BARS - len(kept)
    others = sorted((e for e in events if e["id"] not in critical), key=lambda e: e["t"])
    return kept + others[: max(room, 0)]


def _ticks(t0: float, t1: float) -> list[float]:
    """Round tick times (multiples of 1, 2 or 5 times a power of ten) from ``t0`` to ``t1``,
    about TICKS of them; the first is the first multiple at or after ``t0``."""
    span = t1 - t0
    if span <= 0:
        return [t0]
    power = 10.0 ** math.floor(math.log10(span / TICKS))
    step = next(m * power for m in (1, 2, 5, 10) if span / (m * power) <= TICKS)
    first = math.ceil(t0 / step - 1e-9)
    last = math.floor(t1 / step + 1e-9)
    # Rounded to the step's own precision, so 0.30000000000000004 prints as 0.3.
    digits = max(0, -math.floor(math.log10(step))) + 1
    return [round(k * step, digits) for k in range(first, last + 1)]


def _bar_label(event: dict) -> str:
    """What a bar says: the span name, else the tool, the decision or the type."""
    for key in ("name", "tool", "decision"):
        value = event.get(key)
        if isinstance(value, str) and value:
            return value
    return event["type"]


def timeline_svg(doc: dict, metrics: dict) -> tuple[str, int]:
    """The SVG timeline of one trace and how many events it draws."""
    critical = set(metrics["critical_path"])
    events = _shown_events(doc, critical)
    rows: dict[str, int] = {}
    for event in sorted(doc["events"], key=lambda e: e["t"]):
        rows.setdefault(event["agent"], len(rows))
    t0 = min((e["t"] for e in doc["events"]), default=0.0)
    t1 = max((e.get("t_end", e["t"]) for e in doc["events"]), default=0.0)
    scale = PLOT_W / (t1 - t0) if t1 > t0 else 0.0
    height = AXIS_H + ROW_H * len(rows)
    width = LABEL_W + PLOT_W + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">'
    ]
    for agent, row in rows.items():
        y = AXIS_H + row * ROW_H
        parts.append(
            f'<rect class="lane" x="{LABEL_W}" y="{y + 2}" width="{PLOT_W}" height="{ROW_H - 4}"/>'
            f'<text x="4" y="{y + ROW_H - 7}"><title>{esc(agent)}</title>'
            f"{esc(_cut(agent, LABEL_CHARS))}</text>"
        )
    for tick in _ticks(t0, t1):
        x = LABEL_W + (tick - t0) * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{AXIS_H - 6}" x2="{x:.1f}" y2="{height}" stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{AXIS_H - 10}" text-anchor="middle">{tick:g} s</text>'
        )
    for event in events:
        start, end = event["t"], event.get("t_end", event["t"])
        on_path = event["id"] in critical
        x = LABEL_W + (start - t0) * scale
        w = max((end - start) * scale, 2.0)
        y = AXIS_H + rows[event["agent"]] * ROW_H + 4
        tip = f"{event['id']} {event['type']} {start:g}-{end:g} s"
        for key in ("name", "decision", "rule", "tool", "to"):
            if key in event:
                tip += f" {key}={event[key]}"
        parts.append(
            f'<rect class="{"crit" if on_path else esc(event["type"])}" x="{x:.2f}" y="{y}" '
            f'width="{w:.2f}" height="{ROW_H - 8}"><title>{esc(tip)}</title></rect>'
        )
        room = int((w - 4) // CHAR_W)  # characters that fit in the bar
        if room >= 2 and len(events) <= MAX_LABELS:
            label = _cut(_bar_label(event), room)
            parts.append(
                f'<text class="bar" x="{x + 2:.2f}" y="{y + ROW_H - 12}">{esc(label)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts), len(events)


SUMMARY_KEYS = "events agents max_fanout spawn_depth total_work_s critical_path_s".split()
SUMMARY_KEYS += ["parallel_speedup", "tokens", "wall_clock_s"]


def _cells(values: Iterable[object], tag: str = "td") -> str:
    return "".join(f"<{tag}>{esc(value)}</{tag}>" for value in values)


def _table(head: list[str], rows: Iterable[list[object]]) -> str:
    """An HTML table, every cell escaped; with no ``head``, each row's first cell heads it."""
    lines = [f"<tr>{_cells(head, 'th')}</tr>"] if head else []
    for first, *rest in rows:
        lines.append(f"<tr>{_cells([first], 'td' if head else 'th')}{_cells(rest)}</tr>")
    return f"<table>{''.join(lines)}</table>"


def _tables(metrics: dict) -> tuple[str, str, str]:
    """The headline metrics, the decisions (how many, the wait from their latest input) and
    the agents (busy and idle time, tokens)."""
    summary = [[key, metrics[key]] for key in SUMMARY_KEYS]
    summary += [[f"reported: {k}", v] for k, v in (metrics.get("reported") or {}).items()]
    decisions = []
    for d, v in (metrics.get("decision_latency") or {}).items():
        waits = ["\u2013" if v[key] is None else v[key] for key in ("mean_s", "max_s")]
        decisions.append([f"{d} {DECISION_NAMES.get(d, '')}", v["events"], *waits])
    tokens = metrics.get("tokens_by_agent") or {}
    agents = [
        [a, t["busy_s"], t["idle_s"], _number(tokens.get(a, 0))]
        for a, t in metrics["agent_time"].items()
    ]
    return (
        _table([], summary),
        _table(["decision", "events", "mean wait (s)", "max wait (s)"], decisions),
        _table(["agent", "busy (s)", "idle (s)", "tokens"], agents),
    )


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def _legend() -> str:
    items = ['<span><i class="crit"></i>critical path</span>']
    items += [f'<span><i class="{esc(k)}"></i>{esc(k)}</span>' for k in enum_of("event_type")]
    return f'<p class="legend">{"".join(items)}</p>'


def timeline_page(docs: dict[str, dict], results: dict[str, dict]) -> str:
    """One HTML page: per trace file its headline metrics, its timeline and agent times."""
    sections = []
    for file, doc in docs.items():
        metrics = results[file]
        svg, drawn = timeline_svg(doc, metrics)
        summary, decisions, agents = _tables(metrics)
        note = (
            f"<p>Showing {drawn:,} of {len(doc['events']):,} events (the critical path and "
            "the earliest others).</p>"
            if drawn < len(doc["events"])
            else ""
        )
        sections.append(
            f"<section><h2>{esc(file)}</h2>"
            f"<p>trace <code>{esc(doc['trace_id'])}</code>, task "
            f"<code>{esc(doc['task_id'])}</code>; the critical path has "
            f"{len(metrics['critical_path']):,} event(s).</p>"
            f"{summary}{note}{svg}<h3>Decisions</h3>{decisions}"
            f"<h3>Agents: busy and idle time, tokens</h3>{agents}</section>"
        )
    page = Template(PAGE_TEMPLATE.read_text(encoding="utf-8"))
    return page.substitute(legend=_legend(), sections="".join(sections))
