"""Trace validation: the JSON Schema plus the graph rules a schema cannot express.

Every problem is a :class:`Problem` printed as ``file: where: message``, where ``where`` is a
JSON path (``$.events[3].t``) or an event (``event e7``). A run collects all problems.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jsonschema import ValidationError

from masrl_kb.traces.graph import adjacency, find_cycles
from masrl_kb.traces.schema import trace_validators

MAX_CYCLE_SHOWN = 8
_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a trace file."""

    file: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.message}"


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


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number")
    return value


def read_trace(path: str | os.PathLike[str]) -> tuple[dict | None, list[Problem]]:
    """Parse a trace file; on failure return ``None`` and the reason, never raise."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [Problem(file, "$", f"cannot read the file: {reason}")]
    try:
        # NaN, Infinity and overflowing literals would slip past "minimum" and poison sums.
        doc = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return None, [Problem(file, "$", f"not valid JSON ({where}): {exc.msg}")]
    except (ValueError, RecursionError) as exc:
        return None, [Problem(file, "$", f"not valid JSON: {exc}")]
    if not isinstance(doc, dict):
        kind = _JSON_KINDS.get(type(doc), type(doc).__name__)
        return None, [Problem(file, "$", f"a trace must be a JSON object, not {kind}")]
    return doc, []


# ------------------------------------------------------------------ schema


def _schema_message(error: ValidationError) -> str:
    rule = error.validator_value
    if error.validator == "not" and isinstance(rule, dict) and rule.keys() == {"required"}:
        # The schema forbids a field on some event types with `not: {required: [field]}`.
        fields = " and ".join(repr(field) for field in rule["required"])
        kind = error.instance.get("type") if isinstance(error.instance, dict) else None
        return f"{fields} is not allowed on a {kind!r} event"
    return error.message


def schema_problems(doc: dict, file: str) -> list[Problem]:
    """Everything the JSON Schema rejects, one problem per failing keyword."""
    validators = trace_validators()
    found = [([], err) for err in validators.trace.iter_errors(doc)]
    for name, item_validator in validators.items.items():
        items = doc.get(name)
        for i, item in enumerate(items if isinstance(items, list) else []):
            found += [([name, i], err) for err in item_validator.iter_errors(item)]
    problems = []
    for prefix, err in found:
        path = prefix + list(err.absolute_path)
        problems.append(Problem(file, json_path(path), _schema_message(err)))
    return problems


# ------------------------------------------------------------------- graph


def _index_events(events: list, file: str) -> tuple[dict[str, int], list[Problem]]:
    """Event id -> position of its first occurrence, and the duplicate/t_end problems."""
    index: dict[str, int] = {}
    problems: list[Problem] = []
    for i, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("id"), str):
            continue
        eid = event["id"]
        t, t_end = event.get("t"), event.get("t_end")
        if _is_number(t) and _is_number(t_end) and t_end < t:
            problems.append(
                Problem(file, f"event {eid}", f"ends at {t_end} before it starts ({t})")
            )
        if eid in index:
            where = f"duplicate id at $.events[{i}] (first at $.events[{index[eid]}])"
            problems.append(Problem(file, f"event {eid}", where))
        else:
            index[eid] = i
    return index, problems


def _start(event: object) -> float | None:
    t = event.get("t") if isinstance(event, dict) else None
    return t if _is_number(t) else None


def _edge_problems(
    doc: dict, events: list, index: dict[str, int], file: str
) -> tuple[list[tuple[int, int]], list[Problem]]:
    """Arcs of the non-temporal graph, and dangling-endpoint and start-order problems."""
    arcs: list[tuple[int, int]] = []
    problems: list[Problem] = []
    edges = doc.get("edges")
    for j, edge in enumerate(edges if isinstance(edges, list) else []):
        if not isinstance(edge, dict):
            continue
        ends = []
        for key in ("src", "dst"):
            ref = edge.get(key)
            if isinstance(ref, str) and ref not in index:
                problems.append(Problem(file, f"$.edges[{j}].{key}", f"no event has id {ref!r}"))
            ends.append(index.get(ref) if isinstance(ref, str) else None)
        src, dst = ends
        kind = edge.get("type")
        if src is None or dst is None or kind == "temporal":
            continue
        arcs.append((src, dst))
        ts, td = _start(events[src]), _start(events[dst])
        if ts is not None and td is not None and td < ts:
            problems.append(
                Problem(
                    file,
                    f"event {edge['dst']}",
                    f"starts at {td} before its {kind} source {edge['src']} ({ts})",
                )
            )
    return arcs, problems


def _cycle_text(ids: list[str], noun: str) -> str:
    shown = ids if len(ids) <= MAX_CYCLE_SHOWN else ids[:MAX_CYCLE_SHOWN] + ["..."]
    return " -> ".join([*shown, ids[0]]) + (f" ({len(ids)} {noun})" if len(ids) > 2 else "")


def _cycle_problems(arcs: list[tuple[int, int]], events: list, file: str) -> list[Problem]:
    succ, pred = adjacency(len(events), arcs)
    problems = []
    for cycle in find_cycles(succ, pred):
        ids = [events[v]["id"] for v in cycle]
        problems.append(
            Problem(
                file,
                f"event {ids[0]}",
                f"non-temporal edges form a cycle: {_cycle_text(ids, 'events')}",
            )
        )
    return problems


def _spawn_loop_problems(events: list, file: str) -> list[Problem]:
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
    problems = []
    for cycle in find_cycles(succ, pred):
        arcs = zip(cycle, cycle[1:] + cycle[:1], strict=True)
        # Blame the spawn that closed the loop: the latest one listed.
        closing = events[max(last_spawn[arc] for arc in arcs)]
        loop = _cycle_text([names[v] for v in cycle], "agents")
        problems.append(
            Problem(file, f"event {closing.get('id')}", f"spawn loop between agents: {loop}")
        )
    return problems


def graph_problems(doc: dict, file: str) -> list[Problem]:
    """The rules a schema cannot express; malformed parts are skipped (the schema reports them)."""
    events = doc.get("events")
    if not isinstance(events, list):
        return []
    index, problems = _index_events(events, file)
    arcs, edge_problems = _edge_problems(doc, events, index, file)
    problems += edge_problems
    problems += _cycle_problems(arcs, events, file)
    problems += _spawn_loop_problems(events, file)
    return problems


def validate_trace(doc: dict, file: str) -> list[Problem]:
    """All schema and graph problems of a parsed trace."""
    return schema_problems(doc, file) + graph_problems(doc, file)


def check_file(path: str | os.PathLike[str]) -> tuple[dict | None, list[Problem]]:
    """Read and validate one trace file: the trace (if it parsed) and its problems."""
    doc, problems = read_trace(path)
    if doc is None:
        return None, problems
    return doc, validate_trace(doc, str(path))
