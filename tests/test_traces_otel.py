"""``trace import otel``: runs recorded with the OpenTelemetry SDK, imported and measured.

Each scenario is recorded by ``opentelemetry-sdk`` itself (in-memory exporter, explicit
timestamps), written in the OTLP JSON layout of the collector's file exporter, imported,
validated, and its metrics compared with values worked out by hand in the comments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Span

from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.otel import import_otel
from masrl_kb.traces.spans import OtelImportError, read_span_document, read_span_file
from masrl_kb.traces.trace_checks import check_file, validate_trace

T0 = 1_700_000_000 * 10**9  # span timestamps are nanoseconds since the epoch
SECOND = 10**9


class Recorder:
    """A tracer whose spans take times in seconds from T0 and carry GenAI attributes."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "test-harness"}))
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("masrl-kb-tests")
        self.names: dict[str, str] = {}  # span id (hex) -> label used in the assertions

    @contextmanager
    def span(
        self,
        label: str,
        start: float,
        end: float,
        parent: Span | None = None,
        links: tuple[Span, ...] = (),
        **attributes: object,
    ) -> Iterator[Span]:
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            label,
            context=context,
            start_time=T0 + int(start * SECOND),
            attributes={k.replace("__", "."): v for k, v in attributes.items()},
            links=[Link(s.get_span_context()) for s in links],
        )
        self.names[f"{span.get_span_context().span_id:016x}"] = label
        yield span
        span.end(end_time=T0 + int(end * SECOND))

    def agent(self, name: str, start: float, end: float, parent: Span | None = None):
        attrs = {"gen_ai__operation__name": "invoke_agent", "gen_ai__agent__name": name}
        return self.span(name, start, end, parent, **attrs)

    def chat(self, label: str, start: float, end: float, parent: Span, tokens=(0, 0), links=()):
        with self.span(
            label,
            start,
            end,
            parent,
            links,
            gen_ai__operation__name="chat",
            gen_ai__request__model="test-model",
            gen_ai__usage__input_tokens=tokens[0],
            gen_ai__usage__output_tokens=tokens[1],
        ) as span:
            return span

    def tool(self, label: str, start: float, end: float, parent: Span, tool: str) -> Span:
        attrs = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": tool}
        with self.span(label, start, end, parent, **attrs) as span:
            return span

    def otlp(self) -> dict:
        return otlp_json(self.exporter.get_finished_spans())

    def label(self, event_id: str) -> str:
        """``w1.chat`` for a span's event, ``spawn worker-1`` / ``return worker-1`` for an agent."""
        span_id, _, suffix = event_id.partition(".")
        return f"{suffix} {self.names[span_id]}" if suffix else self.names[span_id]


def _any_value(value: object) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP JSON writes 64-bit integers as strings
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attrs: object) -> list[dict]:
    return [{"key": k, "value": _any_value(v)} for k, v in dict(attrs or {}).items()]


def _link(link: Link) -> dict:
    ctx = link.context
    return {"traceId": f"{ctx.trace_id:032x}", "spanId": f"{ctx.span_id:016x}"}


def otlp_json(spans: tuple[ReadableSpan, ...]) -> dict:
    """The collector file exporter's layout: resourceSpans / scopeSpans / spans, hex ids."""
    resource = spans[0].resource
    out_spans = []
    for span in spans:
        ctx = span.get_span_context()
        out_spans.append(
            {
                "traceId": f"{ctx.trace_id:032x}",
                "spanId": f"{ctx.span_id:016x}",
                "parentSpanId": f"{span.parent.span_id:016x}" if span.parent else "",
                "name": span.name,
                "kind": span.kind.value + 1,
                "startTimeUnixNano": str(span.start_time),
                "endTimeUnixNano": str(span.end_time),
                "attributes": _attributes(span.attributes),
                "links": [_link(ln) for ln in span.links],
                "events": [],
                "status": {},
            }
        )
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource.attributes)},
                "scopeSpans": [{"scope": {"name": "masrl-kb-tests"}, "spans": out_spans}],
            }
        ]
    }


# ----------------------------------------------------------------- scenarios


def fan_out() -> Recorder:
    """An orchestrator plans, spawns three workers in parallel, and aggregates."""
    rec = Recorder()
    with rec.agent("orchestrator", 0, 6) as orch:
        rec.chat("plan", 0, 1, orch, (100, 20))
        with rec.agent("worker-1", 1, 5, orch) as w1:
            rec.chat("w1.chat", 1, 2, w1, (50, 10))
            rec.tool("w1.search", 2, 5, w1, "search")
        with rec.agent("worker-2", 1, 4, orch) as w2:
            rec.chat("w2.chat", 1, 4, w2, (60, 20))
        with rec.agent("worker-3", 1, 3, orch) as w3:
            rec.chat("w3.chat", 1, 3, w3, (40, 10))
        rec.chat("aggregate", 5, 6, orch, (200, 50))
    return rec


def debate() -> Recorder:
    """Two debaters answer each other for three rounds; a moderator judges."""
    rec = Recorder()
    with rec.agent("moderator", 0, 7) as mod:
        with rec.agent("pro", 0, 6, mod) as pro, rec.agent("con", 0, 6, mod) as con:
            last = None
            for r in range(3):
                start = 2 * r
                links = (last,) if last is not None else ()
                p = rec.chat(f"pro.r{r + 1}", start, start + 1, pro, (30, 20), links)
                last = rec.chat(f"con.r{r + 1}", start + 1, start + 2, con, (30, 20), (p,))
        rec.chat("judge", 6, 7, mod, (100, 10), (p, last))
    return rec


def hierarchy() -> Recorder:
    """A planner runs two leads; each lead runs one specialist: two levels of spawning."""
    rec = Recorder()
    with rec.agent("planner", 0, 10) as planner:
        rec.chat("plan", 0, 1, planner, (10, 10))
        with rec.agent("lead-a", 1, 8, planner) as lead_a:
            rec.chat("a.brief", 1, 2, lead_a, (10, 10))
            with rec.agent("coder", 2, 7, lead_a) as coder:
                rec.tool("coder.python", 2, 6, coder, "python")
                rec.chat("coder.chat", 6, 7, coder, (10, 10))
            rec.chat("a.review", 7, 8, lead_a, (10, 10))
        with rec.agent("lead-b", 1, 5, planner) as lead_b:
            with rec.agent("tester", 1, 4, lead_b) as tester:
                rec.tool("tester.pytest", 1, 4, tester, "pytest")
            rec.chat("b.report", 4, 5, lead_b, (10, 10))
        rec.chat("final", 8, 10, planner, (10, 10))
    return rec


def imported(rec: Recorder, tmp_path: Path) -> tuple[dict, dict]:
    """Write the OTLP JSON, import it from the file, validate, measure."""
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(rec.otlp()), encoding="utf-8")
    doc, warnings = import_otel(read_span_file(path))
    assert validate_trace(doc, "imported") == []
    out = tmp_path / "trace.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    assert check_file(out)[1] == []
    # Runs of several agents without span links are told that O3 cannot be seen.
    links = any(e["type"] == "message" and "to" in e for e in doc["events"])
    expected = ("mapped to no event",) if links else ("mapped to no event", "no span links")
    assert all(w.startswith(expected) or expected[0] in w for w in warnings)
    return doc, trace_metrics(doc)


def test_fan_out(tmp_path: Path) -> None:
    rec = fan_out()
    doc, m = imported(rec, tmp_path)
    # 6 model/tool spans, 3 spawns, 3 returns; decisions: 3 O1, one O4, one O5
    assert (m["events"], m["agents"]) == (17, 4)
    assert (m["max_fanout"], m["spawn_depth"]) == (3, 1)
    # work: plan 1 + w1 1 + 3 + w2 3 + w3 2 + aggregate 1
    assert m["total_work_s"] == 11.0
    # plan 1 -> worker-1 chat 1 -> search 3 -> aggregate 1 (worker-2's branch gives 5)
    assert m["critical_path_s"] == 6.0
    assert [rec.label(e) for e in m["critical_path"]] == [
        "plan",
        "spawn worker-1",
        "w1.chat",
        "w1.search",
        "return worker-1",
        "aggregate",
    ]
    assert m["parallel_speedup"] == pytest.approx(11 / 6, abs=1e-6)
    assert m["tokens"] == 120 + 60 + 80 + 50 + 250
    assert m["wall_clock_s"] == 6.0
    assert m["agent_time"] == {
        "orchestrator": {"busy_s": 2.0, "idle_s": 4.0},  # 0-1 plan, 5-6 aggregate
        "worker-1": {"busy_s": 4.0, "idle_s": 0.0},
        "worker-2": {"busy_s": 3.0, "idle_s": 0.0},
        "worker-3": {"busy_s": 2.0, "idle_s": 0.0},
    }
    pairs = {(p["from"], p["to"]): p["events"] for p in m["communication"]}
    assert pairs == {("orchestrator", f"worker-{i}"): 1 for i in (1, 2, 3)} | {
        (f"worker-{i}", "orchestrator"): 1 for i in (1, 2, 3)
    }
    assert m["events_by_type"]["tool_call"] == 1
    assert doc["system"] == "test-harness"
    [tool] = [e for e in doc["events"] if e["type"] == "tool_call"]
    assert tool["tool"] == "search"


def test_debate(tmp_path: Path) -> None:
    rec = debate()
    doc, m = imported(rec, tmp_path)
    # 11 span events; decisions: 2 O1, 5 O3 (each reply), the judge's O4, O5
    assert (m["events"], m["agents"], m["max_fanout"], m["spawn_depth"]) == (20, 3, 2, 1)
    # The six turns answer each other in one chain, then the judge: no parallelism.
    assert m["total_work_s"] == m["critical_path_s"] == 7.0
    assert m["parallel_speedup"] == 1.0
    # The chain starts at the decision to spawn pro (O1), whose first turn opens the debate.
    assert [rec.label(e) for e in m["critical_path"]] == [
        "O1 pro",
        "spawn pro",
        "pro.r1",
        "con.r1",
        "pro.r2",
        "con.r2",
        "pro.r3",
        "con.r3",
        "judge",  # the judge reads con's last turn (via con's return is as long)
    ]
    assert m["tokens"] == 6 * 50 + 110
    assert m["agent_time"] == {
        "moderator": {"busy_s": 1.0, "idle_s": 6.0},
        "pro": {"busy_s": 3.0, "idle_s": 3.0},  # turns at 0, 2, 4; waits for con between
        "con": {"busy_s": 3.0, "idle_s": 2.0},  # first acts at 1
    }
    # Each turn is a message to whoever links to it next; spawns and returns count too.
    assert m["communication"] == [
        {"from": "pro", "to": "con", "events": 3},
        {"from": "con", "to": "moderator", "events": 2},  # last turn read by the judge, return
        {"from": "con", "to": "pro", "events": 2},
        {"from": "moderator", "to": "con", "events": 1},
        {"from": "moderator", "to": "pro", "events": 1},
        {"from": "pro", "to": "moderator", "events": 1},
    ]
    kinds = {e["type"] for e in doc["edges"]}
    assert {"message", "spawn", "return", "causal"} <= kinds


def test_hierarchy_two_levels_deep(tmp_path: Path) -> None:
    rec = hierarchy()
    _, m = imported(rec, tmp_path)
    assert (m["agents"], m["max_fanout"], m["spawn_depth"]) == (5, 2, 2)
    # plan 1 + brief 1 + python 4 + coder chat 1 + review 1 + tester 3 + report 1 + final 2
    assert m["total_work_s"] == 14.0
    # plan 1 -> brief 1 -> python 4 -> coder chat 1 -> review 1 -> final 2
    assert m["critical_path_s"] == 10.0
    assert [rec.label(e) for e in m["critical_path"]] == [
        "plan",
        "spawn lead-a",
        "a.brief",
        "spawn coder",
        "coder.python",
        "coder.chat",
        "return coder",
        "a.review",
        "return lead-a",
        "final",
    ]
    assert m["parallel_speedup"] == 1.4
    assert m["tokens"] == 6 * 20
    assert m["agent_time"]["lead-b"] == {"busy_s": 1.0, "idle_s": 3.0}  # 1 spawn .. 4-5 report


# ------------------------------------------------------------- mapping rules


def test_usage_summed_on_an_agent_from_its_calls_counts_once() -> None:
    rec = Recorder()
    with rec.span(
        "agent",
        0,
        2,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="solo",
        gen_ai__usage__input_tokens=8,
        gen_ai__usage__output_tokens=7,
    ) as agent:
        rec.chat("c1", 0, 1, agent, (5, 5))
        rec.chat("c2", 1, 2, agent, (3, 2))
    doc, _ = import_otel(read_span_document(rec.otlp()))
    assert doc["costs"]["tokens"] == 15  # the agent's 8 + 7 is the sum of its calls
    assert trace_metrics(doc)["tokens_by_agent"] == {"solo": 15}


def test_usage_of_an_agent_that_is_no_sum_of_its_calls_is_its_own() -> None:
    rec = Recorder()
    with rec.span(
        "agent",
        0,
        2,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="solo",
        gen_ai__usage__input_tokens=999,
    ) as agent:
        rec.chat("c", 0, 1, agent, (5, 5))
    doc, _ = import_otel(read_span_document(rec.otlp()))
    assert doc["costs"]["tokens"] == 1009
    assert trace_metrics(doc)["tokens_by_agent"] == {"solo": 1009}


def test_spans_that_map_to_nothing_are_kept_and_counted() -> None:
    rec = Recorder()
    with rec.agent("solo", 0, 3) as agent:
        with rec.span("GET /search", 0, 1, agent, http__method="GET") as http:
            rec.tool("t", 0, 1, http, "search")  # still the agent's, through the HTTP span
        rec.chat("c", 1, 2, agent, (1, 1))
    doc, warnings = import_otel(read_span_document(rec.otlp()))
    [unmapped] = doc["meta"]["otel"]["unmapped_spans"]
    assert unmapped["name"] == "GET /search"
    assert unmapped["attributes"] == {"http.method": "GET"}
    [tool] = [e for e in doc["events"] if e["type"] == "tool_call"]
    assert tool["agent"] == "solo"
    chat = next(e for e in doc["events"] if e["type"] == "message")
    assert chat["attrs"]["otel"] == {"gen_ai.request.model": "test-model"}
    assert warnings == [
        "1 span(s) mapped to no event (kept under meta.otel) and 1 attribute(s) not read by "
        "the mapping (kept under each event's attrs.otel)"
    ]


def _spans_doc(*spans: dict) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def _id(short: str) -> str:
    """A span id of 16 hex digits ending in ``short``."""
    return short.rjust(16, "0")


def _raw_span(span_id: str, start: object = "0", end: object = "1000000000", **extra) -> dict:
    span = {
        "traceId": "ab" * 16,
        "spanId": _id(span_id),
        "name": span_id,
        "startTimeUnixNano": start,
        "endTimeUnixNano": end,
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": "a"}},
        ],
    }
    return span | extra


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"resourceSpans": "x"}, "$.resourceSpans: expected an array"),
        ({}, "$: no spans (expected resourceSpans[].scopeSpans[].spans[]"),
        (
            _spans_doc(_raw_span("01", start="5", end="4")),
            "the span ends (4) before it starts (5)",
        ),
        (_spans_doc(_raw_span("01", start="1e400")), "'1e400' is not a whole number"),
        (_spans_doc(_raw_span("01", end=str(10**30))), "is not a whole number"),
        (_spans_doc(_raw_span("01"), _raw_span("01")), f"span id '{_id('01')}' appears twice"),
        (
            _spans_doc(_raw_span("01", attributes=[{"key": "k", "value": {"evalValue": "x"}}])),
            "unknown attribute value 'evalValue'",
        ),
        (
            _spans_doc(_raw_span("01", attributes=[])),
            "none of the 1 span(s) is a GenAI agent, tool or model call",
        ),
        (
            _spans_doc(_raw_span("01"), _raw_span("02", traceId="cd" * 16)),
            "the file holds 2 traces",
        ),
    ],
)
def test_malformed_otlp_is_one_clear_error(doc: dict, message: str) -> None:
    with pytest.raises(OtelImportError, match=None) as info:
        import_otel(read_span_document(doc))
    assert message in str(info.value)


def test_parent_loops_are_refused() -> None:
    doc = _spans_doc(
        _raw_span("01", parentSpanId=_id("02")), _raw_span("02", parentSpanId=_id("01"))
    )
    with pytest.raises(OtelImportError, match="loop"):
        import_otel(read_span_document(doc))


def test_a_link_forward_in_time_is_left_out() -> None:
    doc = _spans_doc(
        _raw_span("01", links=[{"traceId": "ab" * 16, "spanId": _id("02")}]),
        _raw_span("02", start="2000000000", end="3000000000"),
    )
    trace_doc, warnings = import_otel(read_span_document(doc))
    assert "1 link(s) point forward in time; left out" in warnings
    assert validate_trace(trace_doc, "x") == []


def test_cli_import_then_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_traces_cli import run

    spans = tmp_path / "spans.json"
    spans.write_text(json.dumps(fan_out().otlp()), encoding="utf-8")
    out = tmp_path / "run.json"
    assert run(["trace", "import", "otel", str(spans), "--out", str(out), "--task-id", "t1"]) == 0
    assert run(["trace", "validate", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["task_id"] == "t1"
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": 3}', encoding="utf-8")
    assert run(["trace", "import", "otel", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == f"{bad}: $.resourceSpans: expected an array\n"


def test_a_file_streamed_reads_as_the_same_file_parsed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from masrl_kb.traces import spans as reader

    path = tmp_path / "spans.json"
    doc = fan_out().otlp()
    doc["resourceSpans"].append({"resource": {"attributes": []}, "scopeSpans": "not a list"})
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    whole, _ = import_otel(read_span_file(path))
    monkeypatch.setattr(reader, "WHOLE_BYTES", 0)
    streamed, _ = import_otel(read_span_file(path))
    assert streamed == whole
