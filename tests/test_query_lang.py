"""The query language: no code runs, unknown names and values are errors, same answers."""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import masrl_kb
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.kb.text import NAMES_SHOWN
from masrl_kb.query.claims import ClaimsFileError, evaluate_claims, load_claims
from masrl_kb.query.lang import (
    MAX_DEPTH,
    MAX_LENGTH,
    QueryError,
    columns_of,
    mask,
    parse,
    select_rows,
)
from masrl_kb.site.gaps import HEADLINES
from tests.conftest import REPO, run_cli

CORPUS = Path(__file__).parent / "hostile" / "queries"
REJECTED_GROUPS = ("code_execution", "unknown_names", "bad_values", "malformed")


@cache
def _papers() -> pd.DataFrame:
    return masrl_kb.load_papers(REPO)


@cache
def _exclusions() -> pd.DataFrame:
    return masrl_kb.load_exclusions(REPO)


def corpus(group: str) -> list[str]:
    """The queries of one corpus file (comments and blank lines skipped)."""
    lines = (CORPUS / f"{group}.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _hostile_cases() -> list[tuple[str, str]]:
    return [(group, query) for group in REJECTED_GROUPS for query in corpus(group)]


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "PWNED"


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize(("group", "query"), _hostile_cases())
def test_hostile_query_is_rejected_cleanly(group: str, query: str, marker: Path) -> None:
    text = query.replace("{marker}", str(marker))
    with pytest.raises(QueryError) as caught:
        mask(_papers(), text)
    message = str(caught.value)
    assert message and "\n" not in message
    assert len(message) < 1200  # listed values are cut, never a wall of text
    assert not marker.exists()


@pytest.mark.parametrize("query", corpus("accepted"))
def test_accepted_query_gives_a_mask(query: str) -> None:
    result = mask(_papers(), query)
    assert result.dtype == bool
    assert list(result.index) == list(_papers().index)


def test_generated_oversized_and_deep_queries_are_rejected() -> None:
    papers = _papers()
    cases = [
        "(" * 5000 + "credit_strict" + ")" * 5000,
        "not " * 2000 + "credit_strict",
        " and ".join(["credit_strict"] * 300),
        "credit_unit == " + '"' + "m" * (MAX_LENGTH + 1) + '"',
        "not (" * (MAX_DEPTH + 5) + "credit_strict" + ")" * (MAX_DEPTH + 5),
        "year in [" + ", ".join(["1"] * 500) + "]",
        "year > " + "-" * 1980 + "1",
        "year > " + "(" * 250 + "1" + ")" * 250,
        " or ".join(["year == 1"] * 150),
        "credit_strict\0",
        "credit_strict\x1b[2J",
    ]
    for query in cases:
        with pytest.raises(QueryError):
            mask(papers, query)


# ---------------------------------------------------------------- the attack of issue 8


def _claims_root(tmp_path: Path, where: str) -> Path:
    root = write_synthetic_root(tmp_path / "kb", papers=3, exclusions=1)
    text = (
        "claims:\n  - id: harmless\n    statement: s\n    table: papers\n"
        f"    where: '{where}'\n    op: '>='\n    expected: 0\n"
    )
    (root / "claims.yaml").write_text(text, encoding="utf-8")
    return root


def test_claim_calling_os_system_through_pd_does_not_run(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = f'credit_unit == "agent" or @pd.io.common.os.system("touch {marker}") == 0'
    root = _claims_root(tmp_path, where)
    with pytest.raises(ClaimsFileError, match=r"^claims.yaml:5: where: .*not allowed"):
        load_claims(root)
    assert run_cli("--root", str(root), "claims") == 2
    err = capsys.readouterr().err
    assert err.startswith("masrl-kb: claims.yaml:5: where: ") and err.count("\n") == 1
    assert not marker.exists()


def test_export_where_calling_os_system_does_not_run(
    marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = f'@pd.io.common.os.system("touch {marker}") == 0'
    assert run_cli("--root", str(REPO), "export", "csv", "--where", where) == 2
    assert "not allowed" in capsys.readouterr().err
    assert not marker.exists()


def test_select_calling_os_system_does_not_run(marker: Path) -> None:
    with pytest.raises(QueryError):
        masrl_kb.select(f'@pd.io.common.os.system("touch {marker}") == 0', papers=_papers())
    assert not marker.exists()


# ---------------------------------------------------------------- names and values


def test_misspelt_value_lists_the_allowed_values() -> None:
    with pytest.raises(QueryError) as caught:
        masrl_kb.select('credit_unit == "msg"', papers=_papers())
    message = str(caught.value)
    assert message.startswith("credit_unit: 'msg' is not one of its values (did you mean ")
    assert "; allowed: " in message
    for unit in _papers()["credit_unit"].cat.categories:
        assert unit in message


def test_unknown_column_lists_the_columns() -> None:
    with pytest.raises(QueryError) as caught:
        masrl_kb.select('credit == "message"', papers=_papers())
    message = str(caught.value)
    assert message.startswith("unknown column 'credit' (did you mean ")
    assert "; columns: key, title, " in message
    # 57 columns: the first ones, then a count (issue 27: the line does not grow with them)
    assert message.endswith(f" and {len(columns_of(_papers())) - NAMES_SHOWN} more")


def test_claim_with_misspelt_value_is_an_error_not_a_zero(tmp_path: Path) -> None:
    root = _claims_root(tmp_path, 'credit_unit == "msg"')
    with pytest.raises(ClaimsFileError, match=r"claims.yaml:5: where: claim harmless: credit_unit"):
        evaluate_claims(root=root)


def test_exclusion_table_has_its_own_columns() -> None:
    exclusions = _exclusions()
    reason = exclusions["reason"].cat.categories[0]
    assert len(select_rows(exclusions, f'reason == "{reason}"')) == int(
        (exclusions["reason"] == reason).sum()
    )
    with pytest.raises(QueryError, match="unknown column 'credit_unit'"):
        mask(exclusions, 'credit_unit == "message"')


def test_parse_is_pure_data() -> None:
    assert ast.dump(parse('year >= 2024 and credit_unit not in ["message"]')) == ast.dump(
        parse('year >= 2024 and (credit_unit not in ["message"])')
    )


# ---------------------------------------------------------------- same answers as before


def _real_queries() -> list[tuple[str, str]]:
    """Every query the product runs: claims.yaml and the gap pages, plus the corpus."""
    queries = [(c.table, c.where) for c in load_claims(REPO) if c.where]
    for headline in HEADLINES:
        queries += [("papers", where) for _, where in headline.measures]
        queries += [("papers", headline.members)]
        queries += [("papers", where) for _, where in headline.closest]
    queries += [("papers", q) for q in corpus("accepted") if "added" not in q]
    return queries


@pytest.mark.parametrize(("table", "where"), _real_queries())
def test_same_rows_as_dataframe_query(table: str, where: str) -> None:
    frame = _papers() if table == "papers" else _exclusions()
    old = frame.query(where, engine="python")  # trusted text only: the repository's own
    assert list(select_rows(frame, where).index) == list(old.index)


def test_claims_hold_as_before() -> None:
    results = evaluate_claims(root=REPO)
    papers, exclusions = _papers(), _exclusions()
    for result in results:
        claim = result.claim
        if claim.table == "audited":
            continue
        frame = papers if claim.table == "papers" else exclusions
        old = frame.query(claim.where, engine="python") if claim.where else frame
        assert result.value == len(old), claim.id


# ---------------------------------------------------------------- property: only QueryError

TOKENS = st.sampled_from(
    [
        "credit_unit",
        "credit_strict",
        "year",
        "O5",
        "added",
        "title",
        "key",
        "nosuch",
        "==",
        "!=",
        "<",
        ">=",
        " in ",
        " not in ",
        " and ",
        " or ",
        "not ",
        "(",
        ")",
        "[",
        "]",
        ",",
        '"message"',
        '"learned"',
        '"msg"',
        '"2025-01-01"',
        "2024",
        "-1",
        "1e400",
        "99999999999999999999999",
        "True",
        "None",
        "@pd",
        ".",
        "os",
        "()",
        "lambda",
        ":",
        "#",
        "\\",
        "'",
        '"',
        "\n",
    ]
)
QUERIES = st.one_of(st.text(max_size=80), st.lists(TOKENS, max_size=12).map("".join))


@settings(
    max_examples=int(os.environ.get("QUERY_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(QUERIES)
def test_random_text_raises_only_the_languages_error(text: str) -> None:
    try:
        result = mask(_papers(), text)
    except QueryError as err:
        assert str(err)
    else:
        assert result.dtype == bool and len(result) == len(_papers())
