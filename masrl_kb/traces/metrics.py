"""Metrics of a valid trace: counts, spawn shape, critical path and parallel speed-up."""

from __future__ import annotations

from collections import Counter

from masrl_kb.traces.graph import adjacency, depth, longest_path
from masrl_kb.traces.schema import decision_ids, event_types

# Sums of float durations pick up binary noise (0.1 + 0.2); six decimals is a microsecond.
DIGITS = 6
STOP_DECISION = "O5"

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
)


def duration(event: dict) -> float:
    """``t_end - t``, or 0 for an instantaneous event."""
    return event["t_end"] - event["t"] if "t_end" in event else 0.0


def spawn_depth(events: list[dict]) -> int:
    """Depth of the spawn tree: arcs run from the spawning agent to the spawned one."""
    agents: dict[str, int] = {}
    arcs = {
        (agents.setdefault(e["agent"], len(agents)), agents.setdefault(e["to"], len(agents)))
        for e in events
        if e["type"] == "spawn"
    }
    return depth(*adjacency(len(agents), arcs))


def critical_path(doc: dict, weights: list[float]) -> float:
    """The heaviest path, by event durations, through the non-temporal edges."""
    index = {e["id"]: i for i, e in enumerate(doc["events"])}
    arcs = [(index[e["src"]], index[e["dst"]]) for e in doc["edges"] if e["type"] != "temporal"]
    return longest_path(*adjacency(len(weights), arcs), weights)


def trace_metrics(doc: dict) -> dict:
    """The metrics of a trace that passed validation (keys in :data:`METRIC_KEYS` order)."""
    events = doc["events"]
    by_type = dict.fromkeys(event_types(), 0) | Counter(e["type"] for e in events)
    decisions = dict.fromkeys(decision_ids(), 0) | Counter(
        e["decision"] for e in events if e["type"] == "orchestrator_decision"
    )
    spawners = Counter(e["agent"] for e in events if e["type"] == "spawn")
    agents = {e["agent"] for e in events} | {e["to"] for e in events if e["type"] == "spawn"}
    weights = [duration(e) for e in events]
    work = round(sum(weights), DIGITS)
    critical = round(critical_path(doc, weights), DIGITS)
    return {
        "events": len(events),
        "agents": len(agents),
        "events_by_type": by_type,
        "decisions": decisions,
        "has_stop_decision": decisions[STOP_DECISION] > 0,
        "max_fanout": max(spawners.values(), default=0),
        "spawn_depth": spawn_depth(events),
        "total_work_s": work,
        "critical_path_s": critical,
        "parallel_speedup": round(work / critical, DIGITS) if critical > 0 else None,
        "tokens": doc["costs"]["tokens"],
        "wall_clock_s": doc["costs"]["wall_clock_s"],
    }
