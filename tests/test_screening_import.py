"""``masrl-kb screen import``: rounds made from candidate lists exported elsewhere.

The lists below are written by the tests: every entry is fictional (titles,
authors, ids) except where it repeats a pooled record on purpose, to be
removed as a duplicate (magrpo by arXiv id, difference-rewards2001 by DOI and
by title, owl2025 by OpenReview id).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from pathlib import Path

import pytest
import rispy

from masrl_kb.contrib.screen.entries import title_id
from masrl_kb.contrib.screen.round_files import read_duplicates
from masrl_kb.kb.rounds import load_round
from tests.conftest import run_cli as run
from tests.screening_stub import copy_kb

SINCE, UNTIL = "2026-06-01", "2026-06-30"
ROUND = f"{SINCE}_{UNTIL}"
HEADER = "id,title,authors,date,url,abstract,doi,arxiv_id,openreview_id\n"
STOP = "Learning When to Stop Delegating with Reinforcement Learning"
CSV_TEXT = HEADER + (
    f'W1,{STOP},"Placeholder, Ada; Example, Ben",2026-06-03,https://example.org/w1,'
    "Test text: an orchestrator learns with reinforcement learning when to stop.,,,\n"
    "W2,LLM Collaboration With Multi-Agent Reinforcement Learning,"
    '"Sample, Cara",2025-08-06,,Test text: a pooled paper again.,,2508.04652,\n'
    'W3,A Title Unlike Any Pooled One,"Stub, Dan",2026-06-10,,Test text.,'
    "10.1142/S0219525901000188,,\n"
    'W4,Optimal payoff functions for members of collectives!,"Mock, Eve",2026-06-11,'
    "https://example.org/w4,Test text: a look-alike title.,,,\n"
    'W5,Turn-Level Credit for Debating Agents,"Trudy, Fay",2026-06-12,,'
    "Test text: message credit for a team of LLM agents.,,,AbCdEf1234\n"
    'W6,An Orchestration Paper From April,"Old, Gus",2026-04-01,https://example.org/w6,'
    "Test text.,,,\n"
    'W7,OWL Under Another Name,"Owl, Hal",2026-06-13,,Test text.,,,MBJ46gd1CT\n'
)


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_kb(tmp_path / "kb")


def imported_kb(tmp_path: Path) -> Path:
    """A copy of the stub root with :data:`CSV_TEXT` imported as one round (the fixture of
    the tests that decide that round's candidates)."""
    root = copy_kb(tmp_path / "kb")
    path = tmp_path / "openalex.csv"
    path.write_text(CSV_TEXT, encoding="utf-8")
    assert _import(root, path) == 0
    return root


def _import(kb: Path, path: Path, source: str = "openalex", *extra: str) -> int:
    args = ("screen", "import", str(path), "--source", source, "--since", SINCE)
    return run("--root", str(kb), *args, "--until", UNTIL, *extra)


def _rows(kb: Path) -> dict[str, dict]:
    text = (kb / "screening" / ROUND / "candidates.csv").read_text(encoding="utf-8")
    return {r["id"]: r for r in csv.DictReader(io.StringIO(text))}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_an_import_reads_the_records_once(kb: Path, tmp_path: Path, monkeypatch) -> None:
    """The duplicates check and the ranking share one read of papers/ and exclusions/."""
    from masrl_kb.kb import records

    real, folders = records._read_dir, []

    def counted(root, folder, *args):
        folders.append(folder)
        return real(root, folder, *args)

    monkeypatch.setattr(records, "_read_dir", counted)
    assert _import(kb, _write(tmp_path, "openalex.csv", CSV_TEXT)) == 0
    assert sorted(folders) == ["exclusions", "papers"]


# ---------------------------------------------------------------- CSV


def test_csv_import_writes_a_round(kb: Path, tmp_path: Path, capsys) -> None:
    path = _write(tmp_path, "openalex.csv", CSV_TEXT)
    assert _import(kb, path, "openalex", "--query", "search: multi-agent credit") == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"round {ROUND}"
    rnd = load_round(kb, ROUND)
    assert rnd.sources == [
        {
            "name": "openalex",
            "query": "search: multi-agent credit",
            "file": "openalex.csv",
            "imported_on": rnd.sources[0]["imported_on"],
            "identified": 7,
            "duplicates_removed": 4,
            "outside_window": 1,
        }
    ]
    assert rnd.counts == {
        "retrieved": 7,
        "outside_window": 1,
        "duplicates_removed": 4,
        "to_screen": 2,
    }
    for name in ("identified:         7", "duplicates removed: 4", "new candidates:     2"):
        assert name in out
    rows = _rows(kb)
    assert {i for i, r in rows.items() if not r["duplicate_of"]} == {
        title_id(STOP),
        "openreview:AbCdEf1234",
    }
    assert rows["openreview:AbCdEf1234"]["url"] == "https://openreview.net/forum?id=AbCdEf1234"
    assert rows[title_id(STOP)]["source"] == "openalex"
    refs = rispy.loads((kb / "screening" / ROUND / "candidates.ris").read_text(encoding="utf-8"))
    assert {r["id"] for r in refs} == {title_id(STOP), "openreview:AbCdEf1234"}
    assert all(r["name_of_database"] == "OpenAlex" for r in refs)


def test_pooled_papers_are_duplicates_by_id_doi_openreview_and_title(
    kb: Path, tmp_path: Path
) -> None:
    assert _import(kb, _write(tmp_path, "list.csv", CSV_TEXT)) == 0
    matches = {d["id"]: (d["duplicate_of"], d["match"]) for d in read_duplicates(kb, ROUND)}
    assert matches["2508.04652"] == ("papers/magrpo.yaml", "same arXiv id")
    assert matches["doi:10.1142/s0219525901000188"] == (
        "papers/difference-rewards2001.yaml",
        "same DOI",
    )
    assert matches["openreview:MBJ46gd1CT"] == ("papers/owl2025.yaml", "same OpenReview id")
    by_title = next(v for k, v in matches.items() if k.startswith("title:"))
    assert by_title[0] == "papers/difference-rewards2001.yaml"
    assert by_title[1].startswith("look-alike title (similarity ")


def test_cr_only_line_endings_and_formula_guards_read(kb: Path, tmp_path: Path) -> None:
    text = CSV_TEXT.replace("\n", "\r").replace("W5,Turn-Level", "W5,'=Turn-Level")
    assert _import(kb, _write(tmp_path, "mac.csv", text)) == 0
    rnd = load_round(kb, ROUND)
    assert rnd.counts["retrieved"] == 7 and rnd.counts["to_screen"] == 2
    entries = (kb / "screening" / ROUND / "entries.json").read_text(encoding="utf-8")
    assert '"title": "=Turn-Level Credit for Debating Agents"' in entries
    assert _rows(kb)["openreview:AbCdEf1234"]["title"] == "'=Turn-Level Credit for Debating Agents"


# ---------------------------------------------------------------- RIS and BibTeX

RIS_TEXT = """TY  - JOUR
TI  - Orchestrator Credit from Counterfactual Rollouts
AU  - Placeholder, Ada
AU  - Example, Ben
DA  - 2026/06/04
UR  - https://arxiv.org/abs/2606.90001
AB  - Test text: counterfactual credit for an orchestrator trained with RL.
ER  -

TY  - JOUR
TI  - LLM Collaboration with Multi-Agent Reinforcement Learning
AU  - Sample, Cara
DA  - 2025/08/06
UR  - https://arxiv.org/abs/2508.04652v3
ER  -

TY  - CONF
TI  - Learned Stopping for Agent Teams
AU  - Stub, Dan
DA  - 2026/06/20
DO  - 10.5555/fictional.2026.001
ER  -
"""


def test_ris_import(kb: Path, tmp_path: Path) -> None:
    assert _import(kb, _write(tmp_path, "zotero.ris", RIS_TEXT), "curated_list") == 0
    rnd = load_round(kb, ROUND)
    assert rnd.counts == {
        "retrieved": 3,
        "outside_window": 0,
        "duplicates_removed": 1,
        "to_screen": 2,
    }
    rows = _rows(kb)
    assert rows["2508.04652"]["duplicate_of"] == "papers/magrpo.yaml"
    assert rows["2606.90001"]["authors"] == "Placeholder, Ada; Example, Ben"
    assert rows["doi:10.5555/fictional.2026.001"]["url"] == (
        "https://doi.org/10.5555/fictional.2026.001"
    )
    assert rnd.sources[0]["name"] == "curated_list"


BIB_TEXT = """% exported by a reference manager
@article{spawn2026,
  title = {Learning to {Spawn} Workers with Multi-Agent Reinforcement Learning},
  author = {Placeholder, Ada and Ben Example},
  date = {2026-06-08},
  eprint = {2606.90002},
  archivePrefix = {arXiv},
  abstract = {Test text: an orchestrator learns to spawn workers.},
}
@inproceedings{collectives,
  title = {Optimal Payoff Functions for Members of Collectives},
  author = {Mock, Eve},
  year = {2026}, month = jun, day = {15},
  url = {https://example.org/collectives},
}
"""


def test_bibtex_import(kb: Path, tmp_path: Path) -> None:
    assert _import(kb, _write(tmp_path, "list.bib", BIB_TEXT), "web_search") == 0
    rows = _rows(kb)
    spawn = rows["2606.90002"]
    assert spawn["title"] == "Learning to Spawn Workers with Multi-Agent Reinforcement Learning"
    assert spawn["authors"] == "Placeholder, Ada; Example, Ben"
    assert spawn["submitted"] == "2026-06-08"
    assert "multi_agent_llm" in spawn["families"].split(";")  # matched by its terms
    dup = next(r for r in rows.values() if r["duplicate_of"])
    assert dup["duplicate_of"] == "papers/difference-rewards2001.yaml"


# ---------------------------------------------------------------- a second batch


def test_second_batch_appends_and_deduplicates_against_the_first(
    kb: Path, tmp_path: Path, capsys
) -> None:
    assert _import(kb, _write(tmp_path, "openalex.csv", CSV_TEXT), "openalex") == 0
    first = load_round(kb, ROUND)
    second = RIS_TEXT + (
        f"TY  - JOUR\nTI  - {STOP.upper()}\nAU  - Placeholder, Ada\nDA  - 2026/06/03\n"
        "UR  - https://example.org/elsewhere\nER  -\n"
    )
    capsys.readouterr()
    assert _import(kb, _write(tmp_path, "list.ris", second), "curated_list") == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"round {ROUND}"
    rnd = load_round(kb, ROUND)
    assert [b["name"] for b in rnd.sources] == ["openalex", "curated_list"]
    assert rnd.sources[0] == first.sources[0]
    assert rnd.sources[1]["identified"] == 4
    assert rnd.sources[1]["duplicates_removed"] == 2  # magrpo, and the first batch's paper
    assert rnd.counts["retrieved"] == 7 + 4
    assert rnd.counts["to_screen"] == 4
    rows = _rows(kb)
    again = next(r for r in rows.values() if r["url"] == "https://example.org/elsewhere")
    assert again["duplicate_of"] == f"screening/{ROUND}/candidates.csv ({title_id(STOP)})"
    # the first batch's duplicates are still listed
    assert rows["doi:10.1142/s0219525901000188"]["duplicate_of"]
    scores = [float(r["score"]) for r in rows.values() if not r["duplicate_of"]]
    assert scores == sorted(scores, reverse=True)  # ranked again together
    # the same file again is refused, and changes nothing
    before = _snapshot(kb)
    assert _import(kb, tmp_path / "list.ris", "curated_list") == 2
    assert "already has a batch from list.ris" in capsys.readouterr().err
    assert _snapshot(kb) == before


def test_import_deduplicates_against_other_rounds(kb: Path, tmp_path: Path) -> None:
    assert _import(kb, _write(tmp_path, "a.csv", CSV_TEXT)) == 0
    later = HEADER + f'X1,{STOP},"Placeholder, Ada",2026-07-02,https://example.org/x1,,,,\n'
    path = _write(tmp_path, "b.csv", later)
    args = ("screen", "import", str(path), "--source", "openalex")
    assert run("--root", str(kb), *args, "--since", "2026-07-01", "--until", "2026-07-31") == 0
    dup = read_duplicates(kb, "2026-07-01_2026-07-31")
    assert dup[0]["duplicate_of"] == f"screening/{ROUND}/candidates.csv ({title_id(STOP)})"


def test_old_round_files_still_parse(kb: Path) -> None:
    folder = kb / "screening" / ROUND
    folder.mkdir(parents=True)
    (folder / "round.yaml").write_text(
        f"round: {ROUND}\nwindow:\n  since: {SINCE}\n  until: {UNTIL}\nrun_on: 2026-07-01\n"
        "source: arxiv\nfamilies:\n- multi_agent_llm\ncounts:\n  retrieved: 5\n"
        "  outside_window: 1\n  duplicates_removed: 2\n  to_screen: 2\n"
    )
    rnd = load_round(kb, ROUND)
    assert rnd.sources == []
    assert rnd.batches[0]["name"] == "arxiv"
    assert rnd.batches[0]["identified"] == 5


# ---------------------------------------------------------------- malformed input

BAD = [
    ("no-title.csv", "id,authors,date\nW1,x,2026-06-03\n", "no-title.csv:1: header: "),
    ("typo.csv", "id,title,date,url,arxiv\nW1,T,2026-06-03,https://e.org/,2606.00001\n", ":1:"),
    ("bad-date.csv", HEADER + "W1,A Title,,2026-06-31,https://e.org/,,,,\n", ":2: date: "),
    ("year-only.csv", HEADER + "W1,A Title,,2026,https://e.org/,,,,\n", ":2: date: "),
    ("future.csv", HEADER + "W1,A Title,,2099-06-03,https://e.org/,,,,\n", ":2: date: "),
    ("no-url.csv", HEADER + "W1,A Title,,2026-06-03,,,,,\n", ":2: url: "),
    ("js-url.csv", HEADER + "W1,A Title,,2026-06-03,javascript:alert(1),,,,\n", ":2: url: "),
    ("bad-doi.csv", HEADER + "W1,A Title,,2026-06-03,,,11.2/x,,\n", ":2: doi: "),
    ("bad-arxiv.csv", HEADER + "W1,A Title,,2026-06-03,,,,9999.1,\n", ":2: arxiv_id: "),
    ("short-row.csv", HEADER + "W1,A Title\n", ":2: row: "),
    ("empty-title.csv", HEADER + "W1,,,2026-06-03,https://e.org/,,,,\n", ":2: title: "),
    ("huge-cell.csv", HEADER + "W1,T,," + "x" * 140_000 + ",,,,,\n", ": csv: "),
    ("only-header.csv", HEADER, ":1: file: "),
    ("ris-in.csv", RIS_TEXT, "ris-in.csv:1: header: "),
    ("csv-in.ris", CSV_TEXT, "csv-in.ris:1: header: not RIS"),
    ("truncated.ris", RIS_TEXT.rsplit("ER  -", 1)[0], ":17: ris: truncated"),
    ("no-er.ris", RIS_TEXT.replace("ER  -\n\nTY  - JOUR", "\nTY  - JOUR", 1), ":9: ris: "),
    ("stray.ris", "TY  - JOUR\nTI  - x\nER  - \nnot a tag\n", ":4: ris: "),
    ("unclosed.bib", BIB_TEXT.rsplit("}", 2)[0], ": bibtex: "),
    ("csv-in.bib", CSV_TEXT, "csv-in.bib:1: header: not BibTeX"),
    ("latin1.csv", None, "latin1.csv:2: file: not UTF-8"),
    ("list.txt", CSV_TEXT, "list.txt:1: file: unknown extension"),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_malformed_file_is_one_line_and_writes_nothing(
    kb: Path, tmp_path: Path, capsys, name: str, text: str | None, message: str
) -> None:
    path = tmp_path / name
    if text is None:
        path.write_bytes(
            HEADER.encode() + "W1,Caf\xe9,,2026-06-03,https://e.org/,,,,\n".encode("latin-1")
        )
    else:
        path.write_bytes(text.encode("utf-8"))
    before = _snapshot(kb)
    assert _import(kb, path) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(str(path)) and message in lines[0], err
    assert "Traceback" not in err
    assert _snapshot(kb) == before
    assert not (kb / "screening").exists() or not list((kb / "screening").glob("2026-*"))


def test_a_malformed_second_batch_leaves_the_round_alone(kb: Path, tmp_path: Path, capsys) -> None:
    assert _import(kb, _write(tmp_path, "a.csv", CSV_TEXT)) == 0
    before = _snapshot(kb)
    assert _import(kb, _write(tmp_path, "b.ris", RIS_TEXT[:-30]), "curated_list") == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert _snapshot(kb) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--source", "myspace"), "--source: unknown value 'myspace'; allowed"),
        (("--source", "openalex", "--since", "2026-07-01"), "is before --since"),
    ],
)
def test_bad_options_are_one_line(kb: Path, tmp_path: Path, capsys, args, message) -> None:
    path = _write(tmp_path, "a.csv", CSV_TEXT)
    base = ["--root", str(kb), "screen", "import", str(path), "--since", SINCE, "--until", UNTIL]
    argv = base[:-4] + ["--since", SINCE, "--until", UNTIL] + list(args)
    assert run(*argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err
    assert not (kb / "screening").exists()


def test_links_are_refused(kb: Path, tmp_path: Path, capsys) -> None:
    real = _write(tmp_path, "a.csv", CSV_TEXT)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert _import(kb, link) == 2
    assert "link.csv:1: file: no such file" in capsys.readouterr().err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, kb / "screening")
    assert _import(kb, real) == 2
    assert "screening/:1: file: a symbolic link; refused" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_an_interrupted_swap_puts_the_old_round_back(
    kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from masrl_kb.contrib.screen import store as screen_store

    assert _import(kb, _write(tmp_path, "a.csv", CSV_TEXT)) == 0
    before = _snapshot(kb)
    real_rename = os.rename

    def interrupted(src, dst):
        if Path(src).name.endswith(".tmp"):
            raise KeyboardInterrupt
        real_rename(src, dst)

    monkeypatch.setattr(screen_store.os, "rename", interrupted)
    try:  # the command line turns Ctrl-C into an exit status
        assert _import(kb, _write(tmp_path, "b.ris", RIS_TEXT), "curated_list") != 0
    except KeyboardInterrupt:
        pass
    monkeypatch.setattr(screen_store.os, "rename", real_rename)
    after = {k: v for k, v in _snapshot(kb).items() if not k.endswith(".lock")}
    assert after == {k: v for k, v in before.items() if not k.endswith(".lock")}


def test_hostile_text_is_cleaned_not_echoed(kb: Path, tmp_path: Path, capsys) -> None:
    text = HEADER + (
        'W1,"Agents\x1b[2J\u202eTeams\nof LLMs",'
        '"Evil\x07, Mallory; \u200bGhost, Casper",2026-06-03,https://example.org/w1,'
        "\x1b]0;title\x07abstract,,,\n"
    )
    assert _import(kb, _write(tmp_path, "evil.csv", text)) == 0
    out = capsys.readouterr().out
    written = "".join(p.read_text(encoding="utf-8") for p in (kb / "screening" / ROUND).iterdir())
    for bad in ("\x1b", "\x07", "\u202e", "\u200b"):
        assert bad not in out and bad not in written
    row = next(iter(_rows(kb).values()))
    assert row["title"] == "Agents [2JTeams of LLMs"  # the escape character is gone
    assert row["authors"] == "Evil , Mallory; Ghost, Casper"  # BEL became a space


def test_an_empty_list_is_refused_unless_recorded_as_an_empty_search(tmp_path) -> None:
    from masrl_kb.contrib.screen.batches import import_round
    from masrl_kb.contrib.screen.import_files import ImportFileError

    root = copy_kb(tmp_path / "kb")
    empty = tmp_path / "none.csv"
    empty.write_text("id,title,authors,date,url,abstract\n")
    window = (dt.date(2026, 11, 1), dt.date(2026, 11, 30))
    with pytest.raises(ImportFileError, match="--empty-ok"):
        import_round(empty, "web_search", *window, root=root, today=dt.date(2026, 12, 1))
    assert not (root / "screening").exists()
    result = import_round(
        empty, "web_search", *window, "searched by hand", root, dt.date(2026, 12, 1), True
    )
    assert result.round.counts["retrieved"] == 0
    assert result.batch["identified"] == 0 and result.batch["query"] == "searched by hand"


def test_a_candidate_matching_no_family_takes_the_family_its_search_used(tmp_path) -> None:
    from masrl_kb.contrib.screen.batches import import_round

    root = copy_kb(tmp_path / "kb")
    listed = tmp_path / "list.csv"
    listed.write_text(
        "id,title,authors,date,url,abstract\n"
        '2611.00001,A Study Of Replay Buffers,"Doe, Jane",2026-11-02,'
        "https://arxiv.org/abs/2611.00001,\n"
    )
    window = (dt.date(2026, 11, 1), dt.date(2026, 11, 30))
    result = import_round(
        listed, "web_search", *window, "credit assignment in LLM teams", root, dt.date(2026, 12, 1)
    )
    assert [e.families for e in result.candidates] == [["credit_assignment"]]


def test_an_id_urlsplit_refuses_is_a_problem_line(tmp_path: Path) -> None:
    from masrl_kb.contrib.screen.import_files import ImportFileError, read_candidates

    bad = tmp_path / "bad.csv"
    bad.write_text("id,title,date,openreview_id\nx,A title,2026-11-02,http://[x\n")
    with pytest.raises(ImportFileError, match=r"bad\.csv:2: openreview_id: Invalid IPv6 URL"):
        read_candidates(bad, "web_search", dt.date(2026, 12, 1))


DAYS_READ = ["2026-06-03", "2026-6-3", "2026/06/03", "2026/06/03/", "2026/06/03/Spring"]
NOT_ONE_DAY = [
    "2026-06-031",  # an extra digit: never cut to 2026-06-03
    "2026-06-03/2026-07-09",  # a range: not its first day
    "2026/06/03/2026/07/09",  # RIS's other-info slot holds no second date
    "2026/06/03/2026",
    "2026-06/03",  # the separators of two forms mixed
    "2026-06-03 and later",
    "2026-06-03T10:00:00",  # a time after the day: not the YYYY-MM-DD asked for
]


@pytest.mark.parametrize("cell", DAYS_READ)
def test_a_date_cell_that_is_one_day_is_read(tmp_path: Path, cell: str) -> None:
    from masrl_kb.contrib.screen.import_files import read_candidates

    listed = _write(tmp_path, "list.csv", f"id,title,date,url\nx,A title,{cell},https://e.org/\n")
    [entry] = read_candidates(listed, "web_search", dt.date(2026, 12, 1))
    assert entry.submitted == dt.date(2026, 6, 3)


@pytest.mark.parametrize("cell", NOT_ONE_DAY)
def test_a_date_cell_with_more_than_one_day_is_refused(
    kb: Path, tmp_path: Path, capsys, cell: str
) -> None:
    listed = _write(tmp_path, "list.csv", f"id,title,date,url\nx,A title,{cell},https://e.org/\n")
    before = _snapshot(kb)
    assert _import(kb, listed) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{listed}:2: date: {cell!r} is not one day")
    assert _snapshot(kb) == before


def test_a_ris_date_with_a_range_is_refused(kb: Path, tmp_path: Path, capsys) -> None:
    text = "TY  - JOUR\nTI  - A Title\nDA  - 2026/06/03/2026/07/09\nUR  - https://e.org/a\nER  -\n"
    listed = _write(tmp_path, "list.ris", text)
    assert _import(kb, listed, "curated_list") == 2
    assert f"{listed}:1: date: '2026/06/03/2026/07/09' is not one day" in capsys.readouterr().err
