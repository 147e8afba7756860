"""``masrl-kb screen rank``: a round's candidates ordered by a model of past decisions,
and ``--simulate``, the replay of those decisions in the model's order."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from masrl_kb.contrib.screen.learned_rank import Labelled, relevance, simulate
from masrl_kb.contrib.screen.store import ScreeningError
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.conftest import run_cli as run
from tests.screening_stub import copy_kb

SINCE, UNTIL = "2026-06-01", "2026-06-30"
ROUND = f"{SINCE}_{UNTIL}"
CANDIDATES = (
    "id,title,authors,date,url,abstract\n"
    'R1,Baking Sourdough Bread at Home,"Cook, Ann",2026-06-02,https://example.org/r1,Text.\n'
    'R2,Multi-Agent Reinforcement Learning for LLM Orchestration,"Ray, Bo",2026-06-03,'
    "https://example.org/r2,Text.\n"
    'R3,Watercolour Painting of Coastal Birds,"Art, Cy",2026-06-04,https://example.org/r3,Text.\n'
)


def _separable(n: int = 40) -> Labelled:
    """Titles a model can tell apart: every include about agents, every exclude about food."""
    ones = [f"multi-agent reinforcement learning orchestrator team {i}" for i in range(n)]
    zeros = [f"sourdough bread baking recipe oven {i}" for i in range(n)]
    return Labelled(ones + zeros, [1] * n + [0] * n)


def test_simulation_finds_the_included_first_when_titles_separate_them() -> None:
    # 40 records: each revealed record is one more fit, so the replay's cost grows as n^2
    sim = simulate(_separable(20), runs=2)
    assert sim.records == 40 and sim.included == 20
    # half the records screened: a model that learned finds (nearly) every include
    assert sim.recall_at[0.5] >= 0.95
    assert sim.wss95 > 0.3


def test_simulation_of_labels_that_carry_no_signal_saves_little() -> None:
    titles = [f"paper number {i} on a topic" for i in range(40)]
    sim = simulate(Labelled(titles, [i % 2 for i in range(40)]), runs=2)
    assert sim.wss95 < 0.3


def test_relevance_ranks_the_on_topic_title_above_the_off_topic_one() -> None:
    low, high = relevance(_separable(), ["a bread recipe", "reinforcement learning team"])
    assert high > 0.5 > low


def test_too_few_decisions_of_one_kind_is_refused() -> None:
    with pytest.raises(ScreeningError, match="at least 2 included and 2 excluded"):
        relevance(Labelled(["a", "b", "c"], [1, 1, 0]), ["d"])


def test_rank_rewrites_candidates_best_first(tmp_path: Path, capsys) -> None:
    kb = copy_kb(tmp_path / "kb")
    listing = tmp_path / "list.csv"
    listing.write_text(CANDIDATES, encoding="utf-8")
    assert run("--root", str(kb), "screen", "import", str(listing), "--source", "openalex",
               "--since", SINCE, "--until", UNTIL) == 0  # fmt: skip
    before = {p.name for p in (kb / "screening" / ROUND).iterdir()}
    assert run("--root", str(kb), "screen", "rank", ROUND) == 0
    assert "3 candidate(s) ranked" in capsys.readouterr().out
    text = (kb / "screening" / ROUND / "candidates.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert "Reinforcement" in rows[0]["title"]
    assert {p.name for p in (kb / "screening" / ROUND).iterdir()} == before


def test_rank_of_a_missing_round_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    kb = copy_kb(tmp_path / "kb")
    assert run("--root", str(kb), "screen", "rank", "2026-01-01_2026-01-31") == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "2026-01-01_2026-01-31" in lines[0]


def test_rank_needs_a_round_or_simulate(tmp_path: Path, capsys) -> None:
    kb = copy_kb(tmp_path / "kb")
    assert run("--root", str(kb), "screen", "rank") == 2
    assert "--simulate" in capsys.readouterr().err


def test_simulate_prints_the_figures(tmp_path: Path, capsys) -> None:
    # the command's output, on a small pool (the replay's figures are tested above)
    kb = write_synthetic_root(tmp_path / "kb", papers=12, exclusions=12)
    assert run("--root", str(kb), "screen", "rank", "--simulate", "--runs", "1") == 0
    out = capsys.readouterr().out
    assert "replayed 24 past decisions (12 included), 1 run(s)" in out
    for share in ("10%", "25%", "50%"):
        assert f"recall after {share} screened" in out
    assert "WSS@95" in out


def test_the_weekly_workflow_runs_two_strategies_and_ranks() -> None:
    """Every screen run, import and rank call of the weekly workflow parses, the arXiv run
    and the other indexes are two strategies, and the round is ranked."""
    import re
    import shlex

    import yaml

    from masrl_kb.cli.main import build_parser

    path = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "screen.yml"
    steps = yaml.safe_load(path.read_text())["jobs"]["round"]["steps"]
    runs = [s["run"].replace("\\\n", " ") for s in steps if "run" in s]
    calls = [
        line.strip().split(" >")[0].split(" |")[0]
        for run in runs
        for line in run.splitlines()
        if re.match(r"masrl-kb screen (run|import|rank)\b", line.strip())
    ]
    values = {"SINCE": "2026-11-23", "UNTIL": "2026-11-29", "csv": "f.csv", "source": "openalex"}
    values |= {"query": "q", "steps.window.outputs.round": "2026-11-23_2026-11-29"}
    values |= {
        "steps.window.outputs.since": "2026-11-23",
        "steps.window.outputs.until": "2026-11-29",
    }
    parsed = {}
    for call in calls:
        filled = re.sub(r"\$\{\{ ([\w.]+) \}\}|\$\{?(\w+)\}?", lambda m: values[m[1] or m[2]], call)
        args = build_parser().parse_args(shlex.split(filled)[1:])
        parsed[args.step] = args
    assert parsed["run"].strategy == "A" and parsed["import"].strategy == "B"
    assert parsed["rank"].round_id == "2026-11-23_2026-11-29"
