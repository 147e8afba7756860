"""``masrl-kb screen decide`` with the note, key and stage columns, candidates that
are not on arXiv, the round lock and refused links.

The round comes from an imported list of fictional entries (see
tests/test_screening_import.py).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from pathlib import Path

import pytest

from masrl_kb.contrib.screen.decide import decide_round
from masrl_kb.contrib.screen.entries import title_id
from masrl_kb.contrib.screen.store import round_lock
from masrl_kb.kb.protocol import load_protocol
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.rounds import load_round
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.kb.yamlio import load_yaml_file
from tests.conftest import run_cli as run
from tests.test_screening_import import ROUND, SINCE, STOP, UNTIL, imported_kb

STOP_ID = title_id(STOP)
TURN_ID = "openreview:AbCdEf1234"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return imported_kb(tmp_path)


def _decide(kb: Path, path: Path, *extra: str) -> int:
    return run("--root", str(kb), "screen", "decide", ROUND, str(path), *extra)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_note_key_and_stage_columns(kb: Path, tmp_path: Path) -> None:
    decisions = _file(
        tmp_path,
        "d.csv",
        "id,decision,reason,note,key,stage\n"
        f'{STOP_ID},exclude,out_of_scope,"Robots, not language agents.",,full_text_screen\n'
        f"{TURN_ID},include,,Seen at a workshop.,turn-credit2026,\n",
    )
    assert _decide(kb, decisions) == 0
    rnd = load_round(kb, ROUND)
    assert rnd.decided[TURN_ID]["record"] == "papers/turn-credit2026.yaml"
    paper = load_yaml_file(kb / "papers/turn-credit2026.yaml").data
    assert paper["url"] == "https://openreview.net/forum?id=AbCdEf1234"
    assert paper["added"] == dt.date.today()
    assert paper["notes"] == "Seen at a workshop."
    assert paper["authors"] == ["Trudy, Fay"]
    assert paper["category"] == "TODO"
    exclusion = load_yaml_file(kb / rnd.decided[STOP_ID]["record"]).data
    assert exclusion["identifier"] == "https://example.org/w1"
    assert exclusion["source"] == "openalex"  # the batch's source
    assert exclusion["stage"] == "full_text_screen"
    assert exclusion["note"] == "Robots, not language agents."
    assert exclusion["query_family"] == "multi_agent_llm"  # its terms matched
    unfinished = {p.path for p in validate(kb).problems}
    assert unfinished == {"papers/turn-credit2026.yaml"}
    before = _snapshot(kb)
    assert _decide(kb, decisions) == 0  # idempotent
    assert _snapshot(kb) == before


def test_a_rows_query_family_names_the_exclusions_family(kb: Path, tmp_path: Path) -> None:
    """A candidate found by reading a list may match no family's terms; the curator who
    read it names the family rather than leaving the exclusion a TODO draft."""
    text = f"id,decision,reason,query_family\n{STOP_ID},exclude,out_of_scope,orchestration\n"
    assert _decide(kb, _file(tmp_path, "d.csv", text)) == 0
    record = load_round(kb, ROUND).decided[STOP_ID]["record"]
    assert load_yaml_file(kb / record).data["query_family"] == "orchestration"


def test_a_query_family_of_the_taxonomy_outside_the_protocol_is_accepted(
    kb: Path, tmp_path: Path
) -> None:
    """validate accepts any value of the query_family axis on an exclusion, so decide does too,
    even one no protocol family searches (the survey's own exclusions use them)."""
    families = load_protocol(kb).families
    extra = [v for v in load_taxonomy(kb)["query_family"].ids if v not in {f.id for f in families}]
    assert extra, "the fixture's taxonomy has a family the protocol does not search"
    text = f"id,decision,reason,query_family\n{STOP_ID},exclude,out_of_scope,{extra[0]}\n"
    assert _decide(kb, _file(tmp_path, "d.csv", text)) == 0
    record = load_round(kb, ROUND).decided[STOP_ID]["record"]
    assert load_yaml_file(kb / record).data["query_family"] == extra[0]
    assert run("--root", str(kb), "validate") == 0


def test_a_doi_candidate_is_excluded_with_its_doi(kb: Path, tmp_path: Path) -> None:
    more = tmp_path / "more.csv"
    more.write_text(
        "id,title,authors,date,url,abstract,doi\n"
        'W9,A Fictional Journal Paper,"Stub, Dan",2026-06-05,,Test text.,10.5555/fict.9\n'
    )
    args = ("screen", "import", str(more), "--source", "semantic_scholar", "--since", SINCE)
    assert run("--root", str(kb), *args, "--until", UNTIL) == 0
    text = "id,decision,reason\ndoi:10.5555/fict.9,exclude,out_of_scope\n"
    decisions = _file(tmp_path, "d.csv", text)
    assert _decide(kb, decisions) == 0
    record = load_round(kb, ROUND).decided["doi:10.5555/fict.9"]["record"]
    exclusion = load_yaml_file(kb / record).data
    assert exclusion["identifier"] == "doi:10.5555/fict.9"
    assert exclusion["url"] == "https://doi.org/10.5555/fict.9"
    assert exclusion["source"] == "semantic_scholar"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            f"id,decision,reason,key\n{STOP_ID},exclude,out_of_scope,nope\n",
            "d.csv:2: key: only an inclusion",
        ),
        (f"id,decision,key\n{TURN_ID},include,Bad_Key\n", "d.csv:2: key: 'Bad_Key' does not"),
        (
            f"id,decision,key\n{TURN_ID},include,k2026\n{STOP_ID},include,k2026\n",
            "d.csv:3: key: k2026 is also given on line 2",
        ),
        (f"id,decision,key\n{TURN_ID},include,magrpo\n", "d.csv:2: key: papers/magrpo.yaml"),
        (
            f"id,decision,reason,stage\n{STOP_ID},exclude,out_of_scope,skimmed\n",
            "d.csv:2: stage: unknown value 'skimmed'; allowed: ",
        ),
        (
            f'id,decision,reason,note\n{STOP_ID},exclude,out_of_scope,"a\x1b[31mred"\n',
            "d.csv:2: note: holds control characters",
        ),
        (
            f"id,decision,reason,query_family\n{STOP_ID},exclude,out_of_scope,robots\n",
            "d.csv:2: query_family: unknown value 'robots'; allowed: multi_agent_llm",
        ),
        (
            f"id,decision,query_family\n{TURN_ID},include,orchestration\n",
            "d.csv:2: query_family: only an exclusion names a query family",
        ),
        ("id,decision\ntitle:0000000000000000,include\n", "d.csv:2: id: title:0000000000000000"),
        ("id,decision\nW1,include\n", "d.csv:2: id: no candidate id"),
        ("TY  - JOUR\nER  -\n", "d.csv:1: header: this .csv file holds RIS"),
    ],
)
def test_bad_decision_rows(kb: Path, tmp_path: Path, capsys, text: str, message: str) -> None:
    path = _file(tmp_path, "d.csv", text)
    before = _snapshot(kb)
    assert _decide(kb, path) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err
    assert _snapshot(kb) == before


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("d.ris", "TY  - JOUR\nN1  - ASReview_relevant\n", "d.ris:1: ris: truncated"),
        ("d.ris", "id,decision\nW1,include\n", "d.ris:1: header: not RIS"),
        ("d.txt", "id,decision\n", "d.txt:1: file: unknown extension"),
        ("d.csv", "id,decision\r" + "x" * 140_000 + ",include\r", "d.csv:2: csv: field larger"),
    ],
)
def test_decision_formats_by_extension_and_header(
    kb: Path, tmp_path: Path, capsys, name: str, text: str, message: str
) -> None:
    before = _snapshot(kb)
    assert _decide(kb, _file(tmp_path, name, text)) == 2
    assert message in capsys.readouterr().err
    assert _snapshot(kb) == before


def test_concurrent_decides_serialise(kb: Path, tmp_path: Path) -> None:
    """Two decide runs at once: both decisions land, each record once."""
    files = [
        _file(tmp_path, "a.csv", f"id,decision,reason\n{STOP_ID},exclude,out_of_scope\n"),
        _file(tmp_path, "b.csv", f"id,decision,reason\n{TURN_ID},exclude,background_only\n"),
    ]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def decide(path: Path) -> None:
        start.wait()
        try:
            decide_round(ROUND, path, root=kb)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=decide, args=(f,)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    rnd = load_round(kb, ROUND)
    assert set(rnd.decided) == {STOP_ID, TURN_ID}
    records = {d["record"] for d in rnd.decided.values()}
    assert len(records) == 2
    titles = [load_yaml_file(kb / r).data["title"] for r in records]
    assert sorted(titles) == sorted([STOP, "Turn-Level Credit for Debating Agents"])
    assert validate(kb).ok


def test_a_held_lock_is_waited_for_then_refused(
    kb: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MASRL_KB_LOCK_WAIT", "0.3")
    path = _file(tmp_path, "a.csv", f"id,decision,reason\n{STOP_ID},exclude,out_of_scope\n")
    before = _snapshot(kb)
    with round_lock(kb, ROUND):
        assert _decide(kb, path) == 2
    assert "is locked by another screening run" in capsys.readouterr().err
    assert _snapshot(kb) == before


@pytest.mark.parametrize("target", ["folder", "round.yaml", "entries.json"])
def test_links_under_screening_are_refused(kb: Path, tmp_path: Path, capsys, target: str) -> None:
    folder = kb / "screening" / ROUND
    if target == "folder":
        moved = tmp_path / "moved"
        folder.rename(moved)
        os.symlink(moved, folder)
    else:
        real = tmp_path / target
        (folder / target).rename(real)
        os.symlink(real, folder / target)
    path = _file(tmp_path, "a.csv", f"id,decision,reason\n{STOP_ID},exclude,out_of_scope\n")
    before = _snapshot(tmp_path)
    assert _decide(kb, path) == 2
    err = capsys.readouterr().err
    assert "a symbolic link; refused" in err and len(err.splitlines()) == 1
    assert _snapshot(tmp_path) == before


def test_an_inclusion_records_the_rule_it_meets(kb: Path, tmp_path: Path) -> None:
    decisions = _file(tmp_path, "d.csv", f"id,decision,reason,key\n{TURN_ID},include,I1,turn2026\n")
    assert _decide(kb, decisions) == 0
    assert load_round(kb, ROUND).decided[TURN_ID]["reason"] == "I1"


@pytest.mark.parametrize("reason", ["I9", "out_of_scope", "I1; rm -rf /"])
def test_an_inclusion_reason_must_be_an_inclusion_rule(kb, tmp_path, capsys, reason) -> None:
    decisions = _file(tmp_path, "d.csv", f'id,decision,reason\n{TURN_ID},include,"{reason}"\n')
    before = _snapshot(kb)
    assert _decide(kb, decisions) == 2
    err = capsys.readouterr().err
    assert "reason: an inclusion's reason is the inclusion rule it meets" in err
    assert "allowed: I1, I2, I3, I4, I5" in err
    assert _snapshot(kb) == before
