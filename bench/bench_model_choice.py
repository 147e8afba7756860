"""Why the record model is pydantic: validate 1000 synthetic papers with it and with msgspec.

    python bench/bench_model_choice.py [--papers 1000]

msgspec gets the same structure (nested Structs, unknown fields refused) but
plain ``str`` leaves, so it measures msgspec at its fastest; pydantic runs the
real model with every field check. Then one record with two faults shows what
each reports: pydantic both, msgspec the first only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time

import msgspec

from masrl_kb.kb.model.base import context, validate_mapping
from masrl_kb.kb.model.paper import Paper
from masrl_kb.kb.synthetic import synthetic_paper
from masrl_kb.kb.taxonomy import load_taxonomy


class _S(msgspec.Struct, forbid_unknown_fields=True):
    pass


class Evidence(_S):
    source: str
    where: str
    url: str


class Decision(_S):
    id: str
    learned: bool
    why: str
    mechanism: str | None = None
    evidence: Evidence | None = None


class Citation(_S):
    bibtex_key: str
    entry_type: str
    journal: str | None = None


class Artifacts(_S):
    code: str | dict
    weights: str | dict
    data: str | dict
    traces: str | dict
    source: str


class Evaluation(_S):
    benchmark: str
    metric: str
    multi_agent_native: bool


class PaperStruct(_S):
    key: str
    title: str
    authors: list[str]
    year: int
    venue: str
    url: str
    affiliation: str
    category: str
    is_rl: str
    reward_type: str
    credit_unit: str
    topology: str
    scenario: str
    pool_role: str
    verified: str
    credit_strict: bool
    decisions: list[Decision]
    added: dt.date
    summary: str
    citation: Citation
    artifacts: Artifacts
    arxiv_id: str | None = None
    credit_mechanism: str | None = None
    credit_evidence: Evidence | None = None
    evaluated_on: list[Evaluation] | None = None
    evaluation_source: str | None = None
    evaluation_provisional: str | None = None
    evaluated_on_none: dict | None = None
    evaluates: str | None = None
    multi_agent_native: bool | None = None
    authors_truncated: bool | None = None
    authors_note: str | None = None
    extra_urls: list[str] | None = None
    own_sites: list[str] | None = None
    notes: str | None = None
    sources: list[dict] | None = None


def _best(run, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=1000)
    n = parser.parse_args().papers
    tax = load_taxonomy()
    records = [synthetic_paper(i, tax) for i in range(n)]
    ctx = context(tax)
    pyd = _best(lambda: [Paper.model_validate(r, context=ctx) for r in records])
    msg = _best(lambda: [msgspec.convert(r, PaperStruct) for r in records])
    print(
        f"{n} papers: pydantic (full model) {pyd * 1e3:.1f} ms, msgspec (types only) "
        f"{msg * 1e3:.1f} ms"
    )
    bad = dict(records[0], year="2025", topology=5)
    print("pydantic:", [str(p) for p in validate_mapping(Paper, bad, "bad.yaml", ctx)[1]])
    try:
        msgspec.convert(bad, PaperStruct)
    except msgspec.ValidationError as err:
        print("msgspec: ", [str(err)])


if __name__ == "__main__":
    main()
