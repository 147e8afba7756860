"""``trace metrics --html``: a self-contained timeline page, escaped, critical path marked."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from masrl_kb.traces import timeline
from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.render import load_examples
from masrl_kb.traces.synth import synth_trace
from masrl_kb.traces.timeline import timeline_page, timeline_svg
from tests.test_traces_cli import EXAMPLES, run

SVG_NS = "{http://www.w3.org/2000/svg}"


def _svg(page: str) -> ET.Element:
    [svg] = re.findall(r"<svg.*?</svg>", page, re.S)
    return ET.fromstring(svg)  # well-formed XML, or this raises


def test_page_draws_every_event_and_marks_the_critical_path() -> None:
    doc = load_examples()["hierarchical"]
    metrics = trace_metrics(doc)
    page = timeline_page({"h.json": doc}, {"h.json": metrics})
    svg = _svg(page)
    bars = [r for r in svg.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None]
    assert len(bars) == len(doc["events"])
    marked = [r for r in bars if r.get("class") == "crit"]
    titles = {r.find(f"{SVG_NS}title").text.split()[0] for r in marked}
    assert titles == set(metrics["critical_path"])
    lanes = [r for r in svg.iter(f"{SVG_NS}rect") if r.get("class") == "lane"]
    assert len(lanes) == len({e["agent"] for e in doc["events"]})


def test_page_is_self_contained() -> None:
    doc = load_examples()["swarm"]
    page = timeline_page({"s.json": doc}, {"s.json": trace_metrics(doc)})
    assert "<script" not in page.lower()
    assert not re.search(r"\b(src|href)\s*=", page, re.I)
    assert "default-src 'none'" in page


def test_hostile_text_is_escaped() -> None:
    evil = '<script>alert("x")</script>&"'
    doc = load_examples()["centralized"]
    doc = json.loads(json.dumps(doc).replace('"orch"', json.dumps(evil)))
    doc["trace_id"] = evil
    doc["events"][0]["id"] = evil
    for edge in doc["edges"]:
        edge["src"] = evil if edge["src"] == "e1" else edge["src"]
    page = timeline_page({evil: doc}, {evil: trace_metrics(doc)})
    assert "<script" not in page
    assert "&lt;script&gt;" in page
    _svg(page)


def test_big_traces_are_cut_but_keep_the_critical_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeline, "MAX_BARS", 100)
    doc = synth_trace(10, 400)
    metrics = trace_metrics(doc)
    svg, drawn = timeline_svg(doc, metrics)
    assert len(metrics["critical_path"]) < 100 < len(doc["events"])
    assert drawn == 100
    assert svg.count('class="crit"') == len(metrics["critical_path"])


def test_cli_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.html"
    assert run(["trace", "metrics", "--html", str(out), *map(str, EXAMPLES)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == len(EXAMPLES)
    assert f"wrote {out}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("t0", "t1", "ticks"),
    [
        (0.0, 10.0, [0, 2, 4, 6, 8, 10]),
        (0.37, 1.92, [0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8]),
        (1_700.25, 1_703.0, [1700.5, 1701.0, 1701.5, 1702.0, 1702.5, 1703.0]),
        (0.0, 0.003, [0.0, 0.0005, 0.001, 0.0015, 0.002, 0.0025, 0.003]),
        (5.0, 5.0, [5.0]),
    ],
)
def test_ticks_fall_on_round_numbers(t0: float, t1: float, ticks: list[float]) -> None:
    assert timeline._ticks(t0, t1) == ticks


def test_bars_are_labelled_with_span_names_escaped_and_cut_to_fit() -> None:
    evil = "<img src=x onerror=alert(1)>"
    events = [
        {"id": "a", "t": 0, "t_end": 9, "type": "message", "agent": "x", "name": evil},
        {"id": "b", "t": 9, "t_end": 10, "type": "tool_call", "agent": "x", "tool": "search"},
        {"id": "c", "t": 10, "type": "orchestrator_decision", "agent": "x", "decision": "O5"},
    ]
    doc = {"trace_id": "t", "task_id": "t", "events": events, "edges": [], "rewards": {}}
    doc["costs"] = {"tokens": 0, "wall_clock_s": 10}
    page = timeline_page({"f": doc}, {"f": trace_metrics(doc)})
    svg = _svg(page)
    labels = [t.text for t in svg.iter(f"{SVG_NS}text") if t.get("class") == "bar"]
    # a: the whole name fits in its 864 px; b: 96 px leave room for "search"; c: too thin
    assert labels == [evil, "search"]
    assert "<img" not in page
    assert [t.text for t in svg.iter(f"{SVG_NS}text")][1:3] == ["0 s", "2 s"]


def test_decision_table_and_tokens_per_agent(tmp_path: Path) -> None:
    doc = load_examples()["centralized"]
    doc = json.loads(json.dumps(doc))
    doc["events"][0]["tokens"] = 1234
    metrics = trace_metrics(doc)
    page = timeline_page({"c.json": doc}, {"c.json": metrics})
    agent = doc["events"][0]["agent"]
    assert f"<tr><td>{agent}</td>" in page and "<td>1,234</td></tr>" in page
    for label, row in metrics["decision_latency"].items():
        assert f"<td>{label} " in page
        assert f"<td>{row['events']}</td>" in page
