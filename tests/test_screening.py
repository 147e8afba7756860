"""``masrl-kb screen run`` and ``screen decide`` against a loopback arXiv API.

The fixture feeds (tests/fixtures/screening/) hold, over several pages and two
query families: new entries in the window, one found by both families, a
pooled paper under a new version suffix, a look-alike of an excluded title,
an entry submitted before the window, an entry without an arXiv id and an
entry with hostile text.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import pytest
import rispy

from masrl_kb.contrib.export.csv_io import guard_cell as csv_cell
from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.screen.round_files import CSV_COLUMNS, read_duplicates
from masrl_kb.contrib.sources.arxiv import ENV_ARXIV_URL
from masrl_kb.kb.protocol import PROTOCOL_FILE, ProtocolError, load_protocol
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.records import read_records
from masrl_kb.kb.rounds import load_round
from masrl_kb.kb.yamlio import load_yaml_file
from masrl_kb.query.frames import load_papers, load_pool
from tests.conftest import run_cli as run
from tests.screening_stub import ScreeningStub, copy_kb

SINCE, UNTIL = "2026-11-16", "2026-11-22"
ROUND = f"{SINCE}_{UNTIL}"
NEW_IDS = {"2611.90001", "2611.90002", "2611.90003", "2611.90006"}
FAST = ("--delay", "0", "--page-size", "3")


@pytest.fixture
def arxiv_api(monkeypatch: pytest.MonkeyPatch):
    stub = ScreeningStub()
    monkeypatch.setenv(ENV_ARXIV_URL, stub.url)
    yield stub
    stub.close()


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return copy_kb(tmp_path / "kb")


def _screen(kb: Path, since: str = SINCE, until: str = UNTIL) -> int:
    return run("--root", str(kb), "screen", "run", "--since", since, "--until", until, *FAST)


def _rows(kb: Path, rid: str = ROUND) -> list[dict]:
    text = (kb / "screening" / rid / "candidates.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _pooled_with(kb: Path, arxiv_id: str) -> str:
    records = read_records(kb)
    return next(r.rel for r in records.papers if r.data.get("arxiv_id") == arxiv_id)


# ---------------------------------------------------------------- screen run


def test_run_pages_every_family_and_counts(
    kb: Path, arxiv_api: ScreeningStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _screen(kb) == 0
    out = capsys.readouterr().out
    assert f"round {ROUND}" in out
    families = [f.id for f in load_protocol(kb).families]
    asked = {family for family, _, _ in arxiv_api.requests}
    assert asked == set(families)
    assert ("multi_agent_llm", 3, 3) in arxiv_api.requests  # the second page was fetched
    rnd = load_round(kb, ROUND)
    assert rnd.counts == {
        "retrieved": 7,
        "outside_window": 1,
        "duplicates_removed": 2,
        "to_screen": 4,
    }
    assert rnd.families == families
    [batch] = rnd.sources
    assert (batch["name"], batch["file"], batch["identified"]) == ("arxiv", "", 7)
    assert (batch["duplicates_removed"], batch["outside_window"]) == (2, 1)
    for family in load_protocol(kb).families:
        assert f'ti:"{family.terms[0]}"' in batch["query"]
    for name, value in rnd.counts.items():
        assert f"{name.replace('_', ' ')}:" in out.replace("outside the window", "outside window")
        assert str(value) in out


def test_run_removes_duplicates_and_says_of_what(kb: Path, arxiv_api: ScreeningStub) -> None:
    assert _screen(kb) == 0
    rows = {r["id"]: r for r in _rows(kb)}
    assert {i for i, r in rows.items() if not r["duplicate_of"]} == NEW_IDS
    # a pooled paper under a new version suffix (v8), submitted long before the window
    assert rows["2508.04652"]["duplicate_of"] == _pooled_with(kb, "2508.04652")
    # a look-alike of an excluded record's title
    assert rows["2611.90005"]["duplicate_of"] == "exclusions/E001.yaml"
    matches = {d["id"]: d["match"] for d in read_duplicates(kb, ROUND)}
    assert matches["2508.04652"] == "same arXiv id"
    assert matches["2611.90005"].startswith("look-alike title (similarity ")
    assert "2611.90009" not in rows  # submitted before the window


def test_run_merges_families_and_ranks(kb: Path, arxiv_api: ScreeningStub) -> None:
    assert _screen(kb) == 0
    rows = [r for r in _rows(kb) if not r["duplicate_of"]]
    assert list(rows[0]) == list(CSV_COLUMNS)
    both = next(r for r in rows if r["id"] == "2611.90002")
    assert both["families"] == "multi_agent_llm;orchestration"
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    # the robotics benchmark shares least with the pool's summaries
    robots = next(r for r in rows if r["id"] == "2611.90003")
    spawn = next(r for r in rows if r["id"] == "2611.90001")
    assert float(spawn["score"]) > float(robots["score"])


def test_run_writes_ris_that_reads_back(kb: Path, arxiv_api: ScreeningStub) -> None:
    assert _screen(kb) == 0
    text = (kb / "screening" / ROUND / "candidates.ris").read_text(encoding="utf-8")
    refs = rispy.loads(text)
    assert {r["id"] for r in refs} == NEW_IDS  # the hostile title adds no record
    by_id = {r["id"]: r for r in refs}
    assert by_id["2611.90001"]["authors"] == ["Ada Placeholder", "Ben Example"]
    assert by_id["2611.90001"]["urls"] == ["https://arxiv.org/abs/2611.90001"]
    assert by_id["2611.90002"]["keywords"] == ["multi_agent_llm", "orchestration"]
    csv_titles = {r["id"]: r["title"] for r in _rows(kb) if r["id"] != "2611.90006"}
    for aid, title in csv_titles.items():
        if aid in by_id:
            assert by_id[aid]["title"] == title


def test_run_sanitises_hostile_api_text(kb: Path, arxiv_api: ScreeningStub) -> None:
    assert _screen(kb) == 0
    row = next(r for r in _rows(kb) if r["id"] == "2611.90006")
    assert row["title"].startswith("'=HYPERLINK")  # not a spreadsheet formula
    assert "\n" not in row["title"] and "\u200b" not in row["title"]
    assert "\u202e" not in row["authors"]
    assert row["authors"] == "Mallory <b>Bold</b>, DROP; TrudyReversed"  # ';' separates only
    ris = (kb / "screening" / ROUND / "candidates.ris").read_text(encoding="utf-8")
    assert "\nER  - \nTY  - JOUR" not in ris.split("2611.90006", 1)[1].split("ER  -", 1)[0]


def test_clean_text_bounds_and_strips() -> None:
    assert clean_text("a\x00b\u202ec\n\td", 100) == "a bc d"
    assert clean_text("x" * 50, 10) == "x" * 9 + "…"
    assert "\x1b" not in clean_text("\x1b[31mred", 100)
    assert csv_cell("@SUM(A1)") == "'@SUM(A1)"
    assert csv_cell("plain") == "plain"


def test_run_never_overwrites_a_round(
    kb: Path, arxiv_api: ScreeningStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _screen(kb) == 0
    before = _snapshot(kb)
    assert _screen(kb) == 2
    assert "already exists" in capsys.readouterr().err
    assert _snapshot(kb) == before


def test_run_removes_candidates_of_earlier_rounds(kb: Path, arxiv_api: ScreeningStub) -> None:
    assert _screen(kb, "2026-11-16", "2026-11-19") == 0
    first = {r["id"] for r in _rows(kb, "2026-11-16_2026-11-19") if not r["duplicate_of"]}
    assert first == {"2611.90001", "2611.90002"}
    assert _screen(kb, "2026-11-17", "2026-11-22") == 0
    rows = {r["id"]: r for r in _rows(kb, "2026-11-17_2026-11-22")}
    expected = "screening/2026-11-16_2026-11-19/candidates.csv (2611.90001)"
    assert rows["2611.90001"]["duplicate_of"] == expected
    assert not rows["2611.90003"]["duplicate_of"]


def test_run_rejects_a_bad_window(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run("--root", str(kb), "screen", "run", "--since", "2026-02-30")
    assert exc.value.code == 2
    assert "not a date YYYY-MM-DD" in capsys.readouterr().err
    assert run("--root", str(kb), "screen", "run", "--since", UNTIL, "--until", SINCE) == 2
    assert "is before --since" in capsys.readouterr().err
    future = ("--since", "2099-01-01", "--until", "2099-01-07")
    assert run("--root", str(kb), "screen", "run", *future) == 2
    assert "is after today" in capsys.readouterr().err
    assert run("--root", str(kb), "screen", "run", "--since", "1970-01-01", "--until", SINCE) == 2
    assert "is before 1991-08-01" in capsys.readouterr().err
    assert not (kb / "screening").exists()


def test_run_reports_an_unreachable_api(
    kb: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_ARXIV_URL, "http://127.0.0.1:9/api/query")
    assert _screen(kb) == 2
    assert "cannot reach the arXiv API" in capsys.readouterr().err
    assert not (kb / "screening" / ROUND).exists()


# ---------------------------------------------------------------- protocol


def test_protocol_has_the_seven_families() -> None:
    protocol = load_protocol()
    assert len(protocol.families) == 7
    assert protocol.family("credit_assignment").terms[0] == "credit assignment"
    assert [r.id for r in protocol.inclusion_rules] == ["I1", "I2", "I3", "I4", "I5"]


def test_protocol_errors_name_line_and_field(kb: Path) -> None:
    path = kb / PROTOCOL_FILE
    text = path.read_text()
    text = text.replace("  - id: credit_assignment\n", "  - id: credit_asignment\n")
    text = text.replace("  title_similarity: 92", "  title_similarity: 500")
    path.write_text(text)
    with pytest.raises(ProtocolError) as exc:
        load_protocol(kb)
    lines = text.splitlines()
    bad_family = lines.index("  - id: credit_asignment") + 1
    bad_threshold = lines.index("  title_similarity: 500") + 1
    messages = [str(p) for p in exc.value.problems]
    assert any(
        m.startswith(f"protocol.yaml:{bad_family}: query_families[1].id: unknown value")
        and "credit_assignment" in m
        for m in messages
    )
    assert (
        f"protocol.yaml:{bad_threshold}: deduplication.title_similarity: expected a number "
        "from 50 to 100" in messages
    )


def test_run_reports_a_broken_protocol(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (kb / PROTOCOL_FILE).write_text("version: 1\nsurvey: []\n")
    assert _screen(kb) == 2
    err = capsys.readouterr().err
    assert "protocol.yaml:2: survey: expected a mapping" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------- screen decide


def _decide(kb: Path, path: Path, *extra: str) -> int:
    return run("--root", str(kb), "screen", "decide", ROUND, str(path), *extra)


def test_decide_plain_csv_writes_records_once(
    kb: Path, arxiv_api: ScreeningStub, tmp_path: Path
) -> None:
    assert _screen(kb) == 0
    decisions = tmp_path / "decisions.csv"
    decisions.write_text(
        "id,decision,reason\n2611.90002v2,include,\n2611.90003,exclude,out_of_scope\n"
    )
    before = len(load_papers(kb))
    requests = len(arxiv_api.requests)
    assert _decide(kb, decisions) == 0
    assert len(arxiv_api.requests) == requests  # the round's metadata is reused
    rnd = load_round(kb, ROUND)
    assert (rnd.included, rnd.excluded, rnd.awaiting) == (1, 1, 2)
    paper = kb / rnd.decided["2611.90002"]["record"]
    data = load_yaml_file(paper).data
    assert data["title"] == "Counterfactual Message Credit for LLM Teams"
    assert data["authors"] == ["Sample, Cara"]
    assert data["category"] == data["summary"] == "TODO"
    exclusion = load_yaml_file(kb / rnd.decided["2611.90003"]["record"]).data
    assert (exclusion["reason"], exclusion["stage"], exclusion["source"]) == (
        "out_of_scope",
        "abstract_screen",
        "arxiv",
    )
    assert exclusion["query_family"] == "multi_agent_llm"
    problems = validate(kb).problems
    assert problems and all(p.path == rnd.decided["2611.90002"]["record"] for p in problems)
    # idempotent: a second run changes nothing
    snapshot = _snapshot(kb)
    assert _decide(kb, decisions) == 0
    assert _snapshot(kb) == snapshot
    paper.unlink()  # finish the paper by hand is out of scope here: drop it to load the pool
    assert len(load_papers(kb)) == before


def test_decide_asreview_csv_export(kb: Path, arxiv_api: ScreeningStub, tmp_path: Path) -> None:
    assert _screen(kb) == 0
    export = tmp_path / "asreview_result.csv"
    export.write_text(
        "record_id,type_of_reference,id,title,abstract,urls,included\n"
        "0,JOUR,2611.90002,Counterfactual Message Credit for LLM Teams,x,"
        "['https://arxiv.org/abs/2611.90002'],0\n"
        "1,JOUR,,Learning to Spawn,x,['https://arxiv.org/abs/2611.90001'],0\n"
        "2,JOUR,2611.90003,A Benchmark of Kitchen Robots,x,,\n"
    )
    assert _decide(kb, export, "--reason", "background_only") == 0
    rnd = load_round(kb, ROUND)
    assert set(rnd.decided) == {"2611.90001", "2611.90002"}  # the unlabelled row waits
    assert rnd.reasons() == {"background_only": 2}
    assert validate(kb).ok
    exclusions = load_pool(kb)[1]
    assert (exclusions["arxiv_id"] == "2611.90001").sum() == 1


def test_decide_asreview_ris_export(kb: Path, arxiv_api: ScreeningStub, tmp_path: Path) -> None:
    assert _screen(kb) == 0
    refs = rispy.loads((kb / "screening" / ROUND / "candidates.ris").read_text())
    labels = {"2611.90001": "ASReview_relevant", "2611.90003": "ASReview_irrelevant"}
    for ref in refs:
        ref["notes"] = [labels.get(ref["id"], "ASReview_not_seen")]
    export = tmp_path / "asreview_result.ris"
    export.write_text(rispy.dumps(refs))
    assert _decide(kb, export, "--reason", "out_of_scope") == 0
    rnd = load_round(kb, ROUND)
    assert {k: v["decision"] for k, v in rnd.decided.items()} == {
        "2611.90001": "include",
        "2611.90003": "exclude",
    }


def test_decide_rejects_a_bad_file_and_writes_nothing(
    kb: Path, arxiv_api: ScreeningStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _screen(kb) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "id,decision,reason\n"
        "2611.90003,exclude,nonsense\n"
        "2611.99999,include,\n"
        "2611.90001,maybe,\n"
        "2611.90006,exclude,\n"
    )
    before = _snapshot(kb)
    assert _decide(kb, bad) == 2
    err = capsys.readouterr().err
    assert "bad.csv:2: reason: unknown code 'nonsense'; allowed: " in err
    assert "allowed: prompted_framework_only, " in err and "out_of_scope" in err
    assert "bad.csv:3: id: 2611.99999 is not a candidate of this round" in err
    assert "bad.csv:4: decision: 'maybe'; allowed: include, exclude" in err
    assert "bad.csv:5: reason: an exclusion needs a reason code" in err
    assert "Traceback" not in err
    assert _snapshot(kb) == before


def test_decide_refuses_to_change_a_decision(
    kb: Path, arxiv_api: ScreeningStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _screen(kb) == 0
    first = tmp_path / "a.csv"
    first.write_text("id,decision,reason\n2611.90003,exclude,out_of_scope\n")
    assert _decide(kb, first) == 0
    flipped = tmp_path / "b.csv"
    flipped.write_text("id,decision,reason\n2611.90003,include,\n")
    before = _snapshot(kb)
    assert _decide(kb, flipped) == 2
    assert "already decided as exclude" in capsys.readouterr().err
    assert _snapshot(kb) == before


def test_decide_unknown_round(kb: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,decision,reason\n")
    assert run("--root", str(kb), "screen", "decide", "2026-01-01_2026-01-07", str(path)) == 2
    assert "no screening round '2026-01-01_2026-01-07'" in capsys.readouterr().err
    assert run("--root", str(kb), "screen", "decide", "../../etc", str(path)) == 2
    assert "malformed round id" in capsys.readouterr().err


# ---------------------------------------------------------------- as of a date


def test_stats_as_of_before_and_after_a_round(
    kb: Path, arxiv_api: ScreeningStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = load_protocol(kb).baseline
    at_baseline = load_papers(kb, as_of=baseline)
    everything = load_papers(kb)
    assert len(at_baseline) == int((everything["added"] <= str(baseline)).sum())
    assert len(load_papers(kb, as_of=baseline - dt.timedelta(days=3650))) == 0
    assert _screen(kb) == 0
    decisions = tmp_path / "d.csv"
    decisions.write_text("id,decision,reason\n2611.90003,exclude,out_of_scope\n")
    assert _decide(kb, decisions) == 0
    capsys.readouterr()
    assert run("--root", str(kb), "stats", "--as-of", str(baseline)) == 0
    before = capsys.readouterr().out
    assert run("--root", str(kb), "stats") == 0
    after = capsys.readouterr().out
    n_before = len(load_pool(kb, as_of=baseline)[1])
    assert f"excluded records: {n_before}\n" in before
    assert f"excluded records: {n_before + 1}\n" in after


# ---------------------------------------------------------------- hostile input


def test_run_refuses_an_oversized_answer(
    kb: Path, arxiv_api: ScreeningStub, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from masrl_kb.contrib.sources import arxiv

    monkeypatch.setattr(arxiv, "MAX_SEARCH_BYTES", 2000)
    assert _screen(kb) == 2
    assert "the answer is larger than 2000 bytes" in capsys.readouterr().err
    assert not (kb / "screening" / ROUND).exists()


def test_decide_refuses_oversized_or_linked_files(
    kb: Path, arxiv_api: ScreeningStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from masrl_kb.contrib.screen import decide as screen_decide

    assert _screen(kb) == 0
    real = tmp_path / "d.csv"
    real.write_text("id,decision,reason\n2611.90003,exclude,out_of_scope\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert _decide(kb, link) == 2
    assert "no such file" in capsys.readouterr().err
    monkeypatch.setattr(screen_decide, "MAX_DECISION_BYTES", 10)
    assert _decide(kb, real) == 2
    assert "larger than" in capsys.readouterr().err
    assert load_round(kb, ROUND).decided == {}


def test_next_round_runs_while_included_papers_are_unfinished(
    kb: Path, arxiv_api: ScreeningStub, tmp_path: Path
) -> None:
    assert _screen(kb, "2026-11-16", "2026-11-19") == 0
    decisions = tmp_path / "d.csv"
    decisions.write_text("id,decision,reason\n2611.90001,include,\n")
    assert _decide_round(kb, "2026-11-16_2026-11-19", decisions) == 0
    assert not validate(kb).ok  # the new paper still has TODO fields
    assert _screen(kb, "2026-11-20", "2026-11-22") == 0
    assert load_round(kb, "2026-11-20_2026-11-22").counts["to_screen"] == 2


def _decide_round(kb: Path, rid: str, path: Path) -> int:
    return run("--root", str(kb), "screen", "decide", rid, str(path))


def test_run_reports_a_capped_family(
    kb: Path, arxiv_api: ScreeningStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _screen(kb) == 0 and load_round(kb, ROUND).capped == []
    capsys.readouterr()
    args = ("screen", "run", "--since", SINCE, "--until", "2026-11-23", *FAST)
    assert run("--root", str(kb), *args, "--max-per-family", "3") == 0
    assert load_round(kb, f"{SINCE}_2026-11-23").capped == ["multi_agent_llm", "orchestration"]
    assert "warning: family multi_agent_llm reached --max-per-family" in capsys.readouterr().out
