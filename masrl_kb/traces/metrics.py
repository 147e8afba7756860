"""Metrics of a valid trace: counts, spawn shape, critical path, parallel speed-up, and what
explains a run (per-agent busy and idle time, communication per agent pair, decisions)."""

from __future__ import annotations

from collections import Counter
from operator import itemgetter

from masrl_kb.traces.graph import adjacency, dependency_order, depth, heaviest_path
from masrl_kb.traces.schema import decision_ids, event_types

# Sums of float durations pick up binary noise (0.1 + 0.2); six decimals is a microsecond.
DIGITS = 6
STOP_DECISION = "O5"
UNLABELLED = "unlabelled"
# Events aimed at another agent: they make up the communication between agents.
ADDRESSED = frozenset({"message", "spawn", "despawn", "return"})

METRIC_KEYS = (
    "events",
    "agents",
    "events_by_type",
    "decisions",
    "has_stop_decision",
    "max_fanout",
    "spawn_depth",
    "total_work_s",
    "critical_path_s",
    "parallel_speedup",
    "tokens",
    "wall_clock_s",
    "critical_path",
    "agent_time",
    "communication",
    "reported",
)


def duration(event: dict) -> float:
    """``t_end - t``, or 0 for an instantaneous event."""
    return event["t_end"] - event["t"] if "t_end" in event else 0.0


def _end(event: dict) -> float:
    return event.get("t_end", event["t"])


def spawn_depth(events: list[dict]) -> int:
    """Depth of the spawn tree: arcs run from the spawning agent to the spawned one."""
    agents: dict[str, int] = {}
    arcs = {
        (agents.setdefault(e["agent"], len(agents)), agents.setdefault(e["to"], len(agents)))
        for e in events
        if e["type"] == "spawn" and "to" in e
    }
    return depth(*adjacency(len(agents), arcs))


def dependency_graph(doc: dict) -> tuple[list[int], list[int], list[int]]:
    """A topological order of the events and the non-temporal edges as position arcs."""
    index = {e["id"]: i for i, e in enumerate(doc["events"])}
    arcs = [(index[e["src"]], index[e["dst"]]) for e in doc["edges"] if e["type"] != "temporal"]
    sources, targets = [a for a, _ in arcs], [b for _, b in arcs]
    return dependency_order(len(index), sources, targets), sources, targets


def agent_time(events: list[dict]) -> dict[str, dict[str, float]]:
    """Per acting agent: busy time (the union of its events' intervals) and idle time (the
    rest of its span, from its first event's start to its last event's end)."""
    return _agent_time(events, [e["agent"] for e in events])


def _agent_time(events: list[dict], actors: list[str]) -> dict[str, dict[str, float]]:
    starts = [e["t"] for e in events]
    ends = [e.get("t_end", t) for e, t in zip(events, starts, strict=True)]
    lanes: dict[str, list[int]] = {}
    for i, agent in enumerate(actors):
        lane = lanes.get(agent)
        if lane is None:
            lanes[agent] = [i]
        else:
            lane.append(i)
    result = {}
    for agent, lane in lanes.items():
        lane.sort(key=starts.__getitem__)
        busy = 0.0
        first = run_start = run_end = last = starts[lane[0]]
        for i in lane:
            start, end = starts[i], ends[i]
            if start > run_end:
                busy += run_end - run_start
                run_start = start
            if end > run_end:
                run_end = end
            if end > last:
                last = end
        busy += run_end - run_start
        result[agent] = {
            "busy_s": round(busy, DIGITS),
            "idle_s": round(max(last - first - busy, 0.0), DIGITS),
        }
    return result


def communication(events: list[dict]) -> list[dict]:
    """Events aimed at another agent (message, spawn, despawn, return) per sender -> recipient,
    most first."""
    return _communication([e for e in events if e["type"] in ADDRESSED])


def _communication(addressed: list[dict]) -> list[dict]:
    pairs = Counter((e.get("from", e["agent"]), e["to"]) for e in addressed if "to" in e)
    ranked = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"from": src, "to": dst, "events": n} for (src, dst), n in ranked]


def decision_counts(events: list[dict]) -> dict[str, int]:
    """``orchestrator_decision`` events per decision O1-O5, and those without one."""
    return _decision_counts([e for e in events if e["type"] == "orchestrator_decision"])


def _decision_counts(decisions: list[dict]) -> dict[str, int]:
    counts = Counter(e.get("decision", UNLABELLED) for e in decisions)
    return dict.fromkeys([*decision_ids(), UNLABELLED], 0) | counts


def trace_metrics(doc: dict, graph: tuple[list[int], list[int], list[int]] | None = None) -> dict:
    """The metrics of a trace that passed validation (keys in :data:`METRIC_KEYS` order).

    ``graph`` is the dependency graph the validator built (a topological order, the arcs'
    sources and targets); without it the graph is built here.
    """
    events = doc["events"]
    order, sources, targets = graph if graph is not None else dependency_graph(doc)
    # Columns read once with C-level getters; the per-type lists below are small.
    types = list(map(itemgetter("type"), events))
    actors = list(map(itemgetter("agent"), events))
    by_type = dict.fromkeys(event_types(), 0) | Counter(types)
    of_type: dict[str, list[dict]] = {kind: [] for kind in ("spawn", "orchestrator_decision")}
    addressed = []
    for event, kind in zip(events, types, strict=True):
        if kind in ADDRESSED:
            addressed.append(event)
        if kind in of_type:
            of_type[kind].append(event)
    spawns = of_type["spawn"]
    decisions = _decision_counts(of_type["orchestrator_decision"])
    spawners = Counter(e["agent"] for e in spawns)
    agents = set(actors) | {e["to"] for e in spawns if "to" in e}
    weights = [e["t_end"] - e["t"] if "t_end" in e else 0.0 for e in events]
    work = round(sum(weights), DIGITS)
    critical_s, path = heaviest_path(order, sources, targets, weights)
    del weights, types
    critical = round(critical_s, DIGITS)
    return {
        "events": len(events),
        "agents": len(agents),
        "events_by_type": by_type,
        "decisions": decisions,
        "has_stop_decision": decisions[STOP_DECISION] > 0,
        "max_fanout": max(spawners.values(), default=0),
        "spawn_depth": spawn_depth(spawns),
        "total_work_s": work,
        "critical_path_s": critical,
        "parallel_speedup": round(work / critical, DIGITS) if critical > 0 else None,
        "tokens": doc["costs"]["tokens"],
        "wall_clock_s": doc["costs"]["wall_clock_s"],
        "critical_path": [events[i]["id"] for i in path],
        "agent_time": _agent_time(events, actors),
        "communication": _communication(addressed),
        "reported": dict(doc.get("metrics", {})),
    }
