"""Our trace format accepts every trace the survey's published schema accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from masrl_kb.kb.paths import find_root
from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.trace_checks import validate_trace
from masrl_kb.traces.trace_schema import SCHEMA_FILE, SCHEMA_PATH, load_schema

ROOT = find_root()
SURVEY_SCHEMA = ROOT / "traces" / "survey" / "trace_schema.json"
EXAMPLES = sorted((ROOT / "traces" / "examples").glob("*.json"))


@pytest.fixture(scope="module")
def survey() -> Draft202012Validator:
    schema = json.loads(SURVEY_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def survey_shaped_trace() -> dict:
    """A trace as the survey's format allows it, using every liberty that format takes."""
    return {
        "trace_id": "run-7",
        "task_id": "swe-42",
        "system": "",
        "topology": "centralized",
        "events": [
            # An orchestrator decision with no decision id, and fields of the harness's own.
            {"id": "d1", "t": 0, "type": "orchestrator_decision", "agent": "lead", "step": 1},
            {"id": "s1", "t": 0.5, "type": "spawn", "agent": "lead", "to": "w", "role": ""},
            # A spawn that does not say whom it spawned, and a tool call with no tool.
            {"id": "s2", "t": 0.5, "type": "spawn", "agent": "lead"},
            {"id": "c1", "t": 1, "type": "tool_call", "agent": "w", "latency_ms": 800},
            {"id": "r1", "t": 2, "type": "return", "agent": "w", "to": "lead", "content_ref": ""},
            {"id": "d2", "t": 3, "type": "orchestrator_decision", "agent": "lead"},
        ],
        "edges": [
            {"src": "d1", "dst": "s1", "type": "causal"},
            {"src": "s1", "dst": "c1", "type": "spawn"},
            {"src": "c1", "dst": "r1", "type": "causal"},
            {"src": "r1", "dst": "d2", "type": "return"},
        ],
        "rewards": {"": 0.5, "team": 1},
        "costs": {"tokens": 1234.5, "wall_clock_s": 3, "tool_calls": 1.0, "refund_usd": -0.02},
        "metrics": {"task_success": 1, "protocol_overhead": 0.1, "error_amplification": 1.5},
    }


def test_the_survey_schema_copy_is_the_published_file_unchanged() -> None:
    schema = json.loads(SURVEY_SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"].startswith("https://github.com/xxzcc/awesome-llm-mas-rl/")
    readme = (SURVEY_SCHEMA.parent / "README.md").read_text(encoding="utf-8")
    assert schema["$id"] in readme and "CC0" in readme


def test_survey_shaped_trace_is_valid_in_both_formats(survey: Draft202012Validator) -> None:
    doc = survey_shaped_trace()
    assert list(survey.iter_errors(doc)) == []
    assert validate_trace(doc, "survey.json") == []


def test_survey_shaped_trace_is_measured(survey: Draft202012Validator) -> None:
    metrics = trace_metrics(survey_shaped_trace())
    assert metrics["decisions"]["unlabelled"] == 2
    assert metrics["has_stop_decision"] is False
    assert metrics["reported"] == {
        "task_success": 1,
        "protocol_overhead": 0.1,
        "error_amplification": 1.5,
    }
    assert metrics["max_fanout"] == 2  # both spawns count, the one without `to` too
    assert metrics["agents"] == 2  # lead and w; the second spawn names nobody
    assert metrics["tokens"] == 1234.5


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_is_valid_in_both_formats(path: Path, survey: Draft202012Validator) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert [e.message for e in survey.iter_errors(doc)] == []
    assert validate_trace(doc, path.name) == []


def _survey_fields(schema: dict) -> dict[str, set[str]]:
    defs = schema["$defs"]
    return {
        "trace": set(schema["properties"]),
        "event": set(defs["event"]["properties"]),
        "edge": set(defs["edge"]["properties"]),
    }


def test_every_field_the_survey_names_is_a_field_of_ours() -> None:
    theirs = _survey_fields(json.loads(SURVEY_SCHEMA.read_text(encoding="utf-8")))
    ours = _survey_fields(load_schema())
    for part, fields in theirs.items():
        assert fields <= ours[part], part
    ours_schema = load_schema()
    assert ours_schema["$defs"]["event"]["additionalProperties"] is True


def test_the_repository_copy_of_our_schema_matches_the_package_data() -> None:
    # `masrl-kb trace schema > traces/trace.schema.json` regenerates it.
    repo_copy = ROOT / SCHEMA_PATH
    assert repo_copy.read_bytes() == SCHEMA_FILE.read_bytes()
