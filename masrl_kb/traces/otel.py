"""``masrl-kb trace import otel``: OpenTelemetry spans to an orchestration trace (agent spans
become spawn and return events, tool spans tool calls, model calls messages, each depending
on its agent's previous finished event; docs/trace-decisions.md has the tables)."""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from masrl_kb.traces import conventions as conv
from masrl_kb.traces.span_decisions import Decision, SpanEvents, Step, derive, infer_topology
from masrl_kb.traces.spans import OtelImportError, Span, SpanSet, choose_trace
from masrl_kb.traces.trace_checks import inspect_trace

UNATTRIBUTED = "unattributed"


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
    made: SpanEvents = field(default_factory=lambda: SpanEvents({}, {}, {}))


# ------------------------------------------------------------------ mapping


def _assign_agents(spans: list[Span]) -> tuple[dict[str, Span], list[Span]]:
    """Set each span's operation, agent and enclosing agent span; spans by id, and in an
    order with every parent before its children."""
    by_id: dict[str, Span] = {}
    for span in spans:
        if span.span_id in by_id:
            raise OtelImportError(f"$: span id {span.span_id!r} appears twice")
        by_id[span.span_id] = span
        span.op = conv.operation(span.attrs)
    # Parents before children: walk from the roots (spans whose parent is absent).
    children: dict[str | None, list[Span]] = {}
    for span in spans:
        parent = span.parent_id if span.parent_id in by_id else None
        children.setdefault(parent, []).append(span)
    stack: list[tuple[Span, str | None, str | None]] = [
        (s, None, None) for s in children.get(None, [])
    ]
    order = []
    while stack:
        span, agent, agent_span = stack.pop()
        order.append(span)
        span.agent_span = agent_span
        if span.op == conv.INVOKE_AGENT:
            span.parent_agent, span.parent_agent_span = agent, agent_span
            agent, agent_span = conv.agent_label(span.attrs, span.name, span.span_id), span.span_id
        span.agent = agent
        stack += [(child, agent, agent_span) for child in children.get(span.span_id, [])]
    if len(order) != len(spans):
        raise OtelImportError("$: the spans' parent links form a loop")
    return by_id, order


def _own_agent(span: Span) -> str | None:
    """The agent span whose own work ``span`` is: itself for an agent span."""
    return span.span_id if span.op == conv.INVOKE_AGENT else span.agent_span


def _is_sum(counts: dict[str, int], below: dict[str, int]) -> bool:
    """Whether every count the span reports is the sum of that count below it (a total
    compared with the sum of all counts below)."""
    if not below:
        return False
    if "total_tokens" in counts:
        return counts["total_tokens"] == below["all"]
    return all(below.get(kind) == value for kind, value in counts.items())


def _mark_aggregates(order: list[Span], by_id: dict[str, Span]) -> None:
    """Flag the spans whose token counts are an aggregate of spans below them (counted
    there); every other span's own counts are counted (docs/trace-decisions.md, "Tokens")."""
    nearest: dict[str, str | None] = {}  # span -> nearest span at or above it with counts
    counts: dict[str, dict[str, int]] = {}
    below: dict[str, dict[str, int]] = {}  # the counts of its nearest counted spans below
    own_below: dict[str, dict[str, int]] = {}  # ... of those that are its own agent's work
    for span in order:
        up = nearest.get(span.parent_id) if span.parent_id is not None else None
        if conv.reports_usage(span.attrs):
            span.usage = conv.token_counts(span.attrs)
        found = span.usage[0] if span.usage else {}
        if not found:
            nearest[span.span_id] = up
            continue
        nearest[span.span_id] = span.span_id
        counts[span.span_id], below[span.span_id], own_below[span.span_id] = found, {}, {}
        if up is None:
            continue
        sums = [below[up]]
        if span.op != conv.INVOKE_AGENT and span.agent_span == _own_agent(by_id[up]):
            sums.append(own_below[up])
        for total in sums:
            for kind, value in found.items():
                total[kind] = total.get(kind, 0) + value
            total["all"] = total.get("all", 0) + sum(found.values())
    for span_id, found in counts.items():
        if _is_sum(found, below[span_id]) or _is_sum(found, own_below[span_id]):
            by_id[span_id].aggregate = True


def _tokens(span: Span, warnings: list[str]) -> dict[str, int]:
    """The span's token counts (none when they are an aggregate: counted below it)."""
    if span.aggregate or span.usage is None:
        return {}
    found, bad = span.usage
    warnings += [f"span {span.span_id}: {key} is not a token count; ignored" for key in bad]
    return found


def _add(build: _Build, span: Span, event: dict, start_ns: int, end_ns: int) -> _Event:
    t = (start_ns - build.t0) / 1e9
    event["t"] = t
    if end_ns != start_ns:
        event["t_end"] = (end_ns - build.t0) / 1e9
    if span.name:
        event["name"] = span.name
    item = _Event(event, t, event.get("t_end", t), len(build.events))
    build.events.append(item)
    build.lanes.setdefault(event["agent"], []).append(item)
    return item


def _extra_attrs(span: Span) -> dict[str, Any]:
    return {k: v for k, v in span.attrs.items() if k not in conv.READ_ATTRIBUTES}


def _with_attrs(event: dict, tokens: dict[str, int], extra: dict[str, Any]) -> dict:
    """``event`` with its span's token counts and unread attributes (``attrs.otel``)."""
    if tokens:
        event["tokens"] = sum(tokens.values())
    attrs: dict[str, Any] = {**tokens, "otel": extra} if extra else tokens
    if attrs:
        event["attrs"] = attrs
    return event


def _map_agent(build: _Build, span: Span, tokens: dict[str, int], extra: dict[str, Any]) -> None:
    agent = span.agent or UNATTRIBUTED
    if span.parent_agent is None:
        # A root agent has no event of its own (map_spans keeps its attributes), unless it
        # reports tokens of its own: a return to no one at its end (the run's result) holds
        # them, so trace metrics counts them for it.
        if tokens:
            back = {"id": f"{span.span_id}.return", "type": "return", "agent": agent}
            _add(build, span, _with_attrs(back, tokens, extra), span.end_ns, span.end_ns)
        return
    spawn = {"id": f"{span.span_id}.spawn", "type": "spawn", "agent": span.parent_agent}
    spawn["to"] = agent
    _add(build, span, spawn, span.start_ns, span.start_ns)
    back = {"id": f"{span.span_id}.return", "type": "return", "agent": agent}
    back["to"] = span.parent_agent
    item = _add(build, span, _with_attrs(back, tokens, extra), span.end_ns, span.end_ns)
    build.main[span.span_id] = item
    build.made.spawns[span.span_id] = spawn["id"]
    build.made.returns[span.span_id] = back["id"]


def _map_span(build: _Build, span: Span, warnings: list[str]) -> int | None:
    """Add the events of one span; how many attributes it leaves unread (None: no events)."""
    operation = span.op
    extra = _extra_attrs(span)
    if operation == conv.CREATE_AGENT and span.agent is not None:
        return len(extra)  # read by the decision rules only (an O1 of the enclosing agent)
    agent = span.agent or UNATTRIBUTED
    tokens = _tokens(span, warnings)
    if operation == conv.INVOKE_AGENT:
        _map_agent(build, span, tokens, extra)
        return len(extra)
    if operation == conv.EXECUTE_TOOL:
        event = {"id": span.span_id, "type": "tool_call", "agent": agent}
        event["tool"] = conv.tool_label(span.attrs, span.name)
    elif operation in conv.MODEL_CALLS:
        event = {"id": span.span_id, "type": "message", "agent": agent}
    else:
        return None
    item = _add(build, span, _with_attrs(event, tokens, extra), span.start_ns, span.end_ns)
    build.main[span.span_id] = item
    build.made.steps[span.span_id] = Step(event["id"], span.start_ns, span.end_ns, agent)
    return len(extra)


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
            # An earlier run of the same agent may return at this very instant: not ours.
            own = event["id"].removesuffix(".spawn") + ".return"
            while at < len(lane) and lane[at].event["type"] == "return":
                if lane[at].event["id"] == own:
                    break
                at += 1
            if at < len(lane):
                build.edges.append(_edge(item, lane[at], "spawn"))
        elif event["type"] == "return" and "to" in event and event["id"].endswith(".return"):
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


def _decision_events(build: _Build, decisions: list[Decision]) -> None:
    """Each decision as an ``orchestrator_decision`` event, wired to the events it reads and
    enables. Added after the lane edges: a decision is no step of an agent's own work."""
    ids = {e.event["id"]: e for e in build.events}
    done = _finished_steps(build)
    for decision in decisions:
        if not decision.inputs:
            _add_cause(decision, done)
        event: dict[str, Any] = {"id": decision.key, "type": "orchestrator_decision"}
        event["agent"] = decision.agent
        event["decision"] = decision.decision
        event["rule"] = decision.rule
        if decision.to is not None:
            event["to"] = decision.to
        if decision.sources:
            event["sources"] = decision.sources
        t = (decision.t_ns - build.t0) / 1e9
        event["t"] = t
        item = _Event(event, t, t, len(build.events))
        build.events.append(item)
        build.edges += [_edge(ids[src], item, kind) for src, kind in decision.inputs]
        build.edges += [_edge(item, ids[dst], kind) for dst, kind in decision.outputs]


def _finished_steps(build: _Build) -> dict[str, tuple[list[int], list[str]]]:
    """Per agent, its own calls' end times (sorted) and event ids."""
    steps = sorted(build.made.steps.values(), key=lambda s: (s.end_ns, s.start_ns))
    done: dict[str, tuple[list[int], list[str]]] = {}
    for step in steps:
        ends, ids = done.setdefault(step.agent, ([], []))
        ends.append(step.end_ns)
        ids.append(step.event_id)
    return done


def _add_cause(decision: Decision, done: dict[str, tuple[list[int], list[str]]]) -> None:
    """A decision with nothing to read follows its agent's latest call finished by then."""
    ends, ids = done.get(decision.agent, ([], []))
    at = bisect_right(ends, decision.t_ns)
    enabled = {dst for dst, _ in decision.outputs}
    while at > 0 and ids[at - 1] in enabled:
        at -= 1
    if at > 0:
        decision.inputs.append((ids[at - 1], "causal"))


def _root_attrs(spans: list[Span]) -> dict[str, Any]:
    """Token counts and unread attributes of root agents (they have no event to keep them)."""
    kept = {}
    for span in spans:
        if span.op == conv.INVOKE_AGENT and span.parent_agent is None:
            kept[span.span_id] = {**_tokens(span, []), **_extra_attrs(span)}
    return kept


def _total_tokens(spans: list[Span]) -> int:
    return sum(sum(s.usage[0].values()) for s in spans if s.usage and not s.aggregate)


def _map_all(build: _Build, warnings: list[str]) -> tuple[list[dict], int]:
    unmapped = []
    kept = 0
    # At equal starts the enclosing (longer) span goes first, so a spawn precedes the work.
    for span in sorted(build.spans, key=lambda s: (s.start_ns, -s.end_ns, s.seq)):
        unread = _map_span(build, span, warnings)
        if unread is None:
            unmapped.append({"span_id": span.span_id, "name": span.name, "attributes": span.attrs})
        else:
            kept += unread
    if not build.events:
        raise OtelImportError(
            f"$: none of the {len(build.spans)} span(s) is a GenAI agent, tool or model call "
            f"({conv.OPERATION} = invoke_agent, execute_tool, chat; or "
            f"{conv.OI_SPAN_KIND} = AGENT, TOOL, LLM)"
        )
    return unmapped, kept


def map_spans(
    spans: list[Span],
    trace_id: str,
    resource: dict,
    task_id: str,
    topology: str | None = None,
) -> tuple[dict, list[str]]:
    """The orchestration trace of a set of spans (``topology`` overrides the inferred one),
    and the mapping's warnings."""
    warnings: list[str] = []
    by_id, order = _assign_agents(spans)
    _mark_aggregates(order, by_id)
    build = _Build(spans, t0=min(s.start_ns for s in spans))
    unmapped, kept = _map_all(build, warnings)
    _lane_edges(build)
    _agent_edges(build)
    _link_edges(build, warnings)
    decisions = derive(spans, build.made)
    _decision_events(build, decisions)
    agents = {e.event["agent"] for e in build.events}
    inferred, reasons = infer_topology(decisions, agents)
    events = [e.event for e in sorted(build.events, key=lambda e: (e.start, e.seq))]
    kinds = [e["type"] for e in events]
    system = resource.get("service.name")
    doc = {
        "trace_id": trace_id,
        "task_id": task_id,
        "system": system if isinstance(system, str) else "unknown",
        "topology": topology or inferred,
        "events": events,
        "edges": build.edges,
        "rewards": {},
        "costs": {
            "tokens": _total_tokens(spans),
            "wall_clock_s": (max(s.end_ns for s in spans) - build.t0) / 1e9,
            "tool_calls": kinds.count("tool_call"),
            "messages": kinds.count("message"),
        },
        "meta": {
            "otel": {
                "resource": resource,
                "root_agents": _root_attrs(spans),
                "unmapped_spans": unmapped,
                "topology": {"inferred": inferred, "reasons": reasons},
            }
        },
    }
    if len(agents) > 1 and not any(s.links for s in spans):
        warnings.append(
            "no span links: which agent read which output (messages, O3) cannot be seen; "
            "only spawns, returns and calls are mapped"
        )
    if unmapped or kept:
        warnings.append(
            f"{len(unmapped)} span(s) mapped to no event (kept under meta.otel) and {kept} "
            "attribute(s) not read by the mapping (kept under each event's attrs.otel)"
        )
    return doc, warnings


def import_otel(
    spans: SpanSet,
    trace_id: str | None = None,
    task_id: str = "unknown",
    topology: str | None = None,
) -> tuple[dict, list[str]]:
    """Map the spans of one trace (:func:`read_span_file`, :func:`read_span_document`) to a
    checked orchestration trace; raises :class:`OtelImportError` with the reason."""
    chosen, tid, resource = choose_trace(spans, trace_id)
    trace, warnings = map_spans(chosen, tid, resource, task_id, topology)
    inspection = inspect_trace(trace, "imported trace", limit=3)
    if inspection.log:
        shown = "; ".join(f"{p.where}: {p.message}" for p in inspection.log.shown)
        raise OtelImportError(f"the spans do not make a valid trace: {shown}")
    return trace, warnings
