"""Metrics of a valid trace: counts, spawn shape, critical path, parallel speed-up, and what
explains a run (per-agent busy and idle time, communication per agent pair, decisions)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import accumulate, compress, islice, repeat
from operator import itemgetter, le, sub
from typing import Any

from masrl_kb.traces.graph import adjacency, depth, heaviest_path
from masrl_kb.traces.trace_checks import ProblemLog, TraceGraph, check_graph
from masrl_kb.traces.trace_schema import decision_ids, enum_of

# Sums of float durations pick up binary noise (0.1 + 0.2); six decimals is a microsecond.
DIGITS = 6
STOP_DECISION = "O5"
UNLABELLED = "unlabelled"
# Events aimed at another agent: they make up the communication between agents.
ADDRESSED = frozenset({"message", "spawn", "despawn", "return"})


def spawn_depth(events: list[dict]) -> int:
    """Depth of the spawn tree: arcs run from the spawning agent to the spawned one."""
    agents: dict[str, int] = {}
    arcs = {
        (agents.setdefault(e["agent"], len(agents)), agents.setdefault(e["to"], len(agents)))
        for e in events
        if e["type"] == "spawn" and "to" in e
    }
    return depth(*adjacency(len(agents), arcs))


def agent_time(
    actors: list[str], starts: list[float], ends: list[float]
) -> dict[str, dict[str, float]]:
    """Per acting agent: busy time (the union of its events' intervals) and idle time (the
    rest of its span, from its first event's start to its last event's end)."""
    lanes: dict[str, list[int]] = defaultdict(list)
    for i, agent in enumerate(actors):
        lanes[agent].append(i)
    # Events are listed by start time by convention; then every lane is already in order.
    in_order = all(map(le, starts, islice(starts, 1, None)))
    result = {}
    for agent, lane in lanes.items():
        if not in_order:
            lane.sort(key=starts.__getitem__)
        lane_starts = list(map(starts.__getitem__, lane))
        # The latest end so far, before each event: a later start than that opens a gap.
        reach = list(accumulate(map(ends.__getitem__, lane), max))
        gaps = map(sub, islice(lane_starts, 1, None), reach)
        idle = sum(map(max, gaps, repeat(0.0)))
        busy = reach[-1] - lane_starts[0] - idle
        result[agent] = {"busy_s": round(busy, DIGITS), "idle_s": round(idle, DIGITS)}
    return result


def communication(addressed: list[dict]) -> list[dict]:
    """Events aimed at another agent (message, spawn, despawn, return) per sender -> recipient,
    most first."""
    pairs = Counter((e.get("from", e["agent"]), e["to"]) for e in addressed if "to" in e)
    ranked = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"from": src, "to": dst, "events": n} for (src, dst), n in ranked]


def decision_counts(decisions: list[dict]) -> dict[str, int]:
    """``orchestrator_decision`` events per decision O1-O5, and those without one."""
    counts = Counter(e.get("decision", UNLABELLED) for e in decisions)
    return dict.fromkeys([*decision_ids(), UNLABELLED], 0) | counts


def decision_latency(
    events: list[dict], positions: list[int], graph: TraceGraph
) -> dict[str, dict[str, float | int | None]]:
    """Per decision O1-O5: how many, and the mean and longest wait from the end of the
    latest event a decision depends on (its edges in) to the decision itself. Decisions with
    no edge in are counted but not timed."""
    ready: dict[int, float] = {}
    if positions:
        # Pick the arcs into decisions at C speed: a trace has many more arcs than decisions.
        is_decision = bytearray(len(events))
        for pos in positions:
            is_decision[pos] = 1
        into = compress(range(len(graph.targets)), map(is_decision.__getitem__, graph.targets))
        ends, sources, targets = graph.ends, graph.sources, graph.targets
        for j in into:
            dst, end = targets[j], ends[sources[j]]
            if end > ready.get(dst, -math.inf):
                ready[dst] = end
    waits: dict[str, list[float]] = {d: [] for d in decision_ids()}
    counts = dict.fromkeys(decision_ids(), 0)
    for pos in positions:
        label = events[pos].get("decision")
        if label not in counts:
            continue
        counts[label] += 1
        if pos in ready:
            waits[label].append(max(graph.starts[pos] - ready[pos], 0.0))
    return {
        d: {
            "events": counts[d],
            "mean_s": round(sum(w) / len(w), DIGITS) if w else None,
            "max_s": round(max(w), DIGITS) if w else None,
        }
        for d, w in waits.items()
    }


def tokens_by_agent(events: list[dict]) -> dict[str, float]:
    """The events' own ``tokens`` summed per acting agent (agents without any left out)."""
    counts: list[Any] = list(map(dict.get, events, repeat("tokens")))
    totals: dict[str, float] = {}
    for event, tokens in compress(zip(events, counts, strict=True), counts):
        totals[event["agent"]] = totals.get(event["agent"], 0) + tokens
    return totals


def trace_metrics(doc: dict, graph: TraceGraph | None = None) -> dict:
    """The metrics of a trace that passed validation, in the order the listing shows them;
    ``graph`` is the one :func:`inspect_trace` built (else it is built here)."""
    events = doc["events"]
    graph = graph or check_graph(doc, ProblemLog("trace"))
    starts = graph.starts
    # Columns read once with C-level getters; the per-type lists below are small.
    types = list(map(itemgetter("type"), events))
    actors = list(map(itemgetter("agent"), events))
    by_type = dict.fromkeys(enum_of("event_type"), 0) | Counter(types)
    of_type: dict[str, list[dict]] = {kind: [] for kind in ("spawn", "orchestrator_decision")}
    addressed = []
    decision_positions = []
    for pos, (event, kind) in enumerate(zip(events, types, strict=True)):
        if kind in ADDRESSED:
            addressed.append(event)
        if kind in of_type:
            of_type[kind].append(event)
            if kind == "orchestrator_decision":
                decision_positions.append(pos)
    spawns = of_type["spawn"]
    decisions = decision_counts(of_type["orchestrator_decision"])
    spawners = Counter(e["agent"] for e in spawns)
    agents = set(actors) | {e["to"] for e in spawns if "to" in e}
    ends = graph.ends
    weights = list(map(sub, ends, starts))
    work = round(sum(weights), DIGITS)
    rank = starts if graph.forward else None
    critical_s, path = heaviest_path(graph.order, graph.sources, graph.targets, weights, rank)
    del weights, types
    critical = round(critical_s, DIGITS)
    return {
        "events": len(events),
        "agents": len(agents),
        "events_by_type": by_type,
        "decisions": decisions,
        "decision_latency": decision_latency(events, decision_positions, graph),
        "has_stop_decision": decisions[STOP_DECISION] > 0,
        "max_fanout": max(spawners.values(), default=0),
        "spawn_depth": spawn_depth(spawns),
        "total_work_s": work,
        "critical_path_s": critical,
        "parallel_speedup": round(work / critical, DIGITS) if critical > 0 else None,
        "tokens": doc["costs"]["tokens"],
        "tokens_by_agent": tokens_by_agent(events),
        "wall_clock_s": doc["costs"]["wall_clock_s"],
        "critical_path": [events[i]["id"] for i in path],
        "agent_time": agent_time(actors, starts, ends),
        "communication": communication(addressed),
        "reported": dict(doc.get("metrics", {})),
    }
