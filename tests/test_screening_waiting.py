"""Candidates still awaiting a decision: the ``waiting`` note that says why, the rounds
page that lists every undecided candidate, and ``screen decide`` dropping a note once
its candidate is decided."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from masrl_kb.kb.rounds import awaiting_candidates, load_round
from masrl_kb.query.datafiles import data_file_problems
from masrl_kb.site.pages import site_files
from tests.conftest import run_cli as run
from tests.test_screening_decide import STOP_ID, TURN_ID
from tests.test_screening_import import CSV_TEXT, ROUND, SINCE, UNTIL, imported_kb

HOSTILE = '<img src=x onerror="alert(1)"> no primary page yet'


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return imported_kb(tmp_path)


def _round_file(kb: Path) -> Path:
    return kb / "screening" / ROUND / "round.yaml"


def _set_waiting(kb: Path, waiting: dict[str, str]) -> None:
    path = _round_file(kb)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["waiting"] = waiting
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _decide(kb: Path, tmp_path: Path, text: str) -> int:
    path = tmp_path / "d.csv"
    path.write_text("id,decision,reason\n" + text, encoding="utf-8")
    return run("--root", str(kb), "screen", "decide", ROUND, str(path))


def test_every_undecided_candidate_is_listed_with_its_note(kb: Path, tmp_path: Path) -> None:
    assert _decide(kb, tmp_path, f"{STOP_ID},exclude,out_of_scope\n") == 0
    _set_waiting(kb, {TURN_ID: HOSTILE})
    rnd = load_round(kb, ROUND)
    waiting = awaiting_candidates(kb, rnd)
    assert [(c["id"], c["why"]) for c in waiting] == [(TURN_ID, HOSTILE)]
    assert len(waiting) == rnd.awaiting
    page = site_files(kb)["rounds/index.md"]
    section = page.split(f"## Round {ROUND}")[1]
    assert f"### Awaiting a decision ({rnd.awaiting})" in section
    rows = re.findall(r'<li data-awaiting="([^"]+)">(.*?)</li>', section)
    assert [r[0] for r in rows] == [TURN_ID]
    turn = rows[0][1]
    assert "&lt;img src=x onerror=" in turn and "<img" not in turn
    assert "Turn-Level Credit for Debating Agents" in turn
    assert "href" not in turn  # not an arXiv id: no link is made up


def test_an_arxiv_candidate_links_the_arxiv_page_built_from_its_id(
    kb: Path, tmp_path: Path
) -> None:
    """The page links arxiv.org/abs/<checked id>, never the address the source gave."""
    path = tmp_path / "more.csv"
    path.write_text(
        CSV_TEXT.splitlines()[0]
        + '\nW9,An Awaiting arXiv Candidate,"Roe, Ida",2026-06-14,'
        + "https://evil.example/x,Test text: agents trained with RL.,,2606.99999,\n",
        encoding="utf-8",
    )
    args = ("screen", "import", str(path), "--source", "semantic_scholar", "--since", SINCE)
    assert run("--root", str(kb), *args, "--until", UNTIL) == 0
    section = site_files(kb)["rounds/index.md"].split(f"## Round {ROUND}")[1]
    row = dict(re.findall(r'<li data-awaiting="([^"]+)">(.*?)</li>', section))["2606.99999"]
    assert 'href="https://arxiv.org/abs/2606.99999"' in row and "evil.example" not in row


@pytest.mark.parametrize(
    ("waiting", "message"),
    [
        ({STOP_ID: "decided, yet waiting"}, "is decided (exclude); remove its note"),
        ({"2611.99999": "not here"}, "is not a candidate of this round"),
    ],
)
def test_validate_refuses_a_note_on_a_decided_or_unknown_candidate(
    kb: Path, tmp_path: Path, waiting: dict[str, str], message: str
) -> None:
    assert _decide(kb, tmp_path, f"{STOP_ID},exclude,out_of_scope\n") == 0
    _set_waiting(kb, {**waiting, TURN_ID: "fine"})
    problems = [p for p in data_file_problems(kb) if p.field == "waiting"]
    assert len(problems) == 1, problems
    (problem,) = problems
    assert problem.path == f"screening/{ROUND}/round.yaml" and message in problem.message
    lines = _round_file(kb).read_text(encoding="utf-8").splitlines()
    assert next(iter(waiting)) in lines[problem.line - 1]


@pytest.mark.parametrize(
    ("note", "message"),
    [
        ("two\nlines", "a line break"),
        ("   ", "empty"),
        ("x" * 401, "longer than 400 characters"),
        (7, "text"),
    ],
)
def test_a_malformed_note_is_one_line_naming_the_field(
    kb: Path, note: object, message: str, capsys
) -> None:
    _set_waiting(kb, {TURN_ID: note})  # type: ignore[dict-item]
    assert run("--root", str(kb), "validate") != 0
    out = capsys.readouterr()
    (line,) = [x for x in (out.out + out.err).splitlines() if "waiting" in x]
    assert f"screening/{ROUND}/round.yaml:" in line and message in line.lower()


def test_decide_drops_the_note_of_the_candidate_it_decides(kb: Path, tmp_path: Path) -> None:
    _set_waiting(kb, {STOP_ID: "abstract unread", TURN_ID: "no code found"})
    assert _decide(kb, tmp_path, f"{STOP_ID},exclude,out_of_scope\n") == 0
    assert load_round(kb, ROUND).waiting == {TURN_ID: "no code found"}
    assert [p for p in data_file_problems(kb) if p.field == "waiting"] == []
