"""Synthetic, valid records for benchmarks and tests.

Every random choice is a draw fixed by the seed, the record's number and what is chosen
(:func:`draw`), never a step of one shared stream: a value added to one axis changes that
axis's picks alone, and only for the records the new value wins (:func:`pick`, highest
random weight), so a pool and the tests over it stay put when the taxonomy grows.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import yaml

from masrl_kb.kb.benchmarks import BENCHMARKS_FILE
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.records import EXCLUSIONS_DIR, PAPERS_DIR
from masrl_kb.kb.taxonomy import TAXONOMY_FILE, Taxonomy, load_taxonomy

SYNTHETIC_BENCHMARK = {
    "id": "synthetic-bench",
    "name": "Synthetic Bench",
    "url": "https://example.org/bench",
    "evaluates": "Nothing: a stand-in that synthetic records report results on.",
    "multi_agent_native": False,
}


def draw(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by ``seed`` and ``parts`` alone."""
    digest = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def pick(ids: Sequence[str], seed: int, *parts: object) -> str:
    """One of ``ids``: the one whose draw is highest, so that a new id takes over only the
    records where it draws highest and every other record keeps its value."""
    return max(ids, key=lambda v: draw(seed, *parts, v))


def synthetic_paper(i: int, tax: Taxonomy, seed: int = 0) -> dict:
    """A valid paper record number ``i`` with random tags."""
    pick_ = lambda axis: pick(tax[axis].ids, seed, i, axis)  # noqa: E731
    chance = lambda *what: draw(seed, i, *what)  # noqa: E731
    unit = pick_("credit_unit")
    decisions = [
        {
            "id": d,
            "learned": chance(d, "learned") < 0.3,
            "why": f"Synthetic decision {d} of paper {i}.",
        }
        for d in tax["decision"].ids
        if chance(d, "touched") < 0.25
    ]
    evidence = {"source": "paper", "where": "Section 3", "url": f"https://example.org/papers/{i}"}
    for d in decisions:
        if d["learned"]:
            d["mechanism"] = "explicit"
            d["evidence"] = dict(evidence)
    strict = unit != "NA" and chance("strict") < 0.5
    record = {
        "key": f"synthetic-{i:05d}",
        "title": f"Synthetic Paper Number {i} on Multi-Agent Credit",
        "authors": [f"Author, Number{i}", "Second, Person"],
        "year": 2015 + int(chance("year") * 12),
        "venue": "arXiv",
        "arxiv_id": f"25{(i % 12) + 1:02d}.{10000 + i:05d}",
        "url": f"https://example.org/papers/{i}",
        "affiliation": "Synthetic University",
        "category": pick_("category"),
        "is_rl": pick_("is_rl"),
        "reward_type": pick_("reward_type"),
        "credit_unit": unit,
        "topology": pick_("topology"),
        "scenario": pick_("scenario"),
        "pool_role": pick_("pool_role"),
        "verified": pick_("verified"),
        "credit_strict": strict,
        "decisions": decisions,
        "added": dt.date(2026, 5, 4) + dt.timedelta(days=i % 200),
        "summary": f"A synthetic record used to measure the tools at scale (number {i}).",
        "citation": {
            "bibtex_key": f"synthetic{i}",
            "entry_type": "article",
            "journal": f"arXiv preprint arXiv:25{(i % 12) + 1:02d}.{10000 + i:05d}",
        },
        "artifacts": _synthetic_artifacts(i),
        "evaluated_on": [
            {
                "benchmark": SYNTHETIC_BENCHMARK["id"],
                "metric": "accuracy",
                "multi_agent_native": i % 3 == 0,
            }
        ],
        "evaluation_source": f"https://example.org/papers/{i}",
    }
    if record["category"] == "benchmark":
        record["evaluates"] = f"Nothing real: synthetic benchmark number {i}."
        record["multi_agent_native"] = i % 4 == 0
    if strict:
        record["credit_mechanism"] = "estimator" if i % 2 else "shaping"
        record["credit_evidence"] = dict(evidence)
    return record


def _checked() -> dict:
    # A new date each time: one shared object would be dumped as a YAML alias.
    return {"none": dt.date(2026, 11, 30)}


def _synthetic_artifacts(i: int) -> dict:
    return {
        "code": f"https://example.org/code/{i}" if i % 2 else _checked(),
        "weights": _checked(),
        "data": _checked(),
        "traces": f"https://example.org/traces/{i}" if i % 5 == 0 else _checked(),
        "source": f"https://example.org/papers/{i}",
    }


def synthetic_exclusion(i: int, tax: Taxonomy, seed: int = 0) -> dict:
    """A valid exclusion record number ``i``."""
    return {
        "id": f"E{i:05d}",
        "title": f"Synthetic Excluded Record {i}",
        "identifier": f"SYNTH-{i}",
        "url": f"https://example.org/excluded/{i}",
        "source": pick(tax["exclusion_source"].ids, seed, "exclusion", i, "exclusion_source"),
        "query_family": pick(tax["query_family"].ids, seed, "exclusion", i, "query_family"),
        "screened": dt.date(2026, 4, 26),
        "stage": pick(tax["exclusion_stage"].ids, seed, "exclusion", i, "exclusion_stage"),
        "reason": pick(tax["exclusion_reason"].ids, seed, "exclusion", i, "exclusion_reason"),
        "note": f"Synthetic exclusion {i}.",
    }


def dump_record(data: dict) -> str:
    """YAML text of a record, in field order."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)


def write_synthetic_root(
    target: str | os.PathLike[str], papers: int, exclusions: int = 0, seed: int = 0
) -> Path:
    """Create a data root with ``papers`` and ``exclusions`` synthetic records."""
    target = Path(target)
    source = find_root()
    (target / PAPERS_DIR).mkdir(parents=True, exist_ok=True)
    (target / EXCLUSIONS_DIR).mkdir(parents=True, exist_ok=True)
    taxonomy = (source / TAXONOMY_FILE).read_bytes()
    (target / TAXONOMY_FILE).write_bytes(taxonomy)
    for name, text in _root_texts(source, taxonomy, papers, exclusions, seed):
        (target / name).write_text(text, encoding="utf-8")
    return target


@functools.lru_cache(maxsize=32)
def _root_texts(
    source: Path, taxonomy: bytes, papers: int, exclusions: int, seed: int
) -> tuple[tuple[str, str], ...]:
    """The files of a synthetic root but its taxonomy (a fixed function of the taxonomy's
    text and the counts: dumped once, however many roots the tests ask for)."""
    tax = load_taxonomy(source)
    files = [(BENCHMARKS_FILE, dump_record({"benchmarks": [SYNTHETIC_BENCHMARK]}))]
    for i in range(papers):
        rec = synthetic_paper(i, tax, seed)
        files.append((f"{PAPERS_DIR}/{rec['key']}.yaml", dump_record(rec)))
    for i in range(exclusions):
        rec = synthetic_exclusion(i + 1, tax, seed)
        files.append((f"{EXCLUSIONS_DIR}/{rec['id']}.yaml", dump_record(rec)))
    return tuple(files)
