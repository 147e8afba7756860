"""The rules across records (kb/crossrules.py), one test per rule with its exact message."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from masrl_kb.kb import crossrules
from masrl_kb.kb.benchmarks import BenchmarkFile
from masrl_kb.kb.model.base import context, validate_mapping
from masrl_kb.kb.model.paper import Paper
from masrl_kb.kb.records import RecordFile, RecordSet
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.kb.yamlio import load_yaml_text
from tests.conftest import GOOD_EXCLUSION, GOOD_PAPER, REPO

CTX = context(load_taxonomy(REPO))


def record(kind: str, rel: str, text: str) -> RecordFile:
    return RecordFile(kind, rel, load_yaml_text(text).data)


def paper(rel: str, text: str) -> tuple[RecordFile, Paper]:
    rec = record("paper", rel, text)
    typed, problems = validate_mapping(Paper, rec.data, rel, CTX)
    assert typed is not None, problems
    return rec, typed


def test_duplicate_key_arxiv_id_url_and_look_alike_title() -> None:
    twin = GOOD_PAPER.replace("A Deliberately", "A Deliberat\u0435ly")  # Cyrillic e
    found = [
        str(p)
        for p in crossrules.duplicate_problems(
            [record("paper", "papers/bad.yaml", GOOD_PAPER), record("paper", "papers/b.yaml", twin)]
        )
    ]
    assert found == [
        "papers/b.yaml:1: key: duplicate key: same as papers/bad.yaml:1",
        "papers/b.yaml:7: arxiv_id: duplicate arXiv id: same as papers/bad.yaml:7",
        "papers/b.yaml:8: url: duplicate URL: same as papers/bad.yaml:8",
        "papers/b.yaml:2: title: duplicate title: same as papers/bad.yaml:2",
    ]


def test_pooled_and_excluded_at_once() -> None:
    excluded = GOOD_EXCLUSION.replace("2502.00002", "2501.00001")
    records = [
        record("paper", "papers/bad.yaml", GOOD_PAPER),
        record("exclusion", "exclusions/E900.yaml", excluded),
    ]
    assert [str(p) for p in crossrules.duplicate_problems(records)] == [
        "exclusions/E900.yaml:3: identifier: pooled and excluded at once: "
        "same arXiv id as papers/bad.yaml:7",
        "exclusions/E900.yaml:4: url: pooled and excluded at once: same URL as papers/bad.yaml:8",
    ]


def test_evaluated_on_names_a_known_benchmark() -> None:
    text = GOOD_PAPER.replace(
        "evaluated_on: []",
        "evaluated_on:\n  - benchmark: nowhere\n    metric: accuracy\n"
        "    multi_agent_native: false\nevaluation_source: https://arxiv.org/abs/2501.00001",
    )
    registry = BenchmarkFile((SimpleNamespace(id="gsm8k"),), ())  # type: ignore[arg-type]
    found = crossrules.unknown_benchmark_problems([paper("papers/bad.yaml", text)], registry)
    assert [str(p) for p in found] == [
        "papers/bad.yaml:36: evaluated_on[0].benchmark: 'nowhere' is neither a pooled benchmark "
        "record nor an id in benchmarks.yaml (add it there with its url); allowed: gsm8k"
    ]


def test_registry_entries_are_valid_unique_and_not_pooled() -> None:
    data = load_yaml_text(
        "benchmarks:\n"
        "  - {id: bad, name: A, url: 'ftp://a', evaluates: x, multi_agent_native: false}\n"
        "  - {id: bad, name: B, url: 'https://b', evaluates: y, multi_agent_native: false}\n"
    ).data
    registry = BenchmarkFile((), (), tuple(data["benchmarks"]))
    pooled = [record("paper", "papers/bad.yaml", GOOD_PAPER)]
    assert [str(p) for p in crossrules.registry_problems(registry, pooled, CTX)] == [
        "benchmarks.yaml:2: benchmarks[0].url: 'ftp://a' is not an http(s) URL",
        "benchmarks.yaml:2: benchmarks[0].id: 'bad' is a pooled record's key; "
        "name the record itself instead",
        "benchmarks.yaml:3: benchmarks[1].id: 'bad' listed twice (line 2)",
    ]


def test_readings_name_pooled_papers(mini_root: Path) -> None:
    (mini_root / "readings").mkdir(exist_ok=True)
    (mini_root / "readings" / "x.yaml").write_text("reader: [unclosed\n", encoding="utf-8")
    records = RecordSet(mini_root, [], [], [])
    (found,) = crossrules.readings_problems(records)
    assert found.path == "readings/x.yaml" and "malformed YAML" in found.message
