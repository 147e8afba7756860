"""Tokens of imported spans count once each (docs/trace-decisions.md, "Tokens"): every span's
own counts, in every generation of attribute names, except counts that are the sum of the
spans below (an aggregate); ``invoke_workflow`` roots start the run's agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_traces_cli import run

TRACE = "ab" * 16
MS = 1_000_000
# Input and output token names per generation: GenAI now, GenAI before 1.27, OpenInference.
NAMES = {
    "genai": ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"),
    "genai-old": ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens"),
    "openinference": ("llm.token_count.prompt", "llm.token_count.completion"),
}


def _attrs(values: dict) -> list[dict]:
    kind = {int: "intValue", str: "stringValue"}
    return [{"key": k, "value": {kind[type(v)]: v}} for k, v in values.items()]


class Spans:
    """OTLP JSON spans of one trace, written as the collector's file exporter does."""

    def __init__(self, names: str) -> None:
        self.input, self.output = NAMES[names]
        self.spans: list[dict] = []

    def add(self, parent: int | None, start: int, end: int, attrs: dict, tokens=None) -> int:
        sid = len(self.spans) + 1
        if tokens is not None:
            attrs = attrs | {self.input: tokens[0], self.output: tokens[1]}
        self.spans.append(
            {
                "traceId": TRACE,
                "spanId": f"{sid:016x}",
                "parentSpanId": f"{parent:016x}" if parent else "",
                "name": f"s{sid}",
                "startTimeUnixNano": str(start * MS),
                "endTimeUnixNano": str(end * MS),
                "attributes": _attrs(attrs),
            }
        )
        return sid

    def agent(self, name: str, parent: int | None, start: int, end: int, tokens=None) -> int:
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
        return self.add(parent, start, end, attrs, tokens)

    def chat(self, parent: int, start: int, end: int, tokens: tuple[int, int]) -> int:
        return self.add(parent, start, end, {"gen_ai.operation.name": "chat"}, tokens)

    def write(self, folder: Path) -> Path:
        path = folder / "spans.json"
        doc = {"resourceSpans": [{"scopeSpans": [{"spans": self.spans}]}]}
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path


def _metrics(spans: Spans, folder: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    """Import through the command line, then ``trace metrics --json`` of the trace."""
    source, out = spans.write(folder), folder / "trace.json"
    assert run(["trace", "import", "otel", str(source), "-o", str(out)]) == 0
    capsys.readouterr()
    assert run(["trace", "metrics", "--json", str(out)]) == 0
    return json.loads(capsys.readouterr().out)[str(out)]


def _lead_and_workers(names: str, lead: tuple[int, int] | None) -> Spans:
    """A lead agent (reporting ``lead`` itself) with two workers: 250 + 300 tokens."""
    spans = Spans(names)
    root = spans.agent("lead", None, 0, 10, lead)
    w1 = spans.agent("w1", root, 1, 5)
    spans.chat(w1, 1, 4, (200, 50))
    w2 = spans.agent("w2", root, 1, 6)
    spans.chat(w2, 2, 6, (250, 50))
    return spans


@pytest.mark.parametrize("names", sorted(NAMES))
def test_the_leads_own_tokens_are_counted_with_the_workers(
    names: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = _metrics(_lead_and_workers(names, (100, 50)), tmp_path, capsys)
    assert m["tokens"] == 700
    assert m["tokens_by_agent"] == {"lead": 150, "w1": 250, "w2": 300}


@pytest.mark.parametrize("names", sorted(NAMES))
def test_a_lead_that_sums_the_whole_run_is_not_counted_twice(
    names: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 550 below it, of which 400 input and 100 output at the workers, 100 + 50 its own call.
    spans = Spans(names)
    root = spans.agent("lead", None, 0, 10, (550, 150))
    spans.chat(root, 0, 1, (100, 50))
    w1 = spans.agent("w1", root, 1, 5, (200, 50))  # the sum of its one call
    spans.chat(w1, 1, 4, (200, 50))
    w2 = spans.agent("w2", root, 1, 6)
    spans.chat(w2, 2, 6, (250, 50))
    m = _metrics(spans, tmp_path, capsys)
    assert m["tokens"] == 700
    assert m["tokens_by_agent"] == {"lead": 150, "w1": 250, "w2": 300}


@pytest.mark.parametrize("names", sorted(NAMES))
def test_a_lead_that_sums_its_own_calls_is_not_counted_twice(
    names: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = Spans(names)
    root = spans.agent("lead", None, 0, 10, (130, 70))
    spans.chat(root, 0, 1, (100, 50))
    spans.chat(root, 7, 8, (30, 20))
    w1 = spans.agent("w1", root, 1, 5)
    spans.chat(w1, 1, 4, (200, 50))
    m = _metrics(spans, tmp_path, capsys)
    assert m["tokens"] == 450
    assert m["tokens_by_agent"] == {"lead": 200, "w1": 250}


def test_an_openinference_total_alone_is_compared_with_the_sum_below(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = Spans("openinference")
    kind = {"openinference.span.kind": "AGENT", "agent.name": "lead"}
    root = spans.add(None, 0, 10, kind | {"llm.token_count.total": 300})
    spans.chat(root, 0, 1, (200, 100))  # the lead's total is the sum of its call: once
    other = spans.add(root, 2, 3, {"openinference.span.kind": "AGENT", "agent.name": "w"})
    spans.add(other, 2, 3, {"openinference.span.kind": "LLM", "llm.token_count.total": 40})
    m = _metrics(spans, tmp_path, capsys)
    assert m["tokens"] == 340
    assert m["tokens_by_agent"] == {"lead": 300, "w": 40}


def test_an_invoke_workflow_root_starts_the_runs_agents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = Spans("genai")
    flow = spans.add(None, 0, 10, {"gen_ai.operation.name": "invoke_workflow"}, (10, 5))
    lead = spans.agent("lead", flow, 0, 9, (100, 50))
    w1 = spans.agent("w1", lead, 1, 5)
    spans.chat(w1, 1, 4, (200, 50))
    m = _metrics(spans, tmp_path, capsys)
    assert m["events_by_type"]["spawn"] == 2  # s1 (the workflow) -> lead -> w1
    assert m["spawn_depth"] == 2
    assert m["decisions"]["O1"] == 2
    assert m["tokens"] == 415
    assert m["tokens_by_agent"] == {"s1": 15, "lead": 150, "w1": 250}


def test_a_run_without_span_links_is_told_o3_cannot_be_seen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _lead_and_workers("genai", None).write(tmp_path)
    assert run(["trace", "import", "otel", str(source), "-o", str(tmp_path / "t.json")]) == 0
    [warning] = [line for line in capsys.readouterr().err.splitlines() if "no span links" in line]
    assert warning.startswith(f"{source}: warning: no span links: ")
    assert "(messages, O3) cannot be seen" in warning


def test_a_run_of_one_agent_needs_no_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = Spans("genai")
    spans.chat(spans.agent("solo", None, 0, 2), 0, 1, (1, 1))
    assert run(["trace", "import", "otel", str(spans.write(tmp_path))]) == 0
    assert "no span links" not in capsys.readouterr().err
