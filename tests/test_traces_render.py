"""The "Orchestration traces" site page, generated from the schema and the examples."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.traces.render import (
    cell,
    fields_by_type,
    load_examples,
    mermaid_text,
    trace_mermaid,
    trace_page_markdown,
)
from masrl_kb.traces.trace_schema import enum_of, load_schema


@pytest.fixture(scope="module")
def page() -> str:
    return trace_page_markdown(load_taxonomy())


def _row(page: str, first_cell: str) -> list[str]:
    line = next(line for line in page.splitlines() if line.startswith(f"| {first_cell} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_page_has_its_sections(page: str) -> None:
    assert page.startswith("# Orchestration traces\n")
    for heading in ["## The format", "## An example", "## Metrics of the examples"]:
        assert f"\n{heading}\n" in page
    assert "\n## From traces to rewards and decisions\n" in page


def test_every_event_and_edge_type_is_documented(page: str) -> None:
    for kind in enum_of("event_type") + enum_of("edge_type"):
        assert _row(page, kind)


def test_required_fields_per_event_type_come_from_the_schema(page: str) -> None:
    assert _row(page, "orchestrator_decision")[1] == "id, t, type, agent, decision"
    assert _row(page, "spawn")[1] == "id, t, type, agent, to"
    assert _row(page, "tool_result")[1] == "id, t, type, agent, tool"
    assert fields_by_type(load_schema(), "aggregate") == [
        "id",
        "t",
        "type",
        "agent",
    ]


def test_diagram_is_drawn_from_the_example_file(page: str) -> None:
    [diagram] = re.findall(r"```mermaid\n(.*?)\n```", page, re.S)
    doc = load_examples()["hierarchical"]
    assert diagram.startswith("flowchart TB")
    assert diagram.count("subgraph lane") == len({e["agent"] for e in doc["events"]})
    assert len(re.findall(r'^    n\d+\["', diagram, re.M)) == len(doc["events"])
    assert len(re.findall(r"^  n\d+ -", diagram, re.M)) == len(doc["edges"])
    assert 'n7["e8 tool_call search<br/>2.5-6.5 s"]' in diagram


def test_temporal_edges_are_dotted() -> None:
    diagram = trace_mermaid(load_examples()["swarm"])
    assert "n1 -.->|temporal| n2" in diagram
    assert "n0 -->|causal| n1" in diagram


def test_metrics_table_covers_every_example(page: str) -> None:
    for name in load_examples():
        assert _row(page, name)
    # swarm: 11 events, 5 agents, fan-out 4, depth 1, work 16.5 s, critical path 7.5 s
    assert _row(page, "swarm")[:8] == ["swarm", "11", "5", "4", "1", "16.5", "7.5", "2.2"]


def test_metrics_are_computed_when_the_page_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = find_root()
    shutil.copy(root / "taxonomy.yaml", tmp_path / "taxonomy.yaml")
    shutil.copytree(root / "traces", tmp_path / "traces")
    swarm_file = tmp_path / "traces" / "examples" / "swarm.json"
    swarm = json.loads(swarm_file.read_text(encoding="utf-8"))
    swarm["events"][8]["t_end"] = 16  # s4 now searches for 15 s instead of 5 s
    swarm["events"][9].update(t=16, t_end=17)
    swarm["events"][10].update(t=17, t_end=17.5)
    swarm_file.write_text(json.dumps(swarm), encoding="utf-8")
    # work 16.5 + 10 = 26.5 s; critical path 1 + 15 + 1 + .5 = 17.5 s
    expected = ["swarm", "11", "5", "4", "1", "26.5", "17.5", "1.51"]
    assert _row(trace_page_markdown(load_taxonomy(tmp_path), tmp_path), "swarm")[:8] == expected
    monkeypatch.setenv("MASRL_KB_ROOT", str(tmp_path))
    assert _row(trace_page_markdown(load_taxonomy()), "swarm")[:8] == expected


def test_invalid_example_stops_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = find_root()
    shutil.copy(root / "taxonomy.yaml", tmp_path / "taxonomy.yaml")
    shutil.copytree(root / "traces", tmp_path / "traces")
    (tmp_path / "traces" / "examples" / "broken.json").write_text("[]", encoding="utf-8")
    monkeypatch.setenv("MASRL_KB_ROOT", str(tmp_path))
    with pytest.raises(ValueError, match="broken.json: \\$: a trace must be a JSON object"):
        trace_page_markdown(load_taxonomy())


def test_page_names_the_reward_families_and_decisions(page: str) -> None:
    assert "R7 Orchestration" in page
    assert "speed-up from parallelism" in page
    assert _row(page, "parallel_speedup")[2] == "R7 Orchestration"
    assert _row(page, "has_stop_decision")[2] == "O5 Stop"
    assert _row(page, "team")[1:] == ["shared", "R1 Shared team / outcome"]


def test_table_cells_are_escaped() -> None:
    assert cell("a|b <i>&\nc") == "a&#124;b &lt;i&gt;&amp; c"


def test_mermaid_labels_are_escaped() -> None:
    assert mermaid_text('say "hi" <b> & #1') == "say #quot;hi#quot; #lt;b#gt; #amp; #35;1"
    doc = load_examples()["centralized"]
    doc["events"][0]["agent"] = 'orch"] --> x["pwned'
    diagram = trace_mermaid(doc)
    assert 'subgraph lane0["orch#quot;] --#gt; x[#quot;pwned"]' in diagram
