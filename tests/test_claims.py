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
        expected = {
            "==": result.value == claim.expected,
            ">=": result.value >= claim.expected,
        }[claim.op]
        assert result.holds == expected, claim.id


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
