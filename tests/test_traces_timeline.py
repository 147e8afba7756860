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
