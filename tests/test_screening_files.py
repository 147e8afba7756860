"""Screening files read and written safely (issue 27): arXiv ids from every id-bearing
column, a small ``round.yaml`` with its duplicates in a side file, tampered round files
refused in one line, ``decide`` writing all or nothing, sanitised names and warnings.

Every entry below is fictional except where it repeats a pooled record on purpose
(magrpo, arXiv 2508.04652) to be recognised as a duplicate.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.screening_stub import copy_kb

SINCE, UNTIL = "2026-06-01", "2026-06-30"
ROUND = f"{SINCE}_{UNTIL}"
HEADER = "id,title,authors,date,url,abstract,doi,arxiv_id,openreview_id\n"
POOLED = "2508.04652"  # papers/magrpo.yaml


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_kb(tmp_path / "kb")


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _import(kb: Path, path: Path, *extra: str, source: str = "openalex") -> int:
    args = ("screen", "import", str(path), "--source", source, "--since", SINCE)
    return run("--root", str(kb), *args, "--until", UNTIL, *extra)


def _rows(kb: Path, rid: str = ROUND) -> dict[str, dict]:
    text = (kb / "screening" / rid / "candidates.csv").read_text(encoding="utf-8")
    return {r["id"]: r for r in csv.DictReader(io.StringIO(text))}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(".lock")
    }


def _one_error(capsys: pytest.CaptureFixture[str], fragment: str) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    assert fragment in err[0], err
    return err[0]


# ---------------------------------------------------------------- arXiv ids in any column

# Each row names the pooled paper 2508.04652 (or an old-style id) in another column or form.
ID_FORMS = [
    ("url-abs", f"W1,T1,,2026-06-03,https://arxiv.org/abs/{POOLED}v2,,,,"),
    ("url-pdf", f"W1,T1,,2026-06-03,https://arxiv.org/pdf/{POOLED}v1.pdf,,,,"),
    ("url-html", f"W1,T1,,2026-06-03,https://arxiv.org/html/{POOLED}v3,,,,"),
    ("url-export", f"W1,T1,,2026-06-03,http://export.arxiv.org/abs/{POOLED},,,,"),
    ("url-doi-org", f"W1,T1,,2026-06-03,https://doi.org/10.48550/arXiv.{POOLED},,,,"),
    ("doi-datacite", f"W1,T1,,2026-06-03,,,10.48550/arXiv.{POOLED},,"),
    ("doi-prefixed", f"W1,T1,,2026-06-03,,,doi:10.48550/ARXIV.{POOLED},,"),
    ("doi-is-a-url", f"W1,T1,,2026-06-03,,,https://arxiv.org/abs/{POOLED},,"),
    ("id-arxiv-prefix", f"arXiv:{POOLED}v4,T1,,2026-06-03,,,,,"),
    ("arxiv-id-url", f"W1,T1,,2026-06-03,,,,https://arxiv.org/abs/{POOLED}v1,"),
    ("arxiv-id-doi", f"W1,T1,,2026-06-03,,,,10.48550/arXiv.{POOLED},"),
]


@pytest.mark.parametrize(("name", "row"), ID_FORMS, ids=[n for n, _ in ID_FORMS])
def test_a_pooled_arxiv_id_in_any_column_is_a_duplicate(
    kb: Path, tmp_path: Path, name: str, row: str
) -> None:
    from masrl_kb.contrib.screen.round_files import read_duplicates

    assert _import(kb, _write(tmp_path, "list.csv", HEADER + row + "\n"), "--empty-ok") == 0
    found = {d["id"]: (d["duplicate_of"], d["match"]) for d in read_duplicates(kb, ROUND)}
    assert found == {POOLED: ("papers/magrpo.yaml", "same arXiv id")}
    assert _rows(kb)[POOLED]["duplicate_of"] == "papers/magrpo.yaml"


def test_old_style_ids_in_urls_are_one_paper(kb: Path, tmp_path: Path) -> None:
    rows = (
        "W1,A Fictional Old Paper,,2026-06-03,https://arxiv.org/abs/hep-th/9901001v2,,,,\n"
        "W2,Another Title Entirely,,2026-06-04,https://arxiv.org/pdf/hep-th/9901001,,,,\n"
    )
    assert _import(kb, _write(tmp_path, "list.csv", HEADER + rows)) == 0
    rows_by_id = _rows(kb)
    assert rows_by_id["hep-th/9901001"]["duplicate_of"].startswith("this batch")


def test_ris_and_bibtex_read_arxiv_ids_from_their_id_fields(kb: Path, tmp_path: Path) -> None:
    from masrl_kb.contrib.screen.round_files import read_duplicates

    ris = (
        "TY  - JOUR\nTI  - Fictional A\nDA  - 2026/06/03\nUR  - https://example.org/a\n"
        f"UR  - https://arxiv.org/html/{POOLED}v2\nER  -\n"
    )
    bib = (
        f"@misc{{b, title={{Fictional B}}, date={{2026-06-04}}, doi={{10.48550/arXiv.{POOLED}}}}}\n"
    )
    assert _import(kb, _write(tmp_path, "a.ris", ris), "--empty-ok") == 0
    assert _import(kb, _write(tmp_path, "b.bib", bib), "--empty-ok", source="web_search") == 0
    dups = read_duplicates(kb, ROUND)
    assert [(d["id"], d["duplicate_of"]) for d in dups] == [(POOLED, "papers/magrpo.yaml")] * 2


# ---------------------------------------------------------------- round.yaml stays small


def test_twelve_thousand_duplicates_keep_round_yaml_small(kb: Path, tmp_path: Path) -> None:
    from masrl_kb.contrib.screen.round_files import read_duplicates
    from masrl_kb.kb.rounds import load_round

    rows = "".join(f"W{n},Copy {n},,2026-06-03,,,,{POOLED},\n" for n in range(12_000))
    assert _import(kb, _write(tmp_path, "big.csv", HEADER + rows), "--empty-ok") == 0
    folder = kb / "screening" / ROUND
    assert (folder / "round.yaml").stat().st_size < 4096
    assert len(read_duplicates(kb, ROUND)) == 12_000
    rnd = load_round(kb, ROUND)
    assert (rnd.counts["duplicates_removed"], rnd.duplicates_listed) == (12_000, 12_000)
    assert run("--root", str(kb), "validate") == 0


def test_the_duplicates_list_is_bounded_and_counted(
    kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from masrl_kb.contrib.screen import round_files
    from masrl_kb.kb.rounds import load_round

    monkeypatch.setattr(round_files, "MAX_DUPLICATES_BYTES", 500)
    rows = "".join(f"W{n},Copy {n},,2026-06-03,,,,{POOLED},\n" for n in range(100))
    assert _import(kb, _write(tmp_path, "big.csv", HEADER + rows), "--empty-ok") == 0
    assert (kb / "screening" / ROUND / "duplicates.csv").stat().st_size <= 500
    rnd = load_round(kb, ROUND)
    assert 0 < rnd.duplicates_listed < rnd.counts["duplicates_removed"] == 100


OLD_ROUND = (
    f"round: {ROUND}\nwindow:\n  since: {SINCE}\n  until: {UNTIL}\nrun_on: 2026-07-01\n"
    "source: arxiv\nfamilies:\n- multi_agent_llm\ncounts:\n  retrieved: {n}\n"
    "  outside_window: 0\n  duplicates_removed: {n}\n  to_screen: 0\nduplicates:\n{rows}"
)


def _old_round(kb: Path, n: int, row: str = "") -> Path:
    folder = kb / "screening" / ROUND
    folder.mkdir(parents=True)
    match = "look-alike title (similarity 100.0)"
    item = row or f"- id: '{{i}}'\n  duplicate_of: papers/magrpo.yaml\n  match: {match}\n"
    rows = "".join(item.format(i=f"2606.{i:05d}") for i in range(n))
    (folder / "round.yaml").write_text(OLD_ROUND.replace("{n}", str(n)).replace("{rows}", rows))
    return folder


def test_an_oversized_old_round_is_migrated_by_the_command(
    kb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from masrl_kb.contrib.screen.round_files import read_duplicates

    folder = _old_round(kb, 12_000)
    assert (folder / "round.yaml").stat().st_size > 1 << 20  # validate's limit
    assert run("--root", str(kb), "validate") == 2
    capsys.readouterr()
    assert run("--root", str(kb), "screen", "migrate", "--check") == 1
    assert not (folder / "duplicates.csv").exists()
    assert run("--root", str(kb), "screen", "migrate") == 0
    assert (folder / "round.yaml").stat().st_size < 4096
    assert len(read_duplicates(kb, ROUND)) == 12_000
    assert run("--root", str(kb), "validate") == 0
    before = _snapshot(kb)
    capsys.readouterr()
    assert run("--root", str(kb), "screen", "migrate") == 0
    assert "every round is in the current shape" in capsys.readouterr().out
    assert _snapshot(kb) == before


def test_the_old_shape_names_the_command(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _old_round(kb, 1)
    assert run("--root", str(kb), "validate") == 2
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"screening/{ROUND}/round.yaml:14: duplicates: a list of duplicates is the old shape; "
        "run `masrl-kb screen migrate` to move it to duplicates.csv"
    ]


def test_a_tampered_old_round_is_not_migrated(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _old_round(kb, 2, "- id: 5\n  duplicate_of: [x]\n  match: 7\n")
    before = _snapshot(kb)
    assert run("--root", str(kb), "screen", "migrate") == 2
    _one_error(capsys, "round.yaml: duplicates[0]: expected a mapping of text")
    assert _snapshot(kb) == before


# ---------------------------------------------------------------- tampered round files

GOOD_CSV = (
    HEADER + 'W1,Learning When to Stop,"Placeholder, Ada",2026-06-03,https://example.org/w1,,,,\n'
    'W2,Turn Credit,"Stub, Dan",2026-06-04,,,,,AbCdEf1234\n'
)


def _made_round(kb: Path, tmp_path: Path) -> Path:
    assert _import(kb, _write(tmp_path, "good.csv", GOOD_CSV)) == 0
    return kb / "screening" / ROUND


def _decisions(tmp_path: Path) -> Path:
    from masrl_kb.contrib.screen.entries import title_id

    rows = f"{title_id('Learning When to Stop')},exclude,out_of_scope\n"
    rows += "openreview:AbCdEf1234,exclude,out_of_scope\n"
    return _write(tmp_path, "d.csv", "id,decision,reason\n" + rows)


def _tamper_entry(folder: Path, index: int, **fields: object) -> None:
    """Change fields of entry ``index`` (-1: the OpenReview one, decided second)."""
    import json

    path = folder / "entries.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if index < 0:
        index = next(n for n, e in enumerate(data) if e["openreview_id"])
    data[index].update(fields)
    path.write_text(json.dumps(data), encoding="utf-8")


TAMPERED = [
    ("title-number", {"title": 5}, "entry 1: title: expected text, got int"),
    ("authors-text", {"authors": "abc"}, "entry 1: authors: expected a list"),
    ("authors-numbers", {"authors": [1, 2]}, "entry 1: authors: [0]: expected text"),
    ("title-escape", {"title": "A\x1b[2J title"}, "entry 1: title: empty, longer than"),
    ("submitted-bad", {"submitted": "2026-13-01"}, "entry 1: submitted: expected a date"),
    ("url-javascript", {"url": "javascript:alert(1)"}, "entry 1: url: expected an http(s)"),
    ("unknown-field", {"evil": 1}, "entry 1: unknown field 'evil'"),
    ("score-text", {"score": "high"}, "entry 1: score: expected a number"),
]


@pytest.mark.parametrize(("name", "fields", "message"), TAMPERED, ids=[t[0] for t in TAMPERED])
@pytest.mark.parametrize("command", ["decide", "import"])
def test_a_tampered_entries_json_is_one_line(
    kb: Path, tmp_path: Path, capsys, command: str, name: str, fields: dict, message: str
) -> None:
    folder = _made_round(kb, tmp_path)
    _tamper_entry(folder, 1, **fields)
    before = _snapshot(kb)
    capsys.readouterr()
    if command == "decide":
        code = run("--root", str(kb), "screen", "decide", ROUND, str(_decisions(tmp_path)))
    else:
        more = HEADER + "W9,Another Fictional Paper,,2026-06-05,https://example.org/w9,,,,\n"
        code = _import(kb, _write(tmp_path, "more.csv", more))
    assert code == 2
    _one_error(capsys, f"screening/{ROUND}/entries.json: {message}")
    assert _snapshot(kb) == before


@pytest.mark.parametrize("name", ["candidates.csv", "duplicates.csv"])
@pytest.mark.parametrize("command", ["decide", "import"])
def test_a_non_utf8_round_csv_is_one_line(
    kb: Path, tmp_path: Path, capsys, command: str, name: str
) -> None:
    folder = _made_round(kb, tmp_path)
    line = (folder / name).read_bytes().count(b"\n") + 1
    with open(folder / name, "ab") as fh:
        fh.write(b"caf\xe9,x,y\n")
    before = _snapshot(kb)
    capsys.readouterr()
    if command == "decide":
        code = run("--root", str(kb), "screen", "decide", ROUND, str(_decisions(tmp_path)))
    else:
        more = HEADER + "W9,Another Fictional Paper,,2026-06-05,https://example.org/w9,,,,\n"
        code = _import(kb, _write(tmp_path, "more.csv", more))
    assert code == 2
    _one_error(capsys, f"screening/{ROUND}/{name}:{line}: file: not UTF-8 text")
    assert _snapshot(kb) == before


# ---------------------------------------------------------------- decide: all or nothing


def test_decide_writes_all_or_nothing(kb: Path, tmp_path: Path, capsys) -> None:
    folder = _made_round(kb, tmp_path)
    # the second decision cannot be written: its source is no longer a taxonomy value
    _tamper_entry(folder, -1, source="myspace")
    before = _snapshot(kb)
    capsys.readouterr()
    assert run("--root", str(kb), "screen", "decide", ROUND, str(_decisions(tmp_path))) == 2
    _one_error(capsys, "openreview:AbCdEf1234: --source: unknown value 'myspace'")
    assert _snapshot(kb) == before
    _tamper_entry(folder, -1, source="openalex")
    assert run("--root", str(kb), "screen", "decide", ROUND, str(_decisions(tmp_path))) == 0
    assert len(set(_snapshot(kb)) - set(before)) == 2  # both exclusions, once all can be


def test_decide_interrupted_leaves_nothing(
    kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from masrl_kb.contrib.screen import decide as decisions

    _made_round(kb, tmp_path)
    real, calls = decisions.exclude_record, []

    def interrupted(*args: object, **kw: object):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(decisions, "exclude_record", interrupted)
    before = _snapshot(kb)
    with pytest.raises(KeyboardInterrupt):
        decisions.decide_round(ROUND, _decisions(tmp_path), root=kb)
    assert _snapshot(kb) == before


# ---------------------------------------------------------------- names and warnings

CONTROLS = ("\x1b", "\u202e", "\x07")


def test_a_bibtex_file_of_bad_blocks_is_one_line_without_escapes(
    kb: Path, tmp_path: Path, capsys
) -> None:
    block = "@misc{a%d, title={x\x1b[2J}, date={2026-06-03}, url={https://e.org/}\n"
    path = _write(tmp_path, "bad.bib", "".join(block % n for n in range(2000)))
    before = _snapshot(kb)
    assert _import(kb, path) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err[:500]
    assert "bad.bib:1: bibtex: malformed or truncated entry (and 1999 more problem(s))" in err
    assert not any(c in err for c in CONTROLS)
    assert _snapshot(kb) == before


def test_the_parsers_warnings_are_capped_and_cleaned() -> None:
    import logging

    from masrl_kb.contrib.screen.import_files import MAX_WARNINGS, LibraryWarnings

    caught = LibraryWarnings()
    with caught.catching("bibtexparser"):
        for n in range(400_000):
            logging.getLogger("bibtexparser.splitter").warning("block %d\x1b[2J\nnext", n)
    lines = caught.lines("x.bib")
    assert len(lines) == MAX_WARNINGS + 1
    assert lines[0] == "x.bib: block 0 [2J next"
    assert lines[-1] == f"x.bib: and {400_000 - MAX_WARNINGS} more warning(s) of the parser"


def test_a_file_name_with_controls_is_cleaned_when_printed_and_stored(
    kb: Path, tmp_path: Path, capsys
) -> None:
    from masrl_kb.kb.rounds import load_round

    name = "open\x1b[2Jalex\u202ecsv.csv"
    assert _import(kb, _write(tmp_path, name, GOOD_CSV)) == 0
    out = capsys.readouterr()
    assert not any(c in out.out + out.err for c in CONTROLS)
    assert "source:             openalex (open [2Jalexcsv.csv)" in out.out
    stored = (kb / "screening" / ROUND / "round.yaml").read_text(encoding="utf-8")
    assert not any(c in stored for c in CONTROLS)
    assert load_round(kb, ROUND).sources[0]["file"] == "open [2Jalexcsv.csv"
    bad = _write(tmp_path, "b\u202ead\x1b.csv", HEADER + "W1,,,2026-06-03,https://e.org/,,,,\n")
    capsys.readouterr()
    assert _import(kb, bad) == 2
    line = _one_error(capsys, "bad .csv:2: title: empty")
    assert not any(c in line for c in CONTROLS)


def test_a_round_yaml_file_name_with_controls_fails_validate(kb: Path, tmp_path: Path, capsys):
    folder = _made_round(kb, tmp_path)
    text = (folder / "round.yaml").read_text(encoding="utf-8")
    (folder / "round.yaml").write_text(
        text.replace("file: good.csv", 'file: "good\\u202e.csv"'), encoding="utf-8"
    )
    capsys.readouterr()
    assert run("--root", str(kb), "validate") == 2
    out = capsys.readouterr().out
    assert "round.yaml:" in out and "sources[0].file: a bidirectional-text control" in out


# ---------------------------------------------------------------- a round in progress


def test_a_window_not_over_is_refused_with_the_documented_way(kb: Path, tmp_path, capsys):
    import datetime as dt

    today = dt.date.today()
    since, until = today.replace(day=1), today + dt.timedelta(days=40)
    window = ["--since", since.isoformat(), "--until", until.isoformat()]
    path = _write(tmp_path, "now.csv", HEADER)
    args = ["--root", str(kb), "screen", "import", str(path), "--source", "web_search", *window]
    before = _snapshot(kb)
    assert run(*args, "--empty-ok") == 2
    _one_error(capsys, "the window is not over (--in-progress screens it as a round in progress)")
    assert _snapshot(kb) == before
    assert run(*args, "--empty-ok", "--in-progress") == 0
    assert "in progress:        the window has not ended" in capsys.readouterr().out
    from masrl_kb.kb.rounds import load_round
    from masrl_kb.query.views import pool_coverage

    rnd = load_round(kb, f"{since}_{until}")
    assert rnd.in_progress and rnd.covered == today
    from masrl_kb.kb.protocol import load_protocol
    from masrl_kb.query.coverage import round_reach

    assert round_reach(rnd) == today  # not the window's end, which is still ahead
    # no round searched the months between the cut-off and this one: nothing after it
    assert pool_coverage(kb) == load_protocol(kb).baseline
    assert run("--root", str(kb), "validate") == 0


def test_in_progress_for_an_ended_window_is_refused(kb: Path, tmp_path, capsys) -> None:
    path = _write(tmp_path, "now.csv", HEADER)
    before = _snapshot(kb)
    assert _import(kb, path, "--empty-ok", "--in-progress") == 2
    _one_error(capsys, f"--in-progress: the window ended on {UNTIL}; drop --in-progress")
    assert _snapshot(kb) == before


def test_a_later_batch_after_the_end_finishes_the_round(tmp_path: Path) -> None:
    import datetime as dt

    from masrl_kb.contrib.screen.batches import import_round
    from masrl_kb.kb.rounds import load_round

    root = copy_kb(tmp_path / "kb")
    window = (dt.date(2026, 11, 1), dt.date(2026, 11, 30))
    first = _write(tmp_path, "a.csv", HEADER)
    import_round(first, "web_search", *window, root=root, today=dt.date(2026, 11, 15),
                 empty_ok=True, in_progress=True)  # fmt: skip
    rnd = load_round(root, "2026-11-01_2026-11-30")
    assert rnd.in_progress and rnd.covered == dt.date(2026, 11, 15)
    second = _write(tmp_path, "b.csv", HEADER)
    import_round(second, "web_search", *window, root=root, today=dt.date(2026, 12, 1),
                 empty_ok=True)  # fmt: skip
    rnd = load_round(root, "2026-11-01_2026-11-30")
    assert not rnd.in_progress and rnd.covered == dt.date(2026, 11, 30)
    text = (root / "screening" / rnd.id / "round.yaml").read_text(encoding="utf-8")
    assert "in_progress" not in text


# ---------------------------------------------------------------- the draft decide writes


def test_an_inclusion_draft_stubs_its_evaluation_fields(kb: Path, tmp_path, capsys) -> None:
    from masrl_kb.contrib.screen.entries import title_id

    _made_round(kb, tmp_path)
    rows = f"id,decision,key\n{title_id('Learning When to Stop')},include,stop2026\n"
    assert (
        run("--root", str(kb), "screen", "decide", ROUND, str(_write(tmp_path, "d.csv", rows))) == 0
    )
    text = (kb / "papers" / "stop2026.yaml").read_text(encoding="utf-8")
    assert "\nevaluated_on: TODO\nevaluation_source: TODO\n" in text
    capsys.readouterr()
    assert run("--root", str(kb), "validate") == 2
    out = capsys.readouterr().out
    # one validate names both, instead of one cycle each once category is filled in
    assert "stop2026.yaml:27: evaluated_on: unfinished: replace the TODO placeholder" in out
    assert "stop2026.yaml:28: evaluation_source: unfinished: replace the TODO" in out


# ---------------------------------------------------------------- query families


def test_multi_agent_alone_is_no_safety_label(kb: Path, tmp_path: Path) -> None:
    import yaml

    rows = (
        "W1,Multi-agent Discussion For Fictional Tasks,,2026-06-03,https://example.org/w1,,,,\n"
        "W2,A Jailbreak Of A Fictional Multi-Agent Debate,,2026-06-04,https://example.org/w2,,,,\n"
    )
    path = _write(tmp_path, "safety.csv", HEADER + rows)
    # the search's own family is the fallback of an entry whose text names none
    assert _import(kb, path, "--query", "multi-agent LLM teams", source="web_search") == 0
    families = {r["title"]: r["families"] for r in _rows(kb).values()}
    assert families == {
        "Multi-agent Discussion For Fictional Tasks": "multi_agent_llm",
        "A Jailbreak Of A Fictional Multi-Agent Debate": "safety",
    }
    from masrl_kb.contrib.screen.entries import title_id

    ids = [title_id(t) for t in families]
    decisions = "id,decision,reason\n" + "".join(f"{i},exclude,out_of_scope\n" for i in ids)
    assert (
        run("--root", str(kb), "screen", "decide", ROUND, str(_write(tmp_path, "d.csv", decisions)))
        == 0
    )
    written = {}
    for path in sorted((kb / "exclusions").glob("E*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data["title"] in families:
            written[data["title"]] = data.get("query_family")
    assert written == {
        "Multi-agent Discussion For Fictional Tasks": "multi_agent_llm",
        "A Jailbreak Of A Fictional Multi-Agent Debate": "safety",
    }


def test_subject_terms_of_the_protocol() -> None:
    from masrl_kb.contrib.screen.entries import query_families, subject_terms
    from masrl_kb.kb.protocol import load_protocol
    from tests.screening_stub import REPO

    families = load_protocol(REPO).families
    assert subject_terms(families) == {"multi-agent"}
    assert query_families("Multi-agent scaling across tasks", families) == []
    # a family's own terms still label it, inside longer terms of other families too
    assert query_families("a coding agent", families) == ["tool_use"]
    assert query_families("agent swarm", families) == ["orchestration"]


def test_the_printed_duplicates_are_capped(kb: Path, tmp_path: Path, capsys) -> None:
    rows = "".join(f"W{n},Copy {n},,2026-06-03,,,,{POOLED},\n" for n in range(30))
    assert _import(kb, _write(tmp_path, "dups.csv", HEADER + rows), "--empty-ok") == 0
    out = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("  duplicate ") for line in out) == 20
    assert f"  ... and 10 more duplicate(s), listed in {ROUND}/duplicates.csv" in out
