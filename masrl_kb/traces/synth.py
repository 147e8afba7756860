"""Synthetic traces of any size: agent ``a0`` spawns (O1) a tree of agents (each up to
:data:`FANOUT` children) that do random work and return; ``a0`` aggregates and stops (O5).
An event starts when the last event it depends on has ended."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FANOUT = 8
TOOLS = ("search", "python", "browser", "shell")
UNTRUSTED_TOOLS = frozenset({"search", "browser"})
WORK_CYCLE = ("tool_call", "tool_result", "message")
# Duration ranges in milliseconds: integer times keep the JSON short and the sums exact.
DURATION_MS = {
    "orchestrator_decision": (200, 1000),
    "spawn": (50, 200),
    "tool_call": (500, 5000),
    "tool_result": (50, 300),
    "message": (200, 2000),
    "return": (100, 500),
    "aggregate": (500, 2000),
}
TOKENS = (20, 800)


def min_steps(agents: int) -> int:
    """Events needed before any work: O1, a spawn and a return per sub-agent, aggregate, O5."""
    return 2 * agents + 1


@dataclass
class _Run:
    """The trace under construction, with each agent's lane (its latest event)."""

    agents: int
    rng: random.Random
    events: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    end_ms: list[int] = field(default_factory=list)
    last: dict[int, int] = field(default_factory=dict)
    spawned_by: dict[int, int] = field(default_factory=dict)
    inbox: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    tokens: int = 0

    def add(self, agent: int, kind: str, preds: list[tuple[int, str]], **extra: str) -> int:
        """Append an event of ``agent`` that starts when its predecessors end."""
        start = max((self.end_ms[p] for p, _ in preds), default=0)
        end = start + self.rng.randint(*DURATION_MS[kind])
        idx = len(self.events)
        event = {"id": f"e{idx + 1}", "t": start / 1000, "t_end": end / 1000, "type": kind}
        self.events.append(event | {"agent": f"a{agent}"} | extra)
        self.edges += [{"src": f"e{p + 1}", "dst": event["id"], "type": k} for p, k in preds]
        self.end_ms.append(end)
        self.last[agent] = idx
        if kind in ("tool_call", "message"):
            self.tokens += self.rng.randint(*TOKENS)
        return idx

    def lane(self, agent: int) -> list[tuple[int, str]]:
        """What an agent's next event depends on: its previous event, or the spawn that made it."""
        if agent in self.last:
            return [(self.last[agent], "causal")]
        if agent in self.spawned_by:
            return [(self.spawned_by[agent], "spawn")]
        return []


def _parent(agent: int) -> int:
    return (agent - 1) // FANOUT


def _spawn_all(run: _Run) -> None:
    run.add(0, "orchestrator_decision", [], decision="O1")
    for child in range(1, run.agents):
        parent = _parent(child)
        run.spawned_by[child] = run.add(parent, "spawn", run.lane(parent), to=f"a{child}")


def _work(run: _Run, steps: int) -> None:
    done = [0] * run.agents
    tool = [TOOLS[0]] * run.agents
    for _ in range(steps):
        agent = run.rng.randrange(run.agents)
        kind = WORK_CYCLE[done[agent] % len(WORK_CYCLE)]
        done[agent] += 1
        if kind == "tool_call":
            tool[agent] = run.rng.choice(TOOLS)
            run.add(agent, kind, run.lane(agent), tool=tool[agent])
        elif kind == "tool_result":
            idx = run.add(agent, kind, [(run.last[agent], "tool_dependency")], tool=tool[agent])
            run.events[idx]["trusted"] = tool[agent] not in UNTRUSTED_TOOLS
        else:
            _message(run, agent)


def _message(run: _Run, agent: int) -> None:
    """Sub-agents report to their parent; ``a0`` briefs a child (or the user when alone)."""
    if agent:
        target = _parent(agent)
    elif run.agents > 1:
        target = run.rng.randrange(1, min(run.agents, FANOUT + 1))
    else:
        run.add(agent, "message", run.lane(agent), to="user")
        return
    idx = run.add(agent, "message", run.lane(agent), to=f"a{target}")
    run.inbox.setdefault(target, []).append((idx, "message"))


def _finish(run: _Run) -> None:
    returned: dict[int, list[tuple[int, str]]] = {}
    # Children have larger numbers than their parents, so counting down returns bottom-up.
    for agent in range(run.agents - 1, 0, -1):
        preds = run.lane(agent) + returned.get(agent, []) + run.inbox.get(agent, [])
        idx = run.add(agent, "return", preds, to=f"a{_parent(agent)}")
        returned.setdefault(_parent(agent), []).append((idx, "return"))
    preds = run.lane(0) + [(i, "aggregate") for i, _ in returned.get(0, [])] + run.inbox.get(0, [])
    run.add(0, "aggregate", preds)
    run.add(0, "orchestrator_decision", run.lane(0), decision="O5")


def synth_trace(agents: int, steps: int, seed: int = 0) -> dict:
    """A valid trace with exactly ``agents`` agents and ``steps`` events."""
    if agents < 1:
        raise ValueError("agents must be at least 1")
    if steps < min_steps(agents):
        raise ValueError(f"steps must be at least {min_steps(agents)} for {agents} agent(s)")
    run = _Run(agents, random.Random(seed))
    _spawn_all(run)
    _work(run, steps - min_steps(agents))
    _finish(run)
    kinds = [e["type"] for e in run.events]
    shape = "unknown" if agents == 1 else "centralized" if agents <= FANOUT + 1 else "hierarchical"
    return {
        "trace_id": f"synth-{agents}x{steps}-seed{seed}",
        "task_id": "synthetic",
        "system": "masrl-kb trace synth",
        "topology": shape,
        "events": sorted(run.events, key=lambda e: e["t"]),
        "edges": run.edges,
        "rewards": {"team": round(run.rng.random(), 3)},
        "costs": {
            "tokens": run.tokens,
            "wall_clock_s": max(run.end_ms) / 1000,
            "tool_calls": kinds.count("tool_call"),
            "messages": kinds.count("message"),
        },
    }
