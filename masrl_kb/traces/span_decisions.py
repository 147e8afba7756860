"""Orchestration decisions (O1-O5) read off a tree of agent spans, each naming the rule that
made it (:data:`RULES`, docs/trace-decisions.md), and the team's topology."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field

from masrl_kb.traces import conventions as conv
from masrl_kb.traces.spans import Span

# Every rule and the decision it makes (docs/trace-decisions.md has one row per rule).
RULES = {
    "child-agent-span": "O1",
    "create-agent-span": "O1",
    "agent-span-of-existing-agent": "O2",
    "handoff-tool": "O2",
    "span-link": "O3",
    "links-from-agents": "O4",
    "after-child-agents": "O4",
    "stop-tool": "O5",
    "root-agent-end": "O5",
}
# Agent names that mark the planner, executor and critic roles of that topology.
ROLE_WORDS = (("plan",), ("exec", "worker", "actor", "coder", "solver"), ("critic", "review"))


@dataclass
class Decision:
    """One O1-O5 event before it is placed in the trace."""

    decision: str
    rule: str
    agent: str
    t_ns: int
    key: str  # unique within the trace: the span (and link) it was read from
    to: str | None = None
    sources: list[str] = field(default_factory=list)
    inputs: list[tuple[str, str]] = field(default_factory=list)  # (event id, edge type) in
    outputs: list[tuple[str, str]] = field(default_factory=list)  # (event id, edge type) out


@dataclass
class Step:
    """A span's own event (a model or tool call): its id, times and agent."""

    event_id: str
    start_ns: int
    end_ns: int
    agent: str


@dataclass
class SpanEvents:
    """What the mapping made of the spans: each call's event, each agent span's spawn and return."""

    steps: dict[str, Step]
    spawns: dict[str, str]
    returns: dict[str, str]


def derive(spans: list[Span], made: SpanEvents) -> list[Decision]:
    """Every decision the rules find, in the order of the rules."""
    agents = sorted(
        (s for s in spans if s.op in (conv.INVOKE_AGENT, conv.CREATE_AGENT)),
        # At equal starts the enclosing span first: a parent exists before it spawns.
        key=lambda s: (s.start_ns, -s.end_ns, s.seq),
    )
    decisions = _spawns_and_handoffs(agents, made)
    decisions += _tool_decisions(spans, made)
    aggregated, links = _link_decisions(spans, made)
    decisions += links
    decisions += _child_aggregations(spans, made, aggregated)
    if not any(d.decision == "O5" for d in decisions):
        decisions += _root_ends(spans, made)
    return decisions


def _spawns_and_handoffs(agents: list[Span], made: SpanEvents) -> list[Decision]:
    known = {s.agent for s in agents if s.op == conv.INVOKE_AGENT and s.parent_agent is None}
    out = []
    for span in agents:
        if span.op == conv.CREATE_AGENT:
            created = conv.agent_label(span.attrs, "", span.span_id)
            if span.agent is not None and created not in known:
                known.add(created)
                out.append(_decision("O1", "create-agent-span", span.agent, span, created))
            continue
        if span.parent_agent is None:
            continue
        first = span.agent not in known
        known.add(span.agent)
        rule = "child-agent-span" if first else "agent-span-of-existing-agent"
        decision = _decision("O1" if first else "O2", rule, span.parent_agent, span, span.agent)
        decision.outputs.append((made.spawns[span.span_id], "causal"))
        out.append(decision)
    return out


def _decision(kind: str, rule: str, agent: str, span: Span, to: str | None) -> Decision:
    return Decision(kind, rule, agent, span.start_ns, f"{span.span_id}.{kind}", to)


def _tool_decisions(spans: list[Span], made: SpanEvents) -> list[Decision]:
    out = []
    kinds: dict[str, tuple[str | None, bool]] = {}  # tool name -> (hand-off target, stops)
    for span in spans:
        step = made.steps.get(span.span_id)
        if span.op != conv.EXECUTE_TOOL or step is None:
            continue
        tool = conv.tool_label(span.attrs, span.name)
        kind = kinds.get(tool)
        if kind is None:
            handoff = conv.HANDOFF_TOOL.fullmatch(tool)
            target = handoff.group(1) if handoff else None
            kind = kinds[tool] = (target, tool.lower() in conv.STOP_TOOLS)
        target, stops = kind
        if target is not None:
            decision = _decision("O2", "handoff-tool", step.agent, span, target)
            decision.outputs.append((step.event_id, "causal"))
            out.append(decision)
        elif stops:
            decision = _decision("O5", "stop-tool", step.agent, span, None)
            decision.t_ns = span.end_ns
            decision.inputs.append((step.event_id, "causal"))
            out.append(decision)
    return out


def _link_decisions(spans: list[Span], made: SpanEvents) -> tuple[set[str], list[Decision]]:
    """O3 per link to one other agent; O4 for a span reading two or more other agents."""
    out = []
    aggregated = set()
    for span in spans:
        step = made.steps.get(span.span_id)
        if step is None or not span.links:
            continue
        read = [made.steps[s] for s in span.links if s in made.steps]
        read = [r for r in read if r.agent != step.agent and r.end_ns <= step.start_ns]
        senders = sorted({r.agent for r in read})
        if len(senders) >= 2:
            aggregated.add(span.span_id)
            decision = _decision("O4", "links-from-agents", step.agent, span, None)
            decision.sources = senders
            decision.inputs += [(r.event_id, "aggregate") for r in read]
            decision.outputs.append((step.event_id, "causal"))
            out.append(decision)
            continue
        for src in read:
            decision = Decision("O3", "span-link", src.agent, src.end_ns, "", step.agent)
            decision.key = f"{span.span_id}.O3.{src.event_id}"
            decision.inputs.append((src.event_id, "causal"))
            decision.outputs.append((step.event_id, "message"))
            out.append(decision)
    return aggregated, out


def _child_aggregations(
    spans: list[Span], made: SpanEvents, aggregated: set[str]
) -> list[Decision]:
    """O4 where an agent's next step follows the ends of two or more agents it started."""
    own: dict[str, list[Span]] = defaultdict(list)  # agent span -> its own calls, by start
    children: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        if span.op == conv.INVOKE_AGENT and span.parent_agent_span is not None:
            children[span.parent_agent_span].append(span)
        elif span.span_id in made.steps and span.agent_span is not None:
            own[span.agent_span].append(span)
    out = []
    for parent, kids in children.items():
        steps = sorted(own.get(parent, []), key=lambda s: (s.start_ns, s.seq))
        starts = [s.start_ns for s in steps]
        groups: dict[int, list[Span]] = defaultdict(list)
        for kid in kids:
            at = bisect_left(starts, kid.end_ns)
            if at < len(steps):
                groups[at].append(kid)
        for at, group in sorted(groups.items()):
            consumer = steps[at]
            senders = sorted({k.agent for k in group if k.agent is not None})
            if len(senders) < 2 or consumer.span_id in aggregated:
                continue
            step = made.steps[consumer.span_id]
            decision = _decision("O4", "after-child-agents", step.agent, consumer, None)
            decision.sources = senders
            decision.inputs += [(made.returns[k.span_id], "aggregate") for k in group]
            decision.outputs.append((step.event_id, "causal"))
            out.append(decision)
    return out


def _root_ends(spans: list[Span], made: SpanEvents) -> list[Decision]:
    last: dict[str, Step] = {}  # root agent span -> its latest-ending own call
    for span in spans:
        step = made.steps.get(span.span_id)
        if step is None or span.agent_span is None:
            continue
        best = last.get(span.agent_span)
        if best is None or step.end_ns > best.end_ns:
            last[span.agent_span] = step
    out = []
    for span in spans:
        if span.op != conv.INVOKE_AGENT or span.parent_agent is not None or span.agent is None:
            continue
        decision = _decision("O5", "root-agent-end", span.agent, span, None)
        decision.t_ns = span.end_ns
        step = last.get(span.span_id)
        if step is not None and step.end_ns <= span.end_ns:
            decision.inputs.append((step.event_id, "causal"))
        out.append(decision)
    return out


# ------------------------------------------------------------------ topology


def infer_topology(decisions: list[Decision], agents: set[str]) -> tuple[str, list[str]]:
    """The team shape the decisions show, and the reasons (one per shape found)."""
    parent: dict[str, str] = {}
    for d in decisions:
        if d.decision in ("O1", "O2") and d.to is not None and d.to not in parent:
            if d.to != d.agent:
                parent[d.to] = d.agent
    reasons = {}
    if _depth(parent) >= 2:
        reasons["hierarchical"] = "an agent started by another started agents of its own"
    pairs = {(d.agent, d.to) for d in decisions if d.decision == "O3" and d.to is not None}
    peers = {
        (a, b) for a, b in pairs if (b, a) in pairs and parent.get(a) != b and parent.get(b) != a
    }
    if peers and any(d.decision == "O4" for d in decisions):
        reasons["debate"] = "peers exchange messages both ways and their answers are aggregated"
    handoffs = [d for d in decisions if d.decision == "O2" and parent.get(d.agent) is not None]
    if handoffs and not any(d.decision == "O4" for d in decisions):
        reasons["swarm"] = "started agents hand the task on to each other, nobody aggregates"
    if all(any(any(w in a.lower() for w in words) for a in agents) for words in ROLE_WORDS):
        reasons["planner_executor_critic"] = "agents named for planner, executor and critic"
    if len(reasons) > 1:
        return "mixed", [f"{k}: {v}" for k, v in reasons.items()]
    if reasons:
        [(shape, why)] = reasons.items()
        return shape, [why]
    if parent:
        return "centralized", ["agents started by one orchestrator, no peer messages"]
    return "unknown", []


def _depth(parent: dict[str, str]) -> int:
    deepest = 0
    for agent in parent:
        seen = {agent}
        depth = 0
        while agent in parent and parent[agent] not in seen:
            agent = parent[agent]
            seen.add(agent)
            depth += 1
        deepest = max(deepest, depth)
    return deepest
