"""Trace metrics on the six examples (worked out by hand), the graph helpers and synth."""

from __future__ import annotations

import pytest

from masrl_kb.traces.graph import (
    adjacency,
    depth,
    find_cycles,
    heaviest_path,
    topological_order,
)
from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.render import load_examples
from masrl_kb.traces.synth import min_steps, synth_trace
from masrl_kb.traces.trace_checks import validate_trace

NO_EVENTS = {
    "orchestrator_decision": 0,
    "spawn": 0,
    "despawn": 0,
    "message": 0,
    "tool_call": 0,
    "tool_result": 0,
    "return": 0,
    "aggregate": 0,
    "human_intervention": 0,
    "safety_event": 0,
}
NO_DECISIONS = {"O1": 0, "O2": 0, "O3": 0, "O4": 0, "O5": 0, "unlabelled": 0}

# Durations (t_end - t) are listed per event; the critical path is the heaviest chain of
# non-temporal edges, summing the durations of its events.
EXPECTED = {
    "centralized": {
        "events": 10,
        "agents": 3,  # orch, w1, w2
        "events_by_type": NO_EVENTS
        | {"orchestrator_decision": 3, "spawn": 2, "tool_call": 2, "return": 2, "aggregate": 1},
        "decisions": NO_DECISIONS | {"O1": 1, "O2": 1, "O5": 1},
        "has_stop_decision": True,
        "max_fanout": 2,  # orch spawns w1 and w2
        "spawn_depth": 1,
        # e1..e10: 1 + .5 + .5 + .5 + 3 + 2 + 1 + 1 + 2 + .5
        "total_work_s": 12.0,
        # e1 1 + e2 .5 + e3 .5 + e5 3 + e7 1 + e9 2 + e10 .5 (the w2 branch gives 7.5)
        "critical_path_s": 8.5,
        "parallel_speedup": 1.411765,  # 12 / 8.5
        "tokens": 5400,
        "wall_clock_s": 8.5,
    },
    "planner_executor_critic": {
        "events": 11,
        "agents": 3,  # planner, executor, critic
        "events_by_type": NO_EVENTS
        | {"orchestrator_decision": 2, "message": 5, "tool_call": 2, "tool_result": 2},
        "decisions": NO_DECISIONS | {"O2": 1, "O5": 1},
        "has_stop_decision": True,
        "max_fanout": 0,
        "spawn_depth": 0,
        # 1 + 1 + 3 + .5 + .5 + 1 + 2 + .5 + .5 + 1 + .5, all in one chain
        "total_work_s": 11.5,
        "critical_path_s": 11.5,
        "parallel_speedup": 1.0,
        "tokens": 3100,
        "wall_clock_s": 11.5,
    },
    "debate": {
        "events": 9,
        "agents": 3,  # moderator, d1, d2
        "events_by_type": NO_EVENTS
        | {"orchestrator_decision": 2, "spawn": 2, "message": 4, "aggregate": 1},
        "decisions": NO_DECISIONS | {"O1": 1, "O5": 1},
        "has_stop_decision": True,
        "max_fanout": 2,
        "spawn_depth": 1,
        # .5 + .5 + .5 + 2 + 3 + 1 + 2 + 1 + .5
        "total_work_s": 11.0,
        # e1 .5 + e3 .5 + e5 3 + e7 2 + e8 1 + e9 .5 (via e4 -> e7 only 6.5)
        "critical_path_s": 7.5,
        "parallel_speedup": 1.466667,  # 11 / 7.5
        "tokens": 4200,
        "wall_clock_s": 7.5,
    },
    "swarm": {
        "events": 11,
        "agents": 5,  # coord, s1..s4
        "events_by_type": NO_EVENTS
        | {"orchestrator_decision": 2, "spawn": 4, "tool_call": 4, "aggregate": 1},
        "decisions": NO_DECISIONS | {"O1": 1, "O5": 1},
        "has_stop_decision": True,
        "max_fanout": 4,
        "spawn_depth": 1,
        # 1 + 4 * 0 (instant spawns) + 3 + 4 + 2 + 5 + 1 + .5
        "total_work_s": 16.5,
        # e1 1 + e5 0 + e9 5 + e10 1 + e11 .5; the temporal chain e2..e5 adds nothing
        "critical_path_s": 7.5,
        "parallel_speedup": 2.2,  # 16.5 / 7.5
        "tokens": 6000,
        "wall_clock_s": 7.5,
    },
    "hierarchical": {
        "events": 15,
        "agents": 6,  # root, m1, m2, w1, w2, w3
        "events_by_type": NO_EVENTS
        | {"orchestrator_decision": 3, "spawn": 5, "tool_call": 3, "aggregate": 2, "return": 2},
        "decisions": NO_DECISIONS | {"O1": 2, "O5": 1},
        "has_stop_decision": True,
        "max_fanout": 2,  # root and m1 spawn two each, m2 one
        "spawn_depth": 2,  # root -> m1 -> w1
        # 1 + 6 * .5 (e2..e7) + 4 + 2 + 3 + 1 + 1 + .5 + 1 + .5
        "total_work_s": 17.0,
        # e1 1 + e2 .5 + e4 .5 + e5 .5 + e8 4 + e11 1 + e13 .5 + e14 1 + e15 .5
        "critical_path_s": 9.5,
        "parallel_speedup": 1.789474,  # 17 / 9.5
        "tokens": 9800,
        "wall_clock_s": 9.5,
    },
    "harness": {
        "events": 11,
        "agents": 3,  # harness, coder, user (the human)
        "events_by_type": NO_EVENTS
        | {
            "orchestrator_decision": 2,
            "spawn": 1,
            "tool_call": 2,
            "tool_result": 2,
            "safety_event": 1,
            "human_intervention": 1,
            "return": 1,
            "despawn": 1,
        },
        "decisions": NO_DECISIONS | {"O2": 1, "O5": 1},
        "has_stop_decision": True,
        "max_fanout": 1,
        "spawn_depth": 1,
        # .5 + .5 + 2 + .5 + .5 + 6 + 2 + .5 + .5 + 0 + .5, one chain (temporal e3 -> e5 aside)
        "total_work_s": 13.5,
        "critical_path_s": 13.5,
        "parallel_speedup": 1.0,
        "tokens": 7300,
        "wall_clock_s": 13.5,
    },
}


def test_there_is_one_example_per_topology() -> None:
    examples = load_examples()
    assert sorted(examples) == sorted(EXPECTED)
    assert [doc["topology"] for doc in examples.values()] == list(examples)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_metrics_match_hand_worked_values(name: str) -> None:
    doc = load_examples()[name]
    assert validate_trace(doc, name) == []
    metrics = trace_metrics(doc)
    assert {key: metrics[key] for key in EXPECTED[name]} == EXPECTED[name]


def test_explaining_metrics_of_the_centralized_example() -> None:
    metrics = trace_metrics(load_examples()["centralized"])
    # The w1 branch: e1 1 + e2 .5 + e3 .5 + e5 3 + e7 1 + e9 2 + e10 .5 = 8.5
    assert metrics["critical_path"] == ["e1", "e2", "e3", "e5", "e7", "e9", "e10"]
    assert metrics["agent_time"] == {
        # orch works 0-2 and 6-8.5 (4.5 s) and waits 2-6 for its workers
        "orch": {"busy_s": 4.5, "idle_s": 4.0},
        "w1": {"busy_s": 4.0, "idle_s": 0.0},  # 2-5 search, 5-6 return
        "w2": {"busy_s": 3.0, "idle_s": 0.0},  # 2-4 python, 4-5 return
    }
    # spawns out, returns back, one each
    assert metrics["communication"] == [
        {"from": "orch", "to": "w1", "events": 1},
        {"from": "orch", "to": "w2", "events": 1},
        {"from": "w1", "to": "orch", "events": 1},
        {"from": "w2", "to": "orch", "events": 1},
    ]
    assert metrics["reported"] == {}


def test_critical_path_events_add_up_to_its_length() -> None:
    for doc in load_examples().values():
        metrics = trace_metrics(doc)
        by_id = {e["id"]: e for e in doc["events"]}
        total = sum(
            e.get("t_end", e["t"]) - e["t"] for e in map(by_id.get, metrics["critical_path"])
        )
        assert round(total, 6) == metrics["critical_path_s"]


def test_busy_time_never_counts_overlap_twice() -> None:
    events = [
        {"id": "a", "t": 0, "t_end": 4, "type": "tool_call", "agent": "x", "tool": "s"},
        {"id": "b", "t": 1, "t_end": 2, "type": "tool_call", "agent": "x", "tool": "s"},
        {"id": "c", "t": 6, "t_end": 7, "type": "message", "agent": "x", "to": "y"},
        {"id": "d", "t": 9, "type": "message", "agent": "x", "from": "z", "to": "y"},
    ]
    metrics = trace_metrics(_tiny(events, []))
    assert metrics["agent_time"] == {"x": {"busy_s": 5.0, "idle_s": 4.0}}
    assert metrics["communication"] == [
        {"from": "x", "to": "y", "events": 1},
        {"from": "z", "to": "y", "events": 1},
    ]


def test_unlabelled_decisions_and_reported_metrics() -> None:
    events = [
        {"id": "a", "t": 0, "type": "orchestrator_decision", "agent": "o"},
        {"id": "b", "t": 1, "type": "orchestrator_decision", "agent": "o", "decision": "O5"},
    ]
    doc = _tiny(events, []) | {"metrics": {"task_success": 1, "protocol_overhead": 0.25}}
    metrics = trace_metrics(doc)
    assert metrics["decisions"] == NO_DECISIONS | {"O5": 1, "unlabelled": 1}
    assert metrics["reported"] == {"task_success": 1, "protocol_overhead": 0.25}
    # the unlabelled one is not an O1-O5; the O5 has no edge in, so it is counted, not timed
    assert metrics["decision_latency"]["O5"] == {"events": 1, "mean_s": None, "max_s": None}


def test_decision_latency_is_the_wait_after_the_latest_input() -> None:
    events = [
        {"id": "a", "t": 0, "t_end": 2, "type": "message", "agent": "x", "to": "o", "tokens": 5},
        {"id": "b", "t": 0, "t_end": 3.5, "type": "message", "agent": "y", "to": "o"},
        {"id": "c", "t": 4, "type": "orchestrator_decision", "agent": "o", "decision": "O4"},
        {"id": "d", "t": 6, "type": "orchestrator_decision", "agent": "o", "decision": "O4"},
        {"id": "e", "t": 6, "t_end": 7, "type": "message", "agent": "x", "tokens": 2.5},
    ]
    edges = [{"src": s, "dst": d, "type": "aggregate"} for s, d in ("ac", "bc", "cd")]
    metrics = trace_metrics(_tiny(events, edges))
    # c waits 0.5 s after b (the later of a and b), d 2 s after c
    assert metrics["decision_latency"]["O4"] == {"events": 2, "mean_s": 1.25, "max_s": 2.0}
    assert metrics["decision_latency"]["O1"] == {"events": 0, "mean_s": None, "max_s": None}
    assert metrics["tokens_by_agent"] == {"x": 7.5}


def test_metric_keys_are_the_documented_ones() -> None:
    keys = ["events", "agents", "events_by_type", "decisions", "decision_latency"]
    keys += ["has_stop_decision", "max_fanout", "spawn_depth", "total_work_s", "critical_path_s"]
    keys += ["parallel_speedup", "tokens", "tokens_by_agent", "wall_clock_s"]
    keys += ["critical_path", "agent_time", "communication", "reported"]
    assert list(trace_metrics(load_examples()["swarm"])) == keys


def _tiny(events: list[dict], edges: list[dict]) -> dict:
    return {
        "trace_id": "t",
        "task_id": "t",
        "events": events,
        "edges": edges,
        "rewards": {},
        "costs": {"tokens": 0, "wall_clock_s": 0},
    }


def test_speedup_is_null_when_nothing_takes_time() -> None:
    doc = _tiny([{"id": "a", "t": 0, "type": "aggregate", "agent": "x"}], [])
    metrics = trace_metrics(doc)
    assert (metrics["critical_path_s"], metrics["parallel_speedup"]) == (0.0, None)
    assert metrics["has_stop_decision"] is False


def test_a_lone_event_is_its_own_critical_path() -> None:
    events = [
        {"id": "a", "t": 0, "t_end": 2, "type": "aggregate", "agent": "x"},
        {"id": "b", "t": 0, "t_end": 3, "type": "aggregate", "agent": "y"},
    ]
    metrics = trace_metrics(_tiny(events, []))
    assert (metrics["total_work_s"], metrics["critical_path_s"]) == (5.0, 3.0)
    assert metrics["parallel_speedup"] == pytest.approx(5 / 3, abs=1e-6)


def test_temporal_edges_do_not_lengthen_the_critical_path() -> None:
    events = [
        {"id": "a", "t": 0, "t_end": 2, "type": "aggregate", "agent": "x"},
        {"id": "b", "t": 2, "t_end": 5, "type": "aggregate", "agent": "x"},
    ]
    temporal = trace_metrics(_tiny(events, [{"src": "a", "dst": "b", "type": "temporal"}]))
    causal = trace_metrics(_tiny(events, [{"src": "a", "dst": "b", "type": "causal"}]))
    assert temporal["critical_path_s"] == 3.0
    assert causal["critical_path_s"] == 5.0


def test_spawn_depth_counts_levels_not_spawns() -> None:
    spawns = [("a", "b"), ("a", "c"), ("b", "d"), ("d", "e"), ("c", "f")]
    events = [
        {"id": f"s{i}", "t": 0, "type": "spawn", "agent": p, "to": c}
        for i, (p, c) in enumerate(spawns)
    ]
    metrics = trace_metrics(_tiny(events, []))
    assert metrics["spawn_depth"] == 3  # a -> b -> d -> e
    assert metrics["max_fanout"] == 2  # a spawns b and c
    assert metrics["agents"] == 6  # the spawned e and f count though they never act


def test_float_noise_is_rounded_away() -> None:
    events = [
        {"id": "a", "t": 0, "t_end": 0.1, "type": "aggregate", "agent": "x"},
        {"id": "b", "t": 0.1, "t_end": 0.3, "type": "aggregate", "agent": "x"},
    ]
    metrics = trace_metrics(_tiny(events, [{"src": "a", "dst": "b", "type": "causal"}]))
    assert metrics["total_work_s"] == 0.3  # not 0.30000000000000004


# ------------------------------------------------------------------ graph


def _graph(n: int, arcs: list[tuple[int, int]]) -> tuple[list[list[int]], list[list[int]]]:
    return adjacency(n, arcs)


def _longest(n: int, arcs: list[tuple[int, int]], weight: list[float]) -> float:
    order = topological_order(*_graph(n, arcs))
    return heaviest_path(order, [a for a, _ in arcs], [b for _, b in arcs], weight)[0]


def test_every_separate_cycle_is_found() -> None:
    # 0 <-> 1 feeds 2 <-> 3, and 3 -> 4 hangs off the second cycle.
    succ, pred = _graph(5, [(0, 1), (1, 0), (1, 2), (2, 3), (3, 2), (3, 4)])
    assert find_cycles(succ, pred) == [[0, 1], [2, 3]]


def test_cycle_found_from_a_node_entered_from_outside() -> None:
    # 0 -> 1 -> 2 -> 3 -> 1: node 0 is outside the cycle.
    succ, pred = _graph(4, [(0, 1), (1, 2), (2, 3), (3, 1)])
    assert find_cycles(succ, pred) == [[1, 2, 3]]


def test_acyclic_graph_has_no_cycles() -> None:
    arcs = [(0, 1), (0, 2), (1, 3), (2, 3)]
    succ, pred = _graph(4, arcs)
    assert find_cycles(succ, pred) == []
    assert depth(succ, pred) == 2
    assert _longest(4, arcs, [1.0, 5.0, 2.0, 1.0]) == 7.0


def test_heaviest_path_refuses_a_cycle() -> None:
    with pytest.raises(ValueError, match="cycle"):
        _longest(2, [(0, 1), (1, 0)], [1.0, 1.0])


def test_long_chain_needs_no_recursion() -> None:
    n = 200_000
    arcs = [(i, i + 1) for i in range(n - 1)]
    succ, pred = _graph(n, arcs)
    assert depth(succ, pred) == n - 1
    assert _longest(n, arcs, [1.0] * n) == n


# ------------------------------------------------------------------ synth


@pytest.mark.parametrize(("agents", "steps"), [(1, 3), (1, 10), (2, 5), (9, 40), (300, 4000)])
def test_synthetic_trace_is_valid_with_the_requested_size(agents: int, steps: int) -> None:
    doc = synth_trace(agents, steps, seed=7)
    assert validate_trace(doc, "synth") == []
    metrics = trace_metrics(doc)
    assert (metrics["events"], metrics["agents"]) == (steps, agents)
    assert metrics["has_stop_decision"] is True
    assert metrics["tokens"] == doc["costs"]["tokens"]
    assert doc["costs"]["tool_calls"] == metrics["events_by_type"]["tool_call"]


def test_large_synthetic_team_is_hierarchical_and_parallel() -> None:
    metrics = trace_metrics(synth_trace(300, 4000))
    assert metrics["max_fanout"] == 8
    assert metrics["spawn_depth"] == 3  # 1 + 8 + 64 < 300 <= 1 + 8 + 64 + 512
    assert metrics["parallel_speedup"] > 10


def test_synthetic_trace_depends_on_the_seed_only() -> None:
    assert synth_trace(5, 50, seed=1) == synth_trace(5, 50, seed=1)
    assert synth_trace(5, 50, seed=1) != synth_trace(5, 50, seed=2)


def test_synthetic_trace_events_are_in_time_order() -> None:
    starts = [event["t"] for event in synth_trace(20, 500)["events"]]
    assert starts == sorted(starts)


def test_synth_refuses_too_few_steps() -> None:
    assert min_steps(300) == 601
    with pytest.raises(ValueError, match="at least 601"):
        synth_trace(300, 600)
    with pytest.raises(ValueError, match="at least 1"):
        synth_trace(0, 10)


def test_busy_time_does_not_depend_on_the_listing_order() -> None:
    events = [
        {"id": "a", "t": 0, "t_end": 4, "type": "tool_call", "agent": "x", "tool": "s"},
        {"id": "b", "t": 1, "t_end": 2, "type": "tool_call", "agent": "y", "tool": "s"},
        {"id": "c", "t": 6, "t_end": 7, "type": "message", "agent": "x", "to": "y"},
        {"id": "d", "t": 3, "t_end": 5, "type": "message", "agent": "y", "to": "x"},
    ]
    listed = trace_metrics(_tiny(events, []))["agent_time"]
    reversed_ = trace_metrics(_tiny(events[::-1], []))["agent_time"]
    assert (
        listed
        == reversed_
        == {
            "x": {"busy_s": 5.0, "idle_s": 2.0},
            "y": {"busy_s": 3.0, "idle_s": 1.0},
        }
    )
