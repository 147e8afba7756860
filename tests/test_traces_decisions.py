"""O1-O5 decisions and topology read off runs recorded by the OpenTelemetry SDK.

Each run is recorded by ``opentelemetry-sdk`` (in-memory exporter, explicit timestamps) with
either the GenAI semantic-convention attributes or the OpenInference ones (names taken from
the conventions' own packages), written out in each layout the importer reads (OTLP JSON with
hex ids, OTLP JSON with base64 ids, the SDK console exporter's output, JSON lines), imported,
and its decision events compared with the ones worked out by hand below.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as genai
from opentelemetry.trace import Link, Span

from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.otel import import_otel
from masrl_kb.traces.spans import OtelImportError, read_span_file
from masrl_kb.traces.trace_checks import validate_trace
from tests.test_traces_cli import run
from tests.test_traces_otel import otlp_json

T0 = 1_700_000_000 * 10**9
SECOND = 10**9


class GenAI:
    """Attributes of the OpenTelemetry GenAI semantic conventions."""

    @staticmethod
    def agent(name: str) -> dict:
        return {genai.GEN_AI_OPERATION_NAME: "invoke_agent", genai.GEN_AI_AGENT_NAME: name}

    @staticmethod
    def chat(tokens: tuple[int, int]) -> dict:
        return {
            genai.GEN_AI_OPERATION_NAME: "chat",
            genai.GEN_AI_USAGE_INPUT_TOKENS: tokens[0],
            genai.GEN_AI_USAGE_OUTPUT_TOKENS: tokens[1],
        }

    @staticmethod
    def tool(name: str) -> dict:
        return {genai.GEN_AI_OPERATION_NAME: "execute_tool", genai.GEN_AI_TOOL_NAME: name}


class OpenInference:
    """Attributes of the OpenInference semantic conventions."""

    KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND

    @classmethod
    def agent(cls, name: str) -> dict:
        return {cls.KIND: OpenInferenceSpanKindValues.AGENT.value, SpanAttributes.AGENT_NAME: name}

    @classmethod
    def chat(cls, tokens: tuple[int, int]) -> dict:
        return {
            cls.KIND: OpenInferenceSpanKindValues.LLM.value,
            SpanAttributes.LLM_TOKEN_COUNT_PROMPT: tokens[0],
            SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: tokens[1],
            SpanAttributes.LLM_TOKEN_COUNT_TOTAL: sum(tokens),
        }

    @classmethod
    def tool(cls, name: str) -> dict:
        return {cls.KIND: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: name}


class Run:
    """A tracer whose span times are seconds from T0, with one convention's attributes."""

    def __init__(self, convention: type) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "team"}))
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("masrl-kb-tests")
        self.conv = convention

    @contextmanager
    def span(self, name: str, start: float, end: float, parent: Span | None, attrs: dict,
             links: tuple[Span, ...] = ()) -> Iterator[Span]:  # fmt: skip
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name,
            context=context,
            start_time=T0 + int(start * SECOND),
            attributes=attrs,
            links=[Link(s.get_span_context()) for s in links],
        )
        yield span
        span.end(end_time=T0 + int(end * SECOND))

    def agent(self, name: str, start: float, end: float, parent: Span | None = None):
        return self.span(f"invoke_agent {name}", start, end, parent, self.conv.agent(name))

    def chat(self, name: str, start: float, end: float, parent: Span, links=()) -> Span:
        with self.span(name, start, end, parent, self.conv.chat((100, 20)), links) as span:
            return span

    def tool(self, name: str, start: float, end: float, parent: Span) -> Span:
        with self.span(name, start, end, parent, self.conv.tool(name)) as span:
            return span


# ----------------------------------------------------------------- the runs


def centralized(conv: type) -> Run:
    """A planner spawns two workers in parallel and aggregates their answers."""
    run = Run(conv)
    with run.agent("planner", 0, 10) as planner:
        run.chat("plan", 0, 1, planner)
        with run.agent("worker-1", 1, 5, planner) as w1:
            run.chat("w1.answer", 1, 5, w1)
        with run.agent("worker-2", 1, 6, planner) as w2:
            run.tool("search", 1, 3, w2)
            run.chat("w2.answer", 3, 6, w2)
        run.chat("aggregate", 6, 8, planner)
    return run


CENTRALIZED = [
    # (decision, rule, agent, to or sources, t)
    # both start at 1: the longer span first (worker-2 runs to 6, worker-1 to 5)
    ("O1", "child-agent-span", "planner", "worker-2", 1.0),
    ("O1", "child-agent-span", "planner", "worker-1", 1.0),
    # the planner's first step after both workers returned reads both answers
    ("O4", "after-child-agents", "planner", ["worker-1", "worker-2"], 6.0),
    ("O5", "root-agent-end", "planner", None, 10.0),
]


def hierarchical(conv: type) -> Run:
    """A planner starts a worker, which starts a sub-worker; the worker is then given a
    second task (a hand-off to an agent that already exists)."""
    run = Run(conv)
    with run.agent("planner", 0, 12) as planner:
        run.chat("plan", 0, 1, planner)
        with run.agent("worker", 1, 8, planner) as worker:
            run.chat("split", 1, 2, worker)
            with run.agent("sub-worker", 2, 6, worker) as sub:
                run.tool("python", 2, 5, sub)
                run.chat("sub.report", 5, 6, sub)
            run.chat("merge", 6, 8, worker)
        with run.agent("worker", 8, 10, planner) as again:
            run.chat("review", 8, 10, again)
        run.chat("final", 10, 12, planner)
    return run


HIERARCHICAL = [
    ("O1", "child-agent-span", "planner", "worker", 1.0),
    ("O1", "child-agent-span", "worker", "sub-worker", 2.0),
    ("O2", "agent-span-of-existing-agent", "planner", "worker", 8.0),
    ("O5", "root-agent-end", "planner", None, 12.0),
]


def debate(conv: type) -> Run:
    """Two debaters answer each other's turns; the judge reads both last turns and stops."""
    run = Run(conv)
    with run.agent("judge", 0, 10) as judge:
        with run.agent("pro", 0, 7, judge) as pro, run.agent("con", 0, 7, judge) as con:
            p1 = run.chat("pro.r1", 0, 1, pro)
            c1 = run.chat("con.r1", 1, 2, con, (p1,))
            p2 = run.chat("pro.r2", 2, 3, pro, (c1,))
            c2 = run.chat("con.r2", 3, 4, con, (p2,))
        run.chat("verdict", 7, 8, judge, (p2, c2))
        run.tool("stop", 8, 9, judge)
    return run


DEBATE = [
    # same start and end: in the file's order (con's span ended, so was exported, first)
    ("O1", "child-agent-span", "judge", "con", 0.0),
    ("O1", "child-agent-span", "judge", "pro", 0.0),
    ("O3", "span-link", "pro", "con", 1.0),  # con.r1 reads pro.r1, which ended at 1
    ("O3", "span-link", "con", "pro", 2.0),
    ("O3", "span-link", "pro", "con", 3.0),
    ("O4", "links-from-agents", "judge", ["con", "pro"], 7.0),
    ("O5", "stop-tool", "judge", None, 9.0),  # the explicit stop replaces the run's end
]

SCENARIOS = {
    "centralized": (centralized, CENTRALIZED),
    "hierarchical": (hierarchical, HIERARCHICAL),
    "debate": (debate, DEBATE),
}


# ------------------------------------------------------------------ layouts


def _base64_ids(doc: dict) -> dict:
    """OTLP JSON as protobuf's generic JSON mapping writes it: ids as base64 bytes."""

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode("ascii")

    for block in doc["resourceSpans"]:
        for scope in block["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = b64(span[key])
                for link in span["links"]:
                    link["traceId"], link["spanId"] = b64(link["traceId"]), b64(link["spanId"])
    return doc


def _console(run: Run, one_line: bool) -> str:
    out = io.StringIO()
    if one_line:
        exporter = ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
    else:
        exporter = ConsoleSpanExporter(out=out)  # the SDK default: indented, one after another
    exporter.export(run.exporter.get_finished_spans())
    return out.getvalue()


LAYOUTS: dict[str, Callable[[Run], str]] = {
    "otlp-hex": lambda run: json.dumps(otlp_json(run.exporter.get_finished_spans())),
    "otlp-base64": lambda run: json.dumps(
        _base64_ids(otlp_json(run.exporter.get_finished_spans()))
    ),
    "console": lambda run: _console(run, one_line=False),
    "json-lines": lambda run: _console(run, one_line=True),
}


def decisions(doc: dict) -> list[tuple]:
    return [
        (e["decision"], e["rule"], e["agent"], e.get("to", e.get("sources")), e["t"])
        for e in doc["events"]
        if e["type"] == "orchestrator_decision"
    ]


def imported(run: Run, layout: str, tmp_path: Path) -> dict:
    path = tmp_path / "spans.json"
    path.write_text(LAYOUTS[layout](run), encoding="utf-8")
    doc, _ = import_otel(read_span_file(path))
    assert validate_trace(doc, "imported") == []
    return doc


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("conv", [GenAI, OpenInference], ids=["genai", "openinference"])
@pytest.mark.parametrize("shape", sorted(SCENARIOS))
def test_decisions_and_topology(shape: str, conv: type, layout: str, tmp_path: Path) -> None:
    record, expected = SCENARIOS[shape]
    doc = imported(record(conv), layout, tmp_path)
    assert decisions(doc) == expected
    assert doc["topology"] == shape
    assert doc["system"] == "team"
    # ids come out as hex whatever the file used
    assert len(doc["trace_id"]) == 32 and set(doc["trace_id"]) <= set("0123456789abcdef")


def test_decision_metrics_of_the_centralized_run(tmp_path: Path) -> None:
    doc = imported(centralized(GenAI), "otlp-hex", tmp_path)
    m = trace_metrics(doc)
    assert m["decisions"] == {"O1": 2, "O2": 0, "O3": 0, "O4": 1, "O5": 1, "unlabelled": 0}
    assert m["has_stop_decision"] is True
    # O1s follow the plan (ends at 1) at once; the O4 waits for worker-2's return at 6;
    # the O5 comes 2 s after the aggregate step ends at 8.
    assert m["decision_latency"]["O1"] == {"events": 2, "mean_s": 0.0, "max_s": 0.0}
    assert m["decision_latency"]["O4"] == {"events": 1, "mean_s": 0.0, "max_s": 0.0}
    assert m["decision_latency"]["O5"] == {"events": 1, "mean_s": 2.0, "max_s": 2.0}
    assert m["decision_latency"]["O2"] == {"events": 0, "mean_s": None, "max_s": None}
    # 120 tokens per model call: plan and aggregate, one answer per worker
    assert m["tokens_by_agent"] == {"planner": 240, "worker-1": 120, "worker-2": 120}
    assert m["tokens"] == 480


# ------------------------------------------------------------- conventions


def test_older_genai_token_names_are_counted(tmp_path: Path) -> None:
    run = Run(GenAI)
    with run.agent("solo", 0, 2) as agent:
        attrs = {
            genai.GEN_AI_OPERATION_NAME: "chat",
            genai.GEN_AI_USAGE_PROMPT_TOKENS: 30,
            genai.GEN_AI_USAGE_COMPLETION_TOKENS: 12,
        }
        with run.span("old", 0, 1, agent, attrs):
            pass
    doc = imported(run, "otlp-hex", tmp_path)
    [call] = [e for e in doc["events"] if e["type"] == "message"]
    assert call["attrs"] == {"input_tokens": 30, "output_tokens": 12}
    assert doc["costs"]["tokens"] == 42


def test_newer_token_names_win_over_older_ones(tmp_path: Path) -> None:
    run = Run(GenAI)
    with run.agent("solo", 0, 2) as agent:
        attrs = {
            genai.GEN_AI_OPERATION_NAME: "chat",
            genai.GEN_AI_USAGE_INPUT_TOKENS: 7,
            genai.GEN_AI_USAGE_PROMPT_TOKENS: 700,
        }
        with run.span("both", 0, 1, agent, attrs):
            pass
    assert imported(run, "otlp-hex", tmp_path)["costs"]["tokens"] == 7


def test_handoff_tool_is_a_delegation_and_peers_passing_the_task_a_swarm(tmp_path: Path) -> None:
    run = Run(GenAI)
    with run.agent("triage", 0, 10) as triage:
        with run.agent("billing", 0, 6, triage) as billing:
            run.tool("transfer_to_refunds", 0, 1, billing)
        with run.agent("refunds", 1, 6, triage) as refunds:
            run.chat("refund", 1, 6, refunds)
    doc = imported(run, "otlp-hex", tmp_path)
    assert ("O2", "handoff-tool", "billing", "refunds", 0.0) in decisions(doc)
    assert doc["topology"] == "swarm"


def test_create_agent_span_is_the_spawn_and_the_later_run_a_delegation(tmp_path: Path) -> None:
    run = Run(GenAI)
    with run.agent("boss", 0, 5) as boss:
        create = {genai.GEN_AI_OPERATION_NAME: "create_agent", genai.GEN_AI_AGENT_NAME: "helper"}
        with run.span("create_agent helper", 0, 1, boss, create):
            pass
        with run.agent("helper", 1, 4, boss) as helper:
            run.chat("help", 1, 4, helper)
    assert decisions(imported(run, "otlp-hex", tmp_path))[:2] == [
        ("O1", "create-agent-span", "boss", "helper", 0.0),
        ("O2", "agent-span-of-existing-agent", "boss", "helper", 1.0),
    ]


# --------------------------------------------------------------------- CLI


def _spans_file(
    tmp_path: Path, layout: str = "otlp-base64", conv: type = GenAI
) -> tuple[Path, str]:
    record = centralized(conv)
    path = tmp_path / "spans.json"
    path.write_text(LAYOUTS[layout](record), encoding="utf-8")
    trace_id = record.exporter.get_finished_spans()[0].context.trace_id
    return path, f"{trace_id:032x}"


def test_cli_short_out_option_hex_trace_id_and_topology_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans, trace_id = _spans_file(tmp_path)
    out = tmp_path / "run.json"
    argv = ["trace", "import", "otel", str(spans), "-o", str(out), "--trace-id", trace_id.upper()]
    assert run([*argv, "--topology", "swarm"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["trace_id"] == trace_id
    assert doc["topology"] == "swarm"
    assert doc["meta"]["otel"]["topology"]["inferred"] == "centralized"
    assert "4 decisions, topology swarm" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "spans.json"]  # no temp
    assert run(["trace", "validate", str(out)]) == 0


def test_cli_unknown_trace_id_lists_the_ids_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans, trace_id = _spans_file(tmp_path)
    out = tmp_path / "run.json"
    assert (
        run(["trace", "import", "otel", str(spans), "--trace-id", "ab" * 16, "-o", str(out)]) == 2
    )
    err = capsys.readouterr().err
    assert err == f"{spans}: $: no spans of trace {'ab' * 16}; the file holds {trace_id}\n"
    assert not out.exists()


@pytest.mark.parametrize("bad", ["xyz", "=" * 8, "ab" * 40, "\x1b[2J"])
def test_cli_malformed_trace_id_is_one_line_exit_2(
    bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans, _ = _spans_file(tmp_path)
    assert run(["trace", "import", "otel", str(spans), "--trace-id", bad]) == 2
    err = capsys.readouterr().err
    assert err.endswith("\n") and err[:-1].isprintable()  # one line, no control codes
    assert "--trace-id: " in err and "neither a hex id nor base64" in err


def test_openinference_alias_reads_the_same(tmp_path: Path, capsys) -> None:
    spans, _ = _spans_file(tmp_path, "json-lines", OpenInference)
    assert run(["trace", "import", "openinference", str(spans)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert decisions(doc) == CENTRALIZED


def test_failed_import_leaves_an_existing_output_untouched(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": [', encoding="utf-8")
    out = tmp_path / "run.json"
    out.write_text("keep me", encoding="utf-8")
    assert run(["trace", "import", "otel", str(bad), "-o", str(out)]) == 2
    assert out.read_text(encoding="utf-8") == "keep me"
    assert capsys.readouterr().err == f"{bad}: $: not valid JSON: parse error: premature EOF\n"


def test_symlinked_span_file_is_refused(tmp_path: Path, capsys) -> None:
    spans, _ = _spans_file(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(spans)
    assert run(["trace", "import", "otel", str(link)]) == 2
    assert "symbolic link" in capsys.readouterr().err


def test_import_error_is_a_value_error_with_a_line(tmp_path: Path) -> None:
    spans, _ = _spans_file(tmp_path, "json-lines")
    lines = spans.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"start_time": "', '"start_time": "x')
    spans.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(OtelImportError) as info:
        import_otel(read_span_file(spans))
    assert info.value.line == 2
    assert "start_time" in str(info.value)


def test_the_docs_table_names_every_rule_and_attribute() -> None:
    from masrl_kb.kb.paths import find_root
    from masrl_kb.traces import conventions
    from masrl_kb.traces.span_decisions import RULES

    text = (find_root() / "docs" / "trace-decisions.md").read_text(encoding="utf-8")
    rows = {line for line in text.splitlines() if line.startswith("| O")}
    for rule, kind in RULES.items():
        assert any(f"`{rule}`" in row and row.startswith(f"| {kind} ") for row in rows), rule
    for name in conventions.READ_ATTRIBUTES:
        assert f"`{name}`" in text, name
    assert "trace-decisions.md" in (find_root() / "mkdocs.yml").read_text(encoding="utf-8")


def test_every_decision_made_is_the_kind_its_rule_makes(tmp_path: Path) -> None:
    from masrl_kb.traces.span_decisions import RULES

    for record, _ in SCENARIOS.values():
        doc = imported(record(GenAI), "otlp-hex", tmp_path)
        for decision, rule, *_ in decisions(doc):
            assert RULES[rule] == decision


def test_hostile_openinference_values_are_warned_about_or_kept(tmp_path: Path, capsys) -> None:
    run_ = Run(OpenInference)
    with run_.agent("solo\x1b[2J", 0, 3) as agent:
        bad_tokens = {
            OpenInference.KIND: "llm",  # lower case still reads as LLM
            SpanAttributes.LLM_TOKEN_COUNT_PROMPT: -5,
            SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: "12",
        }
        with run_.span("c", 0, 1, agent, bad_tokens):
            pass
        with run_.span("odd", 1, 2, agent, {OpenInference.KIND: "EVIL\x07"}):
            pass
    path = tmp_path / "spans.json"
    path.write_text(LAYOUTS["json-lines"](run_), encoding="utf-8")
    assert run(["trace", "import", "openinference", str(path)]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    [call] = [e for e in doc["events"] if e["type"] == "message"]
    assert call["agent"] == "solo\x1b[2J" and "tokens" not in call
    assert [s["name"] for s in doc["meta"]["otel"]["unmapped_spans"]] == ["odd"]
    assert err.count("is not a token count; ignored") == 2
    assert all(line.isprintable() for line in err.splitlines())


def test_json_lines_are_checked_at_every_level_and_name_the_line(tmp_path: Path) -> None:
    record = centralized(GenAI)
    good = json.dumps(otlp_json(record.exporter.get_finished_spans()))
    bad = json.dumps({"resourceSpans": [{"scopeSpans": "oops"}]})
    path = tmp_path / "spans.jsonl"
    path.write_text(f"{good}\n\n{bad}\n", encoding="utf-8")
    with pytest.raises(OtelImportError) as info:
        import_otel(read_span_file(path))
    assert (info.value.line, str(info.value)) == (
        3,
        "$.resourceSpans[0].scopeSpans: expected an array",
    )


def test_a_file_of_two_traces_needs_a_trace_id(tmp_path: Path, capsys) -> None:
    first, second = centralized(GenAI), debate(GenAI)
    lines = [_console(first, one_line=True), _console(second, one_line=True)]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    ids = [f"{r.exporter.get_finished_spans()[0].context.trace_id:032x}" for r in (first, second)]
    assert run(["trace", "import", "otel", str(path)]) == 2
    assert f"the file holds 2 traces ({ids[0]}, {ids[1]}); choose one" in capsys.readouterr().err
    b64 = base64.b64encode(bytes.fromhex(ids[1])).decode("ascii")
    assert run(["trace", "import", "otel", str(path), "--trace-id", b64]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["trace_id"], doc["topology"]) == (ids[1], "debate")
