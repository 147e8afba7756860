"""Evidence, mechanism, authors, artifacts and evaluations: each rule fails with its message."""

from __future__ import annotations

from pathlib import Path

import pytest

from masrl_kb.kb.record_checks import validate
from masrl_kb.query.frames import load_papers
from tests import conftest
from tests.conftest import GOOD_PAPER

AXES = ("decision_mechanism", "evidence_source", "credit_mechanism")

LEARNED = GOOD_PAPER.replace("    learned: false\n", "    learned: true\n")
EVIDENCE = (
    "    mechanism: explicit\n"
    "    evidence: {source: paper, where: Section 3, url: 'https://arxiv.org/abs/2501.00001'}\n"
)
LEARNED_OK = LEARNED.replace(
    "    why: A fixed rule picks the next agent.\n",
    "    why: A fixed rule picks the next agent.\n" + EVIDENCE,
)


def problems(root: Path, text: str) -> list[str]:
    (root / "papers" / "bad.yaml").write_text(text, encoding="utf-8")
    return [str(p) for p in validate(root).problems]


def test_a_learned_decision_with_evidence_is_valid(mini_root: Path) -> None:
    assert problems(mini_root, LEARNED_OK) == []


CASES = {
    "learned without mechanism or evidence": (
        LEARNED,
        [
            "papers/bad.yaml:21: decisions[0].evidence: a learned decision carries evidence: "
            "{{source, where, url}}",
            "papers/bad.yaml:21: decisions[0].mechanism: a learned decision states its "
            "mechanism; allowed: {decision_mechanism}",
        ],
    ),
    "mechanism on a present decision": (
        LEARNED_OK.replace("    learned: true\n", "    learned: false\n"),
        [
            "papers/bad.yaml:23: decisions[0].mechanism: a mechanism belongs only to a learned "
            "decision; remove it or set learned: true"
        ],
    ),
    "unknown evidence source": (
        LEARNED_OK.replace("source: paper", "source: rumour"),
        [
            "papers/bad.yaml:24: decisions[0].evidence.source: unknown value 'rumour'; "
            "allowed: {evidence_source}"
        ],
    ),
    "evidence URL not http": (
        LEARNED_OK.replace("url: 'https://arxiv.org/abs/2501.00001'}", "url: 'javascript:x'}"),
        ["papers/bad.yaml:24: decisions[0].evidence.url: 'javascript:x' is not an http(s) URL"],
    ),
    "unknown mechanism": (
        LEARNED_OK.replace("mechanism: explicit", "mechanism: emergent"),
        [
            "papers/bad.yaml:23: decisions[0].mechanism: unknown value 'emergent'; "
            "allowed: {decision_mechanism}"
        ],
    ),
    "strict credit without evidence": (
        GOOD_PAPER.replace("credit_strict: false", "credit_strict: true"),
        [
            "papers/bad.yaml:18: credit_evidence: credit_strict: true needs credit_evidence: "
            "{{source, where, url}}",
            "papers/bad.yaml:18: credit_mechanism: credit_strict: true needs credit_mechanism; "
            "allowed: {credit_mechanism}",
        ],
    ),
    "truncated authors without a reason": (
        GOOD_PAPER.replace("year: 2025", "authors_truncated: true\nyear: 2025"),
        [
            "papers/bad.yaml:5: authors_note: a truncated author list needs authors_note "
            "saying why (a team-authored work)"
        ],
    ),
    "artifact none without a date": (
        GOOD_PAPER.replace("weights: {none: 2026-11-30}", "weights: {none: soon}"),
        [
            "papers/bad.yaml:31: artifacts.weights: none: expected a date written YYYY-MM-DD "
            "without quotes, got 'soon'"
        ],
    ),
    "artifact that is the paper's own page": (
        GOOD_PAPER.replace(
            "traces: {none: 2026-11-30}", 'traces: "https://arxiv.org/abs/2501.00001"'
        ),
        [
            "papers/bad.yaml:33: artifacts.traces: the paper's own page is not a released "
            "artifact; give the release's URL"
        ],
    ),
    "artifact that is not a URL": (
        GOOD_PAPER.replace('code: "https://example.org/code"', 'code: "file:///etc/passwd"'),
        ["papers/bad.yaml:30: artifacts.code: 'file:///etc/passwd' is not an http(s) URL"],
    ),
    "method without evaluated_on": (
        GOOD_PAPER.replace("evaluated_on: []\n", ""),
        [
            "papers/bad.yaml:10: evaluated_on: RL methods and frameworks list evaluated_on "
            "(an empty list when none)"
        ],
    ),
    "unknown benchmark": (
        GOOD_PAPER.replace(
            "evaluated_on: []",
            "evaluated_on:\n  - {benchmark: gsm9k, metric: accuracy, multi_agent_native: false}"
            "\nevaluation_source: https://arxiv.org/abs/2501.00001",
        ),
        [
            "papers/bad.yaml:36: evaluated_on[0].benchmark: 'gsm9k' is neither a pooled benchmark "
            "record nor an id in benchmarks.yaml (add it there with its url); allowed: {allowed}"
        ],
    ),
    "evaluations without their source": (
        GOOD_PAPER.replace(
            "evaluated_on: []",
            "evaluated_on:\n  - {benchmark: synthetic-bench, metric: accuracy, "
            "multi_agent_native: false}",
        ),
        [
            "papers/bad.yaml:35: evaluation_source: evaluated_on needs evaluation_source: the URL "
            "the results were read from"
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rule(mini_root: Path, case: str) -> None:
    text, expected = CASES[case]
    allowed = _allowed_benchmarks(mini_root)
    found = [p for p in problems(mini_root, text) if p.startswith("papers/bad.yaml")]
    axes = {a: conftest.allowed(a) for a in AXES}
    assert found == [e.format(allowed=allowed, **axes) for e in expected]


def _allowed_benchmarks(root: Path) -> str:
    """Pooled benchmark keys and registry ids of the fixture, as the message lists them."""
    papers = load_papers(root)
    pooled = set(papers.index[papers["category"] == "benchmark"])
    return ", ".join(sorted(pooled | {"synthetic-bench"}))


def test_registry_ids_are_unique_and_not_pooled_keys(mini_root: Path) -> None:
    (mini_root / "benchmarks.yaml").write_text(
        "benchmarks:\n"
        "  - {id: dup, name: A, url: 'https://a.example', evaluates: x,"
        " multi_agent_native: false}\n"
        "  - {id: dup, name: B, url: 'https://b.example', evaluates: y,"
        " multi_agent_native: false}\n"
        "  - {id: synthetic-00000, name: C, url: 'https://c.example', evaluates: z,"
        " multi_agent_native: false}\n",
        encoding="utf-8",
    )
    found = [str(p) for p in validate(mini_root).problems if p.path == "benchmarks.yaml"]
    assert found == [
        "benchmarks.yaml:3: benchmarks[1].id: 'dup' listed twice (line 2)",
        "benchmarks.yaml:4: benchmarks[2].id: 'synthetic-00000' is a pooled record's key; "
        "name the record itself instead",
    ]


def test_registry_that_is_a_link_is_not_followed(mini_root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("benchmarks: []\n# a secret line\n", encoding="utf-8")
    (mini_root / "benchmarks.yaml").unlink()
    (mini_root / "benchmarks.yaml").symlink_to(secret)
    found = [str(p) for p in validate(mini_root).problems]
    assert (
        "benchmarks.yaml:1: file: is a symbolic link (links are not followed: commit the file "
        "itself), not a regular file"
    ) in found
    assert not any("secret" in p for p in found)
