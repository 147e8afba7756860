"""Trace validation: the JSON Schema plus the graph rules a schema cannot express.

:func:`inspect_file` reads, checks and indexes a trace in one pass; the metrics reuse its
:class:`TraceGraph`, so measuring never validates twice.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from masrl_kb.traces.graph import adjacency, find_cycles, topological_order
from masrl_kb.traces.jsonfile import read_json
from masrl_kb.traces.trace_schema import ITEM_ARRAYS, compiled_checks, explainer

MAX_CYCLE_SHOWN = 8
# Messages echo values (a 5 MB string, a 400-digit number): cut them to a readable length.
MAX_MESSAGE = 300
# C0 and C1 controls, line and paragraph separators, and bidirectional overrides.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NUMBER_TYPES: frozenset[type[float]] = frozenset({int, float})
_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
_JSON_KINDS |= dict.fromkeys([int, float], "a number")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a trace file, placed by a JSON path or an event: a trace is one
    JSON document, often one line of 100 MB, so ``path:line:`` would place nothing."""

    file: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.message}"


@dataclass
class ProblemLog:
    """The first ``limit`` problems of a file (all when None) and a count of the rest (a lower
    bound when ``inexact``: past the limit a failing event or edge counts once)."""

    file: str
    limit: int | None = None
    shown: list[Problem] = field(default_factory=list)
    more: int = 0
    inexact: bool = False

    def add(self, where: str, message: str) -> None:
        if self.full:
            self.more += 1
        else:
            self.shown.append(Problem(self.file, shorten(where), shorten(message)))

    @property
    def full(self) -> bool:
        return self.limit is not None and len(self.shown) >= self.limit

    @property
    def total(self) -> int:
        return len(self.shown) + self.more

    def __bool__(self) -> bool:
        return self.total > 0

    def summary(self) -> str | None:
        """``... and 12 more problem(s) not shown`` when some were left out."""
        if not self.more:
            return None
        bound = "at least " if self.inexact else ""
        return f"{self.file}: ... and {bound}{self.more} more problem(s) not shown"


def printable(text: str) -> str:
    """``text`` with control characters (ESC, BEL, NUL, newlines...) shown as escapes, so a
    value from a trace cannot drive the terminal or forge an output line."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def shorten(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` made printable and cut to ``limit`` characters, saying how much was left out."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return printable(text)


def json_path(parts: Iterable[str | int]) -> str:
    """``$.events[3].t`` from jsonschema's path parts."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{json.dumps(part)}]"
    return out


# ------------------------------------------------------------------ reading


def read_trace(path: str | os.PathLike[str]) -> tuple[dict | None, list[Problem]]:
    """Parse a trace file; on failure return ``None`` and the reason, never raise."""
    file = str(path)
    doc, reason = read_json(path)
    if reason is not None:
        return None, [Problem(file, "$", shorten(reason))]
    if not isinstance(doc, dict):
        kind = _JSON_KINDS.get(type(doc), type(doc).__name__)
        return None, [Problem(file, "$", f"a trace must be a JSON object, not {kind}")]
    return doc, []


# ------------------------------------------------------------------ schema


def _explain(part: str, value: Any, prefix: list[str | int], log: ProblemLog) -> None:
    """jsonschema's own messages for a part the compiled check did not pass."""
    if log.full:
        # Past the limit only the count matters: a failing part counts once.
        if any(True for _ in explainer(part).iter_errors(value)):
            log.more += 1
            log.inexact = True
        return
    for err in explainer(part).iter_errors(value):
        log.add(json_path(prefix + list(err.absolute_path)), err.message)


def check_schema(doc: dict, log: ProblemLog) -> None:
    """Log everything the JSON Schema rejects, one problem per failing keyword."""
    checks = compiled_checks()
    if not checks["trace"](doc):
        _explain("trace", doc, [], log)
    for name in ITEM_ARRAYS:
        items = doc.get(name)
        if not isinstance(items, list):
            continue
        check = checks[name]
        if all(map(check, items)):  # the common case, without a Python-level loop
            continue
        for i, item in enumerate(items):
            if not check(item):
                _explain(name, item, [name, i], log)


def schema_problems(doc: dict, file: str) -> list[Problem]:
    """Everything the JSON Schema rejects, one problem per failing keyword."""
    log = ProblemLog(file)
    check_schema(doc, log)
    return log.shown


# ------------------------------------------------------------------- graph


@dataclass
class TraceGraph:
    """The event index and dependency graph of a trace: non-temporal edges as arcs
    ``sources[j] -> targets[j]``, and a topological ``order`` (short when there is a cycle)."""

    events: list
    index: dict[str, int]
    sources: list[int]
    targets: list[int]
    order: list[int]
    starts: list[float]
    ends: list[float]
    # Every arc ends at a later start than it begins: then ``starts`` ranks the events in a
    # topological order too.
    forward: bool

    @property
    def acyclic(self) -> bool:
        return len(self.order) == len(self.events)


def _index_events(events: list, log: ProblemLog) -> tuple[dict[str, int], list[float], list[float]]:
    """Event id -> position of its first occurrence, and each event's start and end (NaN if
    unknown); logs duplicate ids and events that end before they start."""
    index: dict[str, int] = {}
    starts: list[float] = []
    ends: list[float] = []
    nan = math.nan
    numbers = _NUMBER_TYPES
    for i, event in enumerate(events):
        if event.__class__ is not dict:
            starts.append(nan)
            ends.append(nan)
            continue
        t: Any = event.get("t")
        t_end: Any = event.get("t_end", t)
        starts.append(t if t.__class__ in numbers else nan)
        ends.append(t_end if t_end.__class__ in numbers else nan)
        eid = event.get("id")
        if eid.__class__ is not str:
            continue
        if t_end.__class__ in numbers and t.__class__ in numbers and t_end < t:
            log.add(f"event {eid}", f"ends at {t_end} before it starts ({t})")
        first = index.setdefault(eid, i)
        if first != i:
            log.add(f"event {eid}", f"duplicate id at $.events[{i}] (first at $.events[{first}])")
    return index, starts, ends


def _dependency_arcs(
    doc: dict, events: list, index: dict[str, int], starts: list[float], log: ProblemLog
) -> tuple[list[int], list[int], bool]:
    """The non-temporal edges as arcs between event positions, and whether every arc ends at
    a later start than it begins. Logs dangling endpoints (of temporal edges too) and
    destinations that start before their source (NaN starts never compare)."""
    edges = doc.get("edges")
    sources: list[int] = []
    targets: list[int] = []
    forward = True
    for j, edge in enumerate(edges if isinstance(edges, list) else []):
        if edge.__class__ is not dict:
            continue
        src_id, dst_id = edge.get("src"), edge.get("dst")
        src = index.get(src_id) if src_id.__class__ is str else None
        dst = index.get(dst_id) if dst_id.__class__ is str else None
        if src is None or dst is None:
            for key, ref, pos in (("src", src_id, src), ("dst", dst_id, dst)):
                if isinstance(ref, str) and pos is None:
                    log.add(f"$.edges[{j}].{key}", f"no event has id {ref!r}")
            continue
        kind = edge.get("type")
        if kind == "temporal":
            continue
        sources.append(src)
        targets.append(dst)
        if starts[dst] <= starts[src]:
            forward = False
            if starts[dst] < starts[src]:
                log.add(
                    f"event {events[dst]['id']}",
                    f"starts at {starts[dst]} before its {kind} source {events[src]['id']} "
                    f"({starts[src]})",
                )
    return sources, targets, forward


def _cycle_text(ids: list[str], noun: str) -> str:
    shown = ids if len(ids) <= MAX_CYCLE_SHOWN else ids[:MAX_CYCLE_SHOWN] + ["..."]
    return " -> ".join([*shown, ids[0]]) + (f" ({len(ids)} {noun})" if len(ids) > 2 else "")


def _check_cycles(graph: TraceGraph, log: ProblemLog) -> None:
    if graph.acyclic:
        return
    succ, pred = adjacency(len(graph.events), zip(graph.sources, graph.targets, strict=True))
    for cycle in find_cycles(succ, pred):
        ids = [graph.events[v]["id"] for v in cycle]
        text = _cycle_text(ids, "events")
        log.add(f"event {ids[0]}", f"non-temporal edges form a cycle: {text}")


def _check_spawn_loops(events: list, log: ProblemLog) -> None:
    """Spawns must form a tree-like graph: an agent may not (indirectly) spawn its spawner."""
    agents: dict[str, int] = {}
    last_spawn: dict[tuple[int, int], int] = {}  # agent arc -> position of its latest spawn
    for i, event in enumerate(events):
        if not isinstance(event, dict) or event.get("type") != "spawn":
            continue
        parent, child = event.get("agent"), event.get("to")
        if isinstance(parent, str) and isinstance(child, str):
            arc = (agents.setdefault(parent, len(agents)), agents.setdefault(child, len(agents)))
            last_spawn[arc] = i
    succ, pred = adjacency(len(agents), last_spawn)
    names = list(agents)
    for cycle in find_cycles(succ, pred):
        arcs = zip(cycle, cycle[1:] + cycle[:1], strict=True)
        # Blame the spawn that closed the loop: the latest one listed.
        closing = events[max(last_spawn[arc] for arc in arcs)]
        loop = _cycle_text([names[v] for v in cycle], "agents")
        log.add(f"event {closing.get('id')}", f"spawn loop between agents: {loop}")


def check_graph(doc: dict, log: ProblemLog) -> TraceGraph:
    """Log the rules a schema cannot express and return the graph (empty without events);
    malformed parts are skipped: the schema reports them."""
    events = doc.get("events")
    if not isinstance(events, list):
        return TraceGraph([], {}, [], [], [], [], [], True)
    index, starts, ends = _index_events(events, log)
    sources, targets, forward = _dependency_arcs(doc, events, index, starts, log)
    # Arcs that all run forward in time cannot close a cycle: sorting by start is an order
    # (unless a start is NaN, which never compares).
    forward = forward and not any(math.isnan(t) for t in starts if t.__class__ is float)
    if forward:
        order = sorted(range(len(events)), key=starts.__getitem__)
    else:
        order = topological_order(*adjacency(len(events), zip(sources, targets, strict=True)))
    graph = TraceGraph(events, index, sources, targets, order, starts, ends, forward)
    _check_cycles(graph, log)
    _check_spawn_loops(events, log)
    return graph


def validate_trace(doc: dict, file: str) -> list[Problem]:
    """All schema and graph problems of a parsed trace."""
    return inspect_trace(doc, file).log.shown


@dataclass
class Inspection:
    """One file read and checked: the trace (if it parsed), its problems and its graph."""

    doc: dict | None
    log: ProblemLog
    graph: TraceGraph | None


def inspect_trace(doc: dict, file: str, limit: int | None = None) -> Inspection:
    """Check a parsed trace against the schema and graph rules, keeping the graph."""
    log = ProblemLog(file, limit)
    check_schema(doc, log)
    graph = check_graph(doc, log)
    return Inspection(doc, log, graph)


def inspect_file(path: str | os.PathLike[str], limit: int | None = None) -> Inspection:
    """Read and check one trace file; the single pass behind ``trace validate`` and ``metrics``."""
    doc, problems = read_trace(path)
    if doc is None:
        return Inspection(None, ProblemLog(str(path), limit, problems), None)
    return inspect_trace(doc, str(path), limit)


def check_file(path: str | os.PathLike[str]) -> tuple[dict | None, list[Problem]]:
    """Read and validate one trace file: the trace (if it parsed) and its problems."""
    inspection = inspect_file(path)
    return inspection.doc, inspection.log.shown
