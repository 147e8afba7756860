"""claims.yaml evaluated on the records, and `masrl-kb claims`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import masrl_kb
from masrl_kb.cli import main
from masrl_kb.query.claims import ClaimsFileError, evaluate_claims, load_claims

REPO = Path(masrl_kb.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def results():
    return {r.claim.id: r for r in evaluate_claims()}


def test_counts_come_from_the_records(results) -> None:
    papers, exclusions = masrl_kb.load_papers(), masrl_kb.load_exclusions()
    assert results["pool-size"].value == len(papers)
    assert results["exclusions-logged"].value == len(exclusions)
    assert results["records-audited"].value == len(papers) + len(exclusions)


def test_credit_claims_follow_the_strict_flag(results) -> None:
    papers = masrl_kb.load_papers()
    message = papers[papers["credit_unit"] == "message"]
    assert results["message-credit-broad"].value == len(message)
    assert results["message-credit-strict"].value == int(message["credit_strict"].sum())
    assert set(results["message-credit-strict"].keys) == set(
        message.index[message["credit_strict"]]
    )


def test_holds_is_the_comparison(results) -> None:
    for result in results.values():
        claim = result.claim
        target = result.total if claim.expected == "all" else claim.expected
        expected = {
            "==": result.value == target,
            "!=": result.value != target,
            "<": result.value < target,
            "<=": result.value <= target,
            ">": result.value > target,
            ">=": result.value >= target,
        }[claim.op]
        assert result.holds == expected, claim.id


def test_o5_layers_nest_and_follow_the_evidence(results) -> None:
    papers = masrl_kb.load_papers()
    learned = papers[papers["O5"] == "learned"]
    explicit = learned[learned["O5_mechanism"] == "explicit"]
    in_text = explicit[explicit["O5_source"].isin(["paper", "appendix"])]
    assert set(results["o5-never-learned"].keys) == set(in_text.index)
    assert set(results["o5-explicit-with-code"].keys) == set(explicit.index)
    assert set(results["o5-learned-any"].keys) == set(learned.index)
    implicit = set(results["o5-implicit"].keys)
    assert implicit | set(explicit.index) == set(learned.index)
    assert not implicit & set(explicit.index)
    assert all(r.claim.group == "o5-stop" for k, r in results.items() if k.startswith("o5-"))


def test_a_share_claim_counts_its_denominator(results) -> None:
    papers = masrl_kb.load_papers()
    methods = papers[papers["category"] == "rl_method"]
    code = results["rl-methods-release-code"]
    assert code.total == len(methods)
    assert set(code.keys) == set(methods.index[methods["has_code"]])
    assert code.shown_value == f"{code.value} of {len(methods)}"


def test_the_survey_claims_are_all_listed() -> None:
    ids = {c.id for c in load_claims()}
    assert {
        "pool-size",
        "exclusions-logged",
        "records-audited",
        "o5-never-learned",
        "message-credit-broad",
        "message-credit-strict",
        "orchestrator-credit-broad",
        "orchestrator-credit-strict",
        "o1-learned",
        "o2-learned",
        "o3-learned",
        "o4-learned",
        "r5-tool-reward-empty",
    } <= ids


def _root_with_claims(mini_root: Path, text: str) -> Path:
    (mini_root / "claims.yaml").write_text(text)
    return mini_root


def test_a_broken_claim_is_shown_and_fails_check(mini_root: Path, capsys) -> None:
    _root_with_claims(
        mini_root,
        (
            "claims:\n"
            "  - id: three-papers\n    statement: Three papers.\n    table: papers\n"
            "    op: '=='\n    expected: 3\n"
            "  - id: wrong\n    statement: Four papers.\n    table: papers\n"
            "    op: '=='\n    expected: 4\n"
        ),
    )
    assert main(["--root", str(mini_root), "claims"]) == 0
    out = capsys.readouterr().out
    assert "holds   three-papers  value   3  expected == 3" in out
    assert "BROKEN  wrong         value   3  expected == 4" in out
    assert "1 of 2 claims hold" in out
    assert main(["--root", str(mini_root), "claims", "--check"]) == 1


def test_bad_claims_file_names_line_and_field(mini_root: Path) -> None:
    _root_with_claims(
        mini_root,
        ("claims:\n  - id: x\n    statement: s\n    table: papers\n    op: '~'\n    expected: 1\n"),
    )
    with pytest.raises(ClaimsFileError, match=r"claims.yaml:5: op: allowed: ==, !=, <, <=, >, >="):
        load_claims(mini_root)


def test_all_needs_a_denominator(mini_root: Path) -> None:
    _root_with_claims(
        mini_root,
        "claims:\n  - id: x\n    statement: s\n    table: papers\n    op: '<'\n    expected: all\n",
    )
    with pytest.raises(ClaimsFileError, match=r"claims.yaml:6: expected: \"all\" needs an `of`"):
        load_claims(mini_root)


def test_a_bad_denominator_names_its_field(mini_root: Path) -> None:
    _root_with_claims(
        mini_root,
        (
            "claims:\n  - id: x\n    statement: s\n    table: papers\n"
            "    of: __import__('os')\n    op: '<'\n    expected: all\n"
        ),
    )
    with pytest.raises(ClaimsFileError, match=r"claims.yaml:5: of: "):
        load_claims(mini_root)


def test_bad_query_is_a_clear_error(mini_root: Path) -> None:
    _root_with_claims(
        mini_root,
        (
            "claims:\n  - id: q\n    statement: s\n    table: papers\n    where: nosuch == 1\n"
            "    op: '=='\n    expected: 1\n"
        ),
    )
    with pytest.raises(ClaimsFileError, match="claims.yaml:5: where: claim q: unknown column"):
        evaluate_claims(root=mini_root)


def test_real_claims_file_is_parsed(tmp_path: Path) -> None:
    shutil.copy(REPO / "claims.yaml", tmp_path / "claims.yaml")
    shutil.copy(REPO / "taxonomy.yaml", tmp_path / "taxonomy.yaml")
    assert [c.id for c in load_claims(tmp_path)] == [c.id for c in load_claims()]
