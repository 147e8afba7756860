"""Trace validation: schema rules, graph rules, unreadable input, and the schema file itself."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.traces.trace_checks import (
    ProblemLog,
    check_file,
    check_graph,
    json_path,
    read_trace,
    schema_problems,
    validate_trace,
)
from masrl_kb.traces.trace_schema import (
    SCHEMA_FILE,
    compile_check,
    compiled_checks,
    inline_refs,
    load_schema,
)

BASE = {
    "trace_id": "t1",
    "task_id": "task",
    "topology": "centralized",
    "events": [
        {"id": "e1", "t": 0, "t_end": 1, "type": "orchestrator_decision", "agent": "o",
         "decision": "O1"},
        {"id": "e2", "t": 1, "t_end": 2, "type": "spawn", "agent": "o", "to": "w"},
        {"id": "e3", "t": 2, "t_end": 4, "type": "tool_call", "agent": "w", "tool": "search"},
        {"id": "e4", "t": 4, "t_end": 5, "type": "return", "agent": "w", "to": "o"},
        {"id": "e5", "t": 5, "type": "orchestrator_decision", "agent": "o", "decision": "O5"},
    ],
    "edges": [
        {"src": "e1", "dst": "e2", "type": "causal"},
        {"src": "e2", "dst": "e3", "type": "spawn"},
        {"src": "e3", "dst": "e4", "type": "causal"},
        {"src": "e4", "dst": "e5", "type": "return"},
    ],
    "rewards": {"team": 1.0},
    "costs": {"tokens": 10, "wall_clock_s": 5},
}  # fmt: skip


def trace(change: Callable[[dict], object] | None = None) -> dict:
    """A fresh copy of the valid base trace, changed in place by ``change``."""
    doc = copy.deepcopy(BASE)
    if change is not None:
        change(doc)
    return doc


def problems_of(doc: dict) -> list[str]:
    return [str(p) for p in validate_trace(doc, "bad.json")]


def test_base_trace_is_valid() -> None:
    assert problems_of(trace()) == []


# ------------------------------------------------------------ schema rules

SCHEMA_CASES = [
    (lambda d: d.pop("trace_id"), "bad.json: $: 'trace_id' is a required property"),
    (lambda d: d.pop("rewards"), "bad.json: $: 'rewards' is a required property"),
    (
        lambda d: d.update(topology="star"),
        "bad.json: $.topology: 'star' is not one of ['centralized', 'planner_executor_critic', "
        "'debate', 'swarm', 'hierarchical', 'harness', 'mixed', 'unknown']",
    ),
    (
        lambda d: d.update(owner="me"),
        "bad.json: $: Additional properties are not allowed ('owner' was unexpected)",
    ),
    (lambda d: d.update(events={}), "bad.json: $.events: {} is not of type 'array'"),
    (lambda d: d["events"].append("oops"), "bad.json: $.events[5]: 'oops' is not of type 'object'"),
    (
        lambda d: d["events"][2].update(t=-1),
        "bad.json: $.events[2].t: -1 is less than the minimum of 0",
    ),
    (
        lambda d: d["events"][2].update(t_end=-0.5),
        "bad.json: $.events[2].t_end: -0.5 is less than the minimum of 0",
    ),
    (
        lambda d: d["events"][2].pop("agent"),
        "bad.json: $.events[2]: 'agent' is a required property",
    ),
    (lambda d: d["events"][2].update(id=""), "bad.json: $.events[2].id: '' should be non-empty"),
    (
        lambda d: d["events"][2].update(type="teleport"),
        "bad.json: $.events[2].type: 'teleport' is not one of ['orchestrator_decision', 'spawn', "
        "'despawn', 'message', 'tool_call', 'tool_result', 'return', 'aggregate', "
        "'human_intervention', 'safety_event']",
    ),
    (
        lambda d: d["events"][2].update(trusted="yes"),
        "bad.json: $.events[2].trusted: 'yes' is not of type 'boolean'",
    ),
    (
        lambda d: d["events"][0].update(decision="O6"),
        "bad.json: $.events[0].decision: 'O6' is not one of ['O1', 'O2', 'O3', 'O4', 'O5']",
    ),
    (
        lambda d: d["edges"][0].update(type="after"),
        "bad.json: $.edges[0].type: 'after' is not one of ['temporal', 'causal', 'spawn', "
        "'message', 'tool_dependency', 'return', 'aggregate', 'safety_flow']",
    ),
    (lambda d: d["edges"][1].pop("dst"), "bad.json: $.edges[1]: 'dst' is a required property"),
    (
        lambda d: d["rewards"].update(team="high"),
        "bad.json: $.rewards.team: 'high' is not of type 'number'",
    ),
    (
        lambda d: d["costs"].update(tokens=-5),
        "bad.json: $.costs.tokens: -5 is less than the minimum of 0",
    ),
    (
        lambda d: d["costs"].update(usd="1.50"),
        "bad.json: $.costs.usd: '1.50' is not of type 'number'",
    ),
    (
        lambda d: d["events"][2].update(t=10**12 + 1),
        "bad.json: $.events[2].t: 1000000000001 is greater than the maximum of 1000000000000",
    ),
    (
        lambda d: d["events"][2].update(t_end=1e13),
        "bad.json: $.events[2].t_end: 10000000000000.0 is greater than the maximum of "
        "1000000000000",
    ),
    (
        lambda d: d["costs"].update(tokens=10**16),
        "bad.json: $.costs.tokens: 10000000000000000 is greater than the maximum of "
        "1000000000000000",
    ),
    (
        lambda d: d["events"][2].update(t=True),
        "bad.json: $.events[2].t: True is not of type 'number'",
    ),
    (
        lambda d: d["events"][2].update(to=["w"]),
        "bad.json: $.events[2].to: ['w'] is not of type 'string'",
    ),
    (
        lambda d: d.update(metrics={"task_success": "yes"}),
        "bad.json: $.metrics.task_success: 'yes' is not of type 'number'",
    ),
    (
        lambda d: d["costs"].pop("wall_clock_s"),
        "bad.json: $.costs: 'wall_clock_s' is a required property",
    ),
]


CASE_IDS = [expected.split(": ", 2)[1] for _, expected in SCHEMA_CASES]


@pytest.mark.parametrize(("change", "expected"), SCHEMA_CASES, ids=CASE_IDS)
def test_schema_rule(change: Callable[[dict], object], expected: str) -> None:
    assert [str(p) for p in schema_problems(trace(change), "bad.json")] == [expected]


def test_problems_in_several_places_are_all_reported() -> None:
    def change(d: dict) -> None:
        d["events"][1]["t"] = -1
        d["events"][3].pop("agent")
        d["costs"]["tokens"] = -2

    assert [str(p) for p in schema_problems(trace(change), "bad.json")] == [
        "bad.json: $.costs.tokens: -2 is less than the minimum of 0",
        "bad.json: $.events[1].t: -1 is less than the minimum of 0",
        "bad.json: $.events[3]: 'agent' is a required property",
    ]


def _plain_errors(doc: dict) -> set[tuple[str, str]]:
    validator = Draft202012Validator(load_schema())
    return {(json_path(e.absolute_path), e.message) for e in validator.iter_errors(doc)}


def _fast_errors(doc: dict) -> set[tuple[str, str]]:
    return {(p.where, p.message) for p in schema_problems(doc, "x")}


@pytest.mark.parametrize(("change", "expected"), SCHEMA_CASES, ids=CASE_IDS)
def test_compiled_validation_finds_what_plain_jsonschema_finds(
    change: Callable[[dict], object], expected: str
) -> None:
    assert _fast_errors(trace()) == _plain_errors(trace()) == set()
    doc = trace(change)
    assert _fast_errors(doc) == _plain_errors(doc)
    assert _fast_errors(doc)  # and the change really is an error


@pytest.mark.parametrize(("change", "expected"), SCHEMA_CASES, ids=CASE_IDS)
def test_compiled_check_never_passes_what_jsonschema_rejects(
    change: Callable[[dict], object], expected: str
) -> None:
    doc = trace(change)
    checks = compiled_checks()
    verdicts = [checks["trace"](doc)]
    for name in ("events", "edges"):
        items = doc.get(name)
        verdicts += [checks[name](item) for item in items] if isinstance(items, list) else []
    assert not all(verdicts)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 2.0),
        ({"type": "integer", "minimum": 0}, 3),
        ({"type": ["string", "null"]}, None),
        ({"enum": [1, "a"]}, 1),
        ({"type": "object", "propertyNames": {"minLength": 1}}, {"a": 1}),
        ({"type": "array", "items": {"type": "number"}}, [1, 2.5]),
        ({"properties": {"a": {"const": "x"}}}, 3),
    ],
)
def test_compiled_check_agrees_with_jsonschema_beyond_the_trace_schema(
    schema: dict, value: object
) -> None:
    assert compile_check(schema)(value) is Draft202012Validator(schema).is_valid(value) is True
    wrong = {"no": "match"} if not isinstance(value, dict) else []
    assert not compile_check(schema)(wrong) or Draft202012Validator(schema).is_valid(wrong)


# ------------------------------------------------------------- graph rules


def test_duplicate_event_id() -> None:
    doc = trace(lambda d: d["events"][2].update(id="e2"))
    assert "bad.json: event e2: duplicate id at $.events[2] (first at $.events[1])" in (
        problems_of(doc)
    )


def test_edge_to_unknown_event() -> None:
    doc = trace(lambda d: d["edges"][1].update(dst="e9"))
    assert problems_of(doc) == ["bad.json: $.edges[1].dst: no event has id 'e9'"]


def test_edge_from_unknown_event() -> None:
    doc = trace(lambda d: d["edges"].append({"src": "x", "dst": "e1", "type": "temporal"}))
    assert problems_of(doc) == ["bad.json: $.edges[4].src: no event has id 'x'"]


def test_destination_starting_before_source() -> None:
    doc = trace(lambda d: d["events"][2].update(t=0.5))
    assert problems_of(doc) == ["bad.json: event e3: starts at 0.5 before its spawn source e2 (1)"]


def test_end_before_start() -> None:
    doc = trace(lambda d: d["events"][2].update(t_end=1))
    assert problems_of(doc) == ["bad.json: event e3: ends at 1 before it starts (2)"]


def test_cycle_of_non_temporal_edges() -> None:
    def change(d: dict) -> None:
        for event in d["events"]:
            event.update(t=0, t_end=0)
        d["edges"].append({"src": "e4", "dst": "e2", "type": "message"})

    assert problems_of(trace(change)) == [
        "bad.json: event e2: non-temporal edges form a cycle: e2 -> e3 -> e4 -> e2 (3 events)"
    ]


def test_self_loop_is_a_cycle() -> None:
    doc = trace(lambda d: d["edges"].append({"src": "e3", "dst": "e3", "type": "causal"}))
    assert problems_of(doc) == ["bad.json: event e3: non-temporal edges form a cycle: e3 -> e3"]


def test_two_separate_cycles_are_both_reported() -> None:
    def change(d: dict) -> None:
        for event in d["events"]:
            event.update(t=0, t_end=0)
        d["edges"] += [
            {"src": "e2", "dst": "e1", "type": "causal"},
            {"src": "e5", "dst": "e4", "type": "causal"},
        ]

    assert problems_of(trace(change)) == [
        "bad.json: event e1: non-temporal edges form a cycle: e1 -> e2 -> e1",
        "bad.json: event e4: non-temporal edges form a cycle: e4 -> e5 -> e4",
    ]


def test_temporal_edges_are_exempt_from_cycle_and_order_rules() -> None:
    doc = trace(lambda d: d["edges"].append({"src": "e5", "dst": "e1", "type": "temporal"}))
    assert problems_of(doc) == []


def test_spawn_loop() -> None:
    late_spawn = {"id": "e6", "t": 5, "type": "spawn", "agent": "w", "to": "o"}
    doc = trace(lambda d: d["events"].append(late_spawn))
    assert problems_of(doc) == ["bad.json: event e6: spawn loop between agents: o -> w -> o"]


def test_agent_spawning_itself() -> None:
    doc = trace(lambda d: d["events"][1].update(to="o"))
    assert problems_of(doc) == ["bad.json: event e2: spawn loop between agents: o -> o"]


def test_long_cycle_needs_no_recursion_and_is_shortened() -> None:
    n = 50_000
    doc = {
        "events": [{"id": f"e{i}", "t": 0, "type": "aggregate", "agent": "a"} for i in range(n)],
        "edges": [{"src": f"e{i}", "dst": f"e{(i + 1) % n}", "type": "causal"} for i in range(n)],
    }
    log = ProblemLog("big.json")
    check_graph(doc, log)
    [problem] = log.shown
    assert str(problem) == (
        "big.json: event e0: non-temporal edges form a cycle: "
        "e0 -> e1 -> e2 -> e3 -> e4 -> e5 -> e6 -> e7 -> ... -> e0 (50000 events)"
    )


def test_graph_rules_skip_parts_the_schema_rejects() -> None:
    def change(d: dict) -> None:
        d["events"].append(7)
        d["events"][0].pop("id")
        d["edges"].append("edge")

    problems = problems_of(trace(change))
    assert "bad.json: $.events[0]: 'id' is a required property" in problems
    assert "bad.json: $.edges[1].src: no event has id 'e1'" not in problems
    assert "bad.json: $.edges[0].src: no event has id 'e1'" in problems


# ----------------------------------------------------------- reading files


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "t.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{",
            "not valid JSON (line 1 column 2): Expecting property name enclosed in double quotes",
        ),
        ("", "not valid JSON (line 1 column 1): Expecting value"),
        ('{"a": NaN}', "not valid JSON: NaN is not a JSON number"),
        ('{"a": 1e999}', "not valid JSON: 1e999 is too large for a number"),
        ("[1, 2]", "a trace must be a JSON object, not an array"),
        ('"trace"', "a trace must be a JSON object, not a string"),
        ("3", "a trace must be a JSON object, not a number"),
        ("null", "a trace must be a JSON object, not null"),
    ],
)
def test_unreadable_documents_get_one_clear_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path, text)
    doc, problems = check_file(path)
    assert doc is None
    assert [str(p) for p in problems] == [f"{path}: $: {message}"]


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = _write(tmp_path, "[" * 100_000 + "]" * 100_000)
    doc, [problem] = read_trace(path)
    assert doc is None
    assert problem.message.startswith("not valid JSON")


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    _, [missing] = read_trace(tmp_path / "nope.json")
    assert missing.message == "cannot read the file: No such file or directory"
    _, [binary] = read_trace(_write(tmp_path, b"\xff\xfe{"))
    assert binary.message.startswith("cannot read the file: 'utf-8' codec can't decode")


def test_schema_problems_and_file_names_in_check_file(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(trace(lambda d: d["events"][2].update(t=-1))))
    _, problems = check_file(path)
    assert [str(p) for p in problems] == [
        f"{path}: $.events[2].t: -1 is less than the minimum of 0",
        f"{path}: event e3: starts at -1 before its spawn source e2 (1)",
    ]
    assert schema_problems(trace(), "x") == []


# ----------------------------------------------------------- the schema file


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_schema_topologies_agree_with_the_taxonomy() -> None:
    taxonomy = [t for t in load_taxonomy()["topology"].ids if t != "NA"]
    assert len(taxonomy) == 6
    assert load_schema()["properties"]["topology"]["enum"] == [*taxonomy, "mixed", "unknown"]


def test_schema_decisions_agree_with_the_taxonomy() -> None:
    decision = load_schema()["$defs"]["event"]["properties"]["decision"]
    assert decision["enum"] == list(load_taxonomy()["decision"].ids)


def test_every_enum_value_is_described() -> None:
    defs = load_schema()["$defs"]
    for name in ("event_type", "edge_type"):
        assert len(defs[name]["enumDescriptions"]) == len(defs[name]["enum"])


def test_recursive_refs_are_refused() -> None:
    defs = {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}}
    with pytest.raises(ValueError, match="non-recursive"):
        inline_refs({"$ref": "#/$defs/node"}, defs)


# ------------------------------------------------- repeated keys and overflow


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"a": {"attrs": {"k": 1, "k": 2}}}',
            'not valid JSON (object at line 1 column 17): the key "k" appears twice',
        ),
        ('{"a": [{"x": 1}, {"y": 2, "y" : 3}]}', 'the key "y" appears twice'),
        ('{"a": {"deep": [[{"n": 1e400}]]}}', "not valid JSON: 1e400 is too large for a number"),
        ('{"a": -1E+309}', "not valid JSON: -1E+309 is too large for a number"),
    ],
)
def test_repeated_keys_and_overflow_anywhere_are_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    _, [problem] = read_trace(_write(tmp_path, text))
    assert message in problem.message


def test_values_that_look_like_keys_do_not_hide_or_invent_repeats(tmp_path: Path) -> None:
    doc = trace(lambda d: d["events"][0].update(content_ref=':":x', attrs={"note": 'a": b'}))
    parsed, problems = read_trace(_write(tmp_path, json.dumps(doc)))
    assert problems == [] and parsed == doc
    text = (
        json.dumps(doc)
        .replace('"trusted"', '"x"')
        .replace('"task_id": "task"', '"task_id": "task", "a": ":", "a": 1')
    )
    _, [problem] = read_trace(_write(tmp_path, text))
    assert 'the key "a" appears twice' in problem.message


def test_graph_rules_skip_times_of_the_wrong_type() -> None:
    doc = trace(lambda d: d["events"][2].update(t="2", t_end=1))
    assert problems_of(doc) == ["bad.json: $.events[2].t: '2' is not of type 'number'"]


def test_a_repeated_key_is_located_past_strings_that_look_like_json(tmp_path: Path) -> None:
    # Brackets, braces, colons and escaped quotes inside strings are not structure; the
    # object named is the first to close with a repeat (the inner one, not its parent).
    text = '{"a": "{[\\"k\\": 1", "b": [\n  {"x": "}", "k": 1,\n   "n": {"k": 1, "k": 2}}], "b": 0}'
    _, [problem] = read_trace(_write(tmp_path, text))
    assert problem.message.startswith(
        'not valid JSON (object at line 3 column 9): the key "k" appears twice'
    )
