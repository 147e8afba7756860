"""``masrl-kb trace import otel``: OpenTelemetry GenAI spans (OTLP JSON) to an orchestration trace.

Input is the OTLP JSON layout the collector's file exporter writes
(``resourceSpans`` / ``scopeSpans`` / ``spans``), parsed with :mod:`json` alone. The mapping
follows the GenAI semantic conventions:

* an ``invoke_agent`` span is an agent (``gen_ai.agent.name``, else ``gen_ai.agent.id``); one
  nested under another agent's span was started by it: a ``spawn`` event of the parent at the
  span's start and a ``return`` event to the parent at its end;
* an ``execute_tool`` span is a ``tool_call`` of the enclosing agent (``gen_ai.tool.name``);
* a model call (``chat``, ``text_completion``, ``generate_content``) is a ``message`` event of
  the enclosing agent: the agent's turn; a later span that links to it names its recipient;
* token costs come from ``gen_ai.usage.input_tokens`` / ``output_tokens`` (each span counted
  unless a span below it reports usage too), times from the span timestamps (seconds from
  the first span's start).

Edges: each event depends on the agent's previous finished event (``causal``), a spawned
agent's first event on its spawn (``spawn``), the parent's next event on a return
(``return``), and a span on the spans it links to (``message``). Spans that map to nothing
are listed under ``meta.otel``, attributes the mapping does not read are kept in the event's
``attrs.otel``, and both are counted in a warning.
"""

from __future__ import annotations

import base64
import heapq
import os
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from masrl_kb.traces.validate import inspect_trace, read_json

OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
TOOL_NAME = "gen_ai.tool.name"
USAGE = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
MODEL_CALLS = frozenset({"chat", "text_completion", "generate_content"})
READ_ATTRIBUTES = frozenset({OPERATION, AGENT_NAME, AGENT_ID, TOOL_NAME, *USAGE})
UNATTRIBUTED = "unattributed"
MAX_NS = 2**64 - 1
SHOWN_IDS = 5


class OtelImportError(ValueError):
    """The file is not OTLP JSON this importer can map (one line, names the place)."""


@dataclass
class Span:
    """The parts of one OTLP span the mapping reads."""

    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attrs: dict[str, Any]
    links: list[str]
    seq: int
    agent: str | None = None  # the agent this span belongs to (its own, for agent spans)
    parent_agent: str | None = None  # for agent spans: the agent that started it
    usage_below: bool = False

    @property
    def operation(self) -> object:
        return self.attrs.get(OPERATION)


@dataclass
class _Event:
    event: dict
    start: float
    end: float
    seq: int


@dataclass
class _Build:
    spans: list[Span]
    events: list[_Event] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    main: dict[str, _Event] = field(default_factory=dict)  # span id -> its event
    lanes: dict[str, list[_Event]] = field(default_factory=dict)
    t0: int = 0


# ------------------------------------------------------------------ reading


def _where(*parts: object) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def _list(value: object, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise OtelImportError(f"${where}: expected an array")
    return value


def _dict(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise OtelImportError(f"${where}: expected an object")
    return value


def any_value(value: object, where: str) -> Any:
    """The plain value of an OTLP ``AnyValue`` (``{"stringValue": ...}`` and the like)."""
    value = _dict(value, where)
    if not value:
        return None
    if len(value) != 1:
        raise OtelImportError(f"${where}: an attribute value has exactly one field")
    [(kind, inner)] = value.items()
    if kind == "stringValue" and isinstance(inner, str):
        return inner
    if kind == "boolValue" and isinstance(inner, bool):
        return inner
    if kind == "intValue" and isinstance(inner, int | str) and not isinstance(inner, bool):
        return _int(inner, where)
    if kind == "doubleValue" and isinstance(inner, int | float) and not isinstance(inner, bool):
        return inner
    if kind == "bytesValue" and isinstance(inner, str):
        return base64.b64encode(base64.b64decode(inner, validate=False)).decode("ascii")
    if kind == "arrayValue":
        values = _list(_dict(inner, where).get("values"), where + ".values")
        return [any_value(v, f"{where}.values[{i}]") for i, v in enumerate(values)]
    if kind == "kvlistValue":
        return attributes(_dict(inner, where).get("values"), where + ".values")
    raise OtelImportError(f"${where}: unknown attribute value {kind!r}")


def _int(value: object, where: str, high: int = 2**63 - 1) -> int:
    text = str(value)
    digits = text[1:] if text.startswith("-") else text
    if not digits.isdigit() or not digits.isascii() or len(digits) > 20:
        raise OtelImportError(f"${where}: {text[:40]!r} is not a whole number")
    number = int(text)
    if not -high - 1 <= number <= high:
        raise OtelImportError(f"${where}: {text} is out of range")
    return number


def attributes(value: object, where: str) -> dict[str, Any]:
    """An OTLP ``attributes`` list as a mapping (a repeated key keeps the last value)."""
    result: dict[str, Any] = {}
    for i, item in enumerate(_list(value, where)):
        item = _dict(item, f"{where}[{i}]")
        key = item.get("key")
        if not isinstance(key, str):
            raise OtelImportError(f"${where}[{i}].key: expected a string")
        result[key] = any_value(item.get("value", {}), f"{where}[{i}].value")
    return result


def _span_id(value: object, where: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 64:
        raise OtelImportError(f"${where}: expected a span id (a hex string)")
    return value


def read_spans(doc: object, trace_id: str | None) -> tuple[list[Span], str, dict]:
    """The spans of one OpenTelemetry trace, its id and its resource attributes."""
    doc = _dict(doc, "")
    by_trace: dict[str, list[Span]] = {}
    resources: dict[str, dict] = {}
    seq = 0
    for r, resource_spans in enumerate(_list(doc.get("resourceSpans"), ".resourceSpans")):
        rwhere = _where("resourceSpans", r)
        resource_spans = _dict(resource_spans, rwhere)
        resource = _dict(resource_spans.get("resource", {}), rwhere + ".resource")
        resource_attrs = attributes(resource.get("attributes"), rwhere + ".resource.attributes")
        scopes = _list(resource_spans.get("scopeSpans"), rwhere + ".scopeSpans")
        for s, scope_spans in enumerate(scopes):
            swhere = f"{rwhere}.scopeSpans[{s}]"
            spans = _list(_dict(scope_spans, swhere).get("spans"), swhere + ".spans")
            for k, raw in enumerate(spans):
                where = f"{swhere}.spans[{k}]"
                span, tid = _read_span(_dict(raw, where), where, seq)
                seq += 1
                by_trace.setdefault(tid, []).append(span)
                resources.setdefault(tid, resource_attrs)
    if not by_trace:
        raise OtelImportError("$: no spans (expected resourceSpans[].scopeSpans[].spans[])")
    if trace_id is None:
        if len(by_trace) > 1:
            ids = ", ".join(list(by_trace)[:SHOWN_IDS])
            raise OtelImportError(
                f"$: the file holds {len(by_trace)} traces ({ids}...); choose one with --trace-id"
            )
        trace_id = next(iter(by_trace))
    if trace_id not in by_trace:
        raise OtelImportError(f"$: no spans of trace {trace_id[:64]!r}")
    return by_trace[trace_id], trace_id, resources[trace_id]


def _read_span(raw: dict, where: str, seq: int) -> tuple[Span, str]:
    trace_id = _span_id(raw.get("traceId"), where + ".traceId")
    parent = raw.get("parentSpanId") or None
    start = _int(raw.get("startTimeUnixNano"), where + ".startTimeUnixNano", MAX_NS)
    end = _int(raw.get("endTimeUnixNano"), where + ".endTimeUnixNano", MAX_NS)
    if start < 0 or end < start:
        raise OtelImportError(f"${where}: the span ends ({end}) before it starts ({start})")
    name = raw.get("name", "")
    links = []
    for i, link in enumerate(_list(raw.get("links"), where + ".links")):
        link = _dict(link, f"{where}.links[{i}]")
        if link.get("traceId", trace_id) == trace_id:
            links.append(_span_id(link.get("spanId"), f"{where}.links[{i}].spanId"))
    span = Span(
        span_id=_span_id(raw.get("spanId"), where + ".spanId"),
        parent_id=_span_id(parent, where + ".parentSpanId") if parent else None,
        name=name if isinstance(name, str) else "",
        start_ns=start,
        end_ns=end,
        attrs=attributes(raw.get("attributes"), where + ".attributes"),
        links=links,
        seq=seq,
    )
    return span, trace_id


# ------------------------------------------------------------------ mapping


def _agent_label(span: Span) -> str:
    for key in (AGENT_NAME, AGENT_ID):
        value = span.attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return f"agent-{span.span_id}"


def _assign_agents(spans: list[Span]) -> dict[str, Span]:
    """Set each span's agent and each agent span's parent agent; spans by id."""
    by_id: dict[str, Span] = {}
    for span in spans:
        if span.span_id in by_id:
            raise OtelImportError(f"$: span id {span.span_id!r} appears twice")
        by_id[span.span_id] = span
    # Parents before children: walk from the roots (spans whose parent is absent).
    children: dict[str | None, list[Span]] = {}
    for span in spans:
        parent = span.parent_id if span.parent_id in by_id else None
        children.setdefault(parent, []).append(span)
    stack: list[tuple[Span, str | None]] = [(s, None) for s in children.get(None, [])]
    seen = 0
    while stack:
        span, agent = stack.pop()
        seen += 1
        if span.operation == "invoke_agent":
            span.parent_agent = agent
            agent = _agent_label(span)
        span.agent = agent
        stack += [(child, agent) for child in children.get(span.span_id, [])]
    if seen != len(spans):
        raise OtelImportError("$: the spans' parent links form a loop")
    return by_id


def _mark_usage(spans: list[Span], by_id: dict[str, Span]) -> None:
    """Flag spans with a descendant that reports usage, so tokens are counted once."""
    for span in spans:
        if not any(key in span.attrs for key in USAGE):
            continue
        parent = by_id.get(span.parent_id) if span.parent_id else None
        hops = 0
        while parent is not None and not parent.usage_below and hops <= len(spans):
            parent.usage_below = True
            parent = by_id.get(parent.parent_id) if parent.parent_id else None
            hops += 1


def _tokens(span: Span, warnings: list[str]) -> dict[str, int]:
    found = {}
    for key in USAGE:
        value = span.attrs.get(key)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12:
            found[key.rsplit(".", 1)[1]] = value
        else:
            warnings.append(f"span {span.span_id}: {key} is not a token count; ignored")
    return found


def _add(build: _Build, span: Span, event: dict, start_ns: int, end_ns: int) -> _Event:
    t = (start_ns - build.t0) / 1e9
    event["t"] = t
    if end_ns != start_ns:
        event["t_end"] = (end_ns - build.t0) / 1e9
    item = _Event(event, t, event.get("t_end", t), len(build.events))
    build.events.append(item)
    build.lanes.setdefault(event["agent"], []).append(item)
    return item


def _extra_attrs(span: Span) -> dict[str, Any]:
    return {k: v for k, v in span.attrs.items() if k not in READ_ATTRIBUTES}


def _map_span(build: _Build, span: Span, warnings: list[str]) -> bool:
    """Add the events of one span; False if it maps to nothing."""
    operation = span.operation
    agent = span.agent or UNATTRIBUTED
    tokens = _tokens(span, warnings) if not span.usage_below else {}
    attrs: dict[str, Any] = dict(tokens)
    extra = _extra_attrs(span)
    if extra:
        attrs["otel"] = extra
    if operation == "invoke_agent":
        if span.parent_agent is not None:
            spawn = {"id": f"{span.span_id}.spawn", "type": "spawn", "agent": span.parent_agent}
            spawn["to"] = agent
            _add(build, span, spawn, span.start_ns, span.start_ns)
            back = {"id": f"{span.span_id}.return", "type": "return", "agent": agent}
            back["to"] = span.parent_agent
            if attrs:
                back["attrs"] = attrs
            build.main[span.span_id] = _add(build, span, back, span.end_ns, span.end_ns)
        # A root agent has no event of its own; map_spans keeps its attributes in meta.
        return True
    if operation == "execute_tool":
        tool = span.attrs.get(TOOL_NAME)
        event = {"id": span.span_id, "type": "tool_call", "agent": agent}
        event["tool"] = tool if isinstance(tool, str) and tool else span.name or "tool"
    elif operation in MODEL_CALLS:
        event = {"id": span.span_id, "type": "message", "agent": agent}
    else:
        return False
    if attrs:
        event["attrs"] = attrs
    build.main[span.span_id] = _add(build, span, event, span.start_ns, span.end_ns)
    return True


def _lane_edges(build: _Build) -> None:
    """Each event depends on its agent's latest event that ended by its start."""
    for lane in build.lanes.values():
        lane.sort(key=lambda e: (e.start, e.seq))
        running: list[tuple[float, int]] = []  # (end, position in lane), a min-heap
        best: int | None = None
        for pos, item in enumerate(lane):
            # Events still running end no earlier than anything already finished, so the
            # last one to finish by this start is the latest.
            while running and running[0][0] <= item.start:
                best = heapq.heappop(running)[1]
            if best is not None:
                build.edges.append(_edge(lane[best], item, "causal"))
            heapq.heappush(running, (item.end, pos))


def _edge(src: _Event, dst: _Event, kind: str) -> dict:
    return {"src": src.event["id"], "dst": dst.event["id"], "type": kind}


def _agent_edges(build: _Build) -> None:
    """Spawn -> the spawned agent's first event; return -> the parent's next event after the
    spawn. Lanes are sorted by (start, seq), so each lookup is a binary search."""
    keys = {agent: [(e.start, e.seq) for e in lane] for agent, lane in build.lanes.items()}
    spawns = {e.event["id"]: e for e in build.events if e.event["type"] == "spawn"}
    for item in build.events:
        event = item.event
        if event["type"] == "spawn":
            lane = build.lanes.get(event["to"], [])
            at = bisect_left(keys.get(event["to"], []), (item.start, -1))
            if at < len(lane):
                build.edges.append(_edge(item, lane[at], "spawn"))
        elif event["type"] == "return" and event["id"].endswith(".return"):
            spawn = spawns.get(event["id"].removesuffix(".return") + ".spawn")
            lane = build.lanes.get(event["to"], [])
            floor = max((spawn.start, spawn.seq) if spawn else (item.start, -1), (item.start, -1))
            at = bisect_right(keys.get(event["to"], []), floor)
            if at < len(lane):
                build.edges.append(_edge(item, lane[at], "return"))


def _link_edges(build: _Build, warnings: list[str]) -> None:
    """A span that links to another reads its output: a message edge (and its recipient)."""
    dropped = 0
    for span in build.spans:
        dst = build.main.get(span.span_id)
        for linked in span.links:
            src = build.main.get(linked)
            if src is None or dst is None:
                continue
            if src.end > dst.start:
                dropped += 1  # an output cannot be read before it exists
                continue
            same = src.event["agent"] == dst.event["agent"]
            if src.event["type"] == "message" and not same:
                src.event.setdefault("to", dst.event["agent"])
            build.edges.append(_edge(src, dst, "causal" if same else "message"))
    if dropped:
        warnings.append(f"{dropped} link(s) point forward in time; left out")


def map_spans(
    spans: list[Span], trace_id: str, resource: dict, task_id: str
) -> tuple[dict, list[str]]:
    """The orchestration trace of a set of spans, and the mapping's warnings."""
    warnings: list[str] = []
    by_id = _assign_agents(spans)
    _mark_usage(spans, by_id)
    build = _Build(spans, t0=min(s.start_ns for s in spans))
    unmapped = []
    root_attrs: dict[str, Any] = {}
    kept = 0
    # At equal starts the enclosing (longer) span goes first, so a spawn precedes the work.
    for span in sorted(spans, key=lambda s: (s.start_ns, -s.end_ns, s.seq)):
        if not _map_span(build, span, warnings):
            unmapped.append({"span_id": span.span_id, "name": span.name, "attributes": span.attrs})
        else:
            kept += len(_extra_attrs(span))
            if span.operation == "invoke_agent" and span.parent_agent is None:
                tokens = _tokens(span, []) if not span.usage_below else {}
                root_attrs[span.span_id] = {**tokens, **_extra_attrs(span)}
    if not build.events:
        raise OtelImportError(
            f"$: none of the {len(spans)} span(s) is a GenAI agent, tool or model call "
            f"({OPERATION} = invoke_agent, execute_tool, chat)"
        )
    _lane_edges(build)
    _agent_edges(build)
    _link_edges(build, warnings)
    events = [e.event for e in sorted(build.events, key=lambda e: (e.start, e.seq))]
    tokens = sum(
        sum(_tokens(s, []).values()) for s in spans if not s.usage_below and s.attrs.keys() & USAGE
    )
    kinds = [e["type"] for e in events]
    system = resource.get("service.name")
    doc = {
        "trace_id": trace_id,
        "task_id": task_id,
        "system": system if isinstance(system, str) else "unknown",
        "topology": "unknown",
        "events": events,
        "edges": build.edges,
        "rewards": {},
        "costs": {
            "tokens": tokens,
            "wall_clock_s": (max(s.end_ns for s in spans) - build.t0) / 1e9,
            "tool_calls": kinds.count("tool_call"),
            "messages": kinds.count("message"),
        },
        "meta": {
            "otel": {
                "resource": resource,
                "root_agents": root_attrs,
                "unmapped_spans": unmapped,
            }
        },
    }
    if unmapped or kept:
        warnings.append(
            f"{len(unmapped)} span(s) mapped to no event (kept under meta.otel) and {kept} "
            "attribute(s) not read by the mapping (kept under each event's attrs.otel)"
        )
    return doc, warnings


def import_otel(
    doc: object, trace_id: str | None = None, task_id: str = "unknown"
) -> tuple[dict, list[str]]:
    """Map a parsed OTLP JSON document; raises :class:`OtelImportError` with the reason."""
    spans, tid, resource = read_spans(doc, trace_id)
    trace, warnings = map_spans(spans, tid, resource, task_id)
    inspection = inspect_trace(trace, "imported trace", limit=3)
    if inspection.log:
        shown = "; ".join(f"{p.where}: {p.message}" for p in inspection.log.shown)
        raise OtelImportError(f"the spans do not make a valid trace: {shown}")
    return trace, warnings


def import_otel_file(
    path: str | os.PathLike[str], trace_id: str | None = None, task_id: str = "unknown"
) -> tuple[dict, list[str]]:
    """Read and map one OTLP JSON file."""
    doc, reason = read_json(path)
    if reason is not None:
        raise OtelImportError(reason)
    return import_otel(doc, trace_id, task_id)
