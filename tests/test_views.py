"""The survey's view beside today's, and drafts that do not block the rest (issue 18).

One temporary copy of the records gets a few synthetic records added after the
survey's baseline (two papers, one of them brought in by a screening round, one
exclusion) and one draft. The survey's view must stay what claims.yaml says;
today's view differs, and what moved it is listed by the query layer, the
command line and (one preview build) the site.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from masrl_kb.cli import main
from masrl_kb.kb.editor_schema import schema_comment
from masrl_kb.kb.fields import PAPER_FIELDS, PLACEHOLDER
from masrl_kb.kb.protocol import load_protocol
from masrl_kb.kb.synthetic import dump_record
from masrl_kb.query.claims import evaluate_claims, load_claims
from masrl_kb.query.frames import InvalidRecordsError, load_drafts, load_papers, load_pool
from masrl_kb.query.views import (
    claim_views,
    moved_cells,
    moved_claims,
    new_papers,
    pool_coverage,
    pool_searched,
    survey_baseline,
    survey_view,
    with_view_reading,
)
from masrl_kb.site import build_site
from masrl_kb.site.context import load_context
from tests.conftest import REPO
from tests.screening_stub import copy_kb
from tests.test_site_support import page, parse, with_attr

STOPPER, ORCHESTRATOR, DRAFT = "synthetic-stopper", "synthetic-orchestrator", "synthetic-draft"
EXCLUDED = "E901"
# contiguous from the baseline on: the pool covers up to the end of the last one
ROUND_IN, ROUND_LAST = "2026-05-05_2026-06-14", "2026-06-15_2026-11-22"
HOSTILE_TITLE = "<script>alert(1)</script> Draft \x1b[31mred"


def _paper(kb: Path, key: str, arxiv: str, added: dt.date, **tags: object) -> None:
    """A finished record shaped like magrpo.yaml, with its own identity and tags."""
    data = yaml.safe_load((kb / "papers" / "magrpo.yaml").read_text(encoding="utf-8"))
    data.update(
        key=key,
        title=f"A Synthetic Paper Called {key}",
        arxiv_id=arxiv,
        url=f"https://arxiv.org/abs/{arxiv}",
        added=added,
        citation={**data["citation"], "bibtex_key": key.replace("-", "") + "2026"},
        **tags,
    )
    text = schema_comment("paper") + "\n" + dump_record(data)
    (kb / "papers" / f"{key}.yaml").write_text(text, encoding="utf-8")


def _draft(kb: Path) -> None:
    """A record as `add` writes it: facts filled in, every other required field TODO."""
    facts = {
        "key": DRAFT,
        "title": HOSTILE_TITLE,
        "authors": ["Doe, Jane"],
        "year": 2026,
        "venue": "arXiv",
        "arxiv_id": "2611.90009",
        "url": "https://arxiv.org/abs/2611.90009",
        "added": dt.date(2026, 11, 25),
        "citation": {"bibtex_key": "draft2026", "entry_type": "article", "journal": "arXiv"},
    }
    data = {
        f.name: facts.get(f.name, PLACEHOLDER)
        for f in PAPER_FIELDS
        if f.required or f.name in facts
    }
    (kb / "papers" / f"{DRAFT}.yaml").write_text(dump_record(data), encoding="utf-8")


def _round(kb: Path, rid: str, decided: dict, to_screen: int = 2) -> None:
    since, until = (dt.date.fromisoformat(d) for d in rid.split("_"))
    data = {
        "round": rid,
        "window": {"since": since, "until": until},
        "run_on": until + dt.timedelta(days=1),
        "families": ["orchestration"],
        "counts": {
            "retrieved": to_screen + 1,
            "outside_window": 0,
            "duplicates_removed": 1,
            "to_screen": to_screen,
        },
        "decided": decided,
    }
    folder = kb / "screening" / rid
    folder.mkdir(parents=True)
    (folder / "round.yaml").write_text(dump_record(data), encoding="utf-8")


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Path:
    kb = copy_kb(tmp_path_factory.mktemp("views") / "kb")
    stop = {
        "id": "O5",
        "learned": True,
        "mechanism": "explicit",
        "why": "A trained stop action ends the team's run.",
        "evidence": {"source": "paper", "where": "Section 3", "url": "https://example.org/s3"},
    }
    _paper(
        kb,
        STOPPER,
        "2606.90001",
        dt.date(2026, 6, 15),
        decisions=[stop],
        credit_unit="message",
        # said here, not inherited from magrpo.yaml, whose strict reading the recode may change
        credit_strict=True,
        credit_mechanism="estimator",
    )
    _paper(
        kb,
        ORCHESTRATOR,
        "2609.90002",
        dt.date(2026, 9, 20),
        reward_type="orchestration",
        credit_unit="orchestrator",
    )
    exclusion = yaml.safe_load((kb / "exclusions" / "E001.yaml").read_text(encoding="utf-8"))
    exclusion.update(
        id=EXCLUDED,
        title="A Synthetic Screened-Out Record",
        identifier="arXiv:2606.90003",
        url="https://arxiv.org/abs/2606.90003",
        screened=dt.date(2026, 6, 16),
    )
    (kb / "exclusions" / f"{EXCLUDED}.yaml").write_text(dump_record(exclusion), encoding="utf-8")
    included = {"decision": "include", "reason": None, "record": f"papers/{STOPPER}.yaml"}
    left_out = {
        "decision": "exclude",
        "reason": "out_of_scope",
        "record": f"exclusions/{EXCLUDED}.yaml",
    }
    _round(kb, ROUND_IN, {"2606.90001": included, "2606.90003": left_out})
    _round(kb, ROUND_LAST, {}, to_screen=0)  # searched, nothing new: nothing awaits
    _draft(kb)
    return kb


@pytest.fixture(scope="module")
def pool(kb: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return load_pool(kb, drafts="exclude")


def _survey_numbers(kb: Path) -> dict[str, int]:
    """What the survey reported (claims.yaml), not a number typed into the test."""
    return {c.id: c.expected for c in load_claims(kb)}


# ---------------------------------------------------------------- the query layer


def test_the_survey_view_is_the_pool_on_its_baseline(kb: Path, pool) -> None:
    papers, exclusions = pool
    baseline = load_protocol(kb).baseline
    assert survey_baseline(kb) == baseline
    then_p, then_e = survey_view(papers, exclusions, kb)
    as_of_p, as_of_e = load_pool(kb, as_of=baseline, drafts="exclude")
    # the papers of that day, with the codings the survey's claims were checked against
    pd.testing.assert_frame_equal(then_p, with_view_reading(as_of_p, kb))
    pd.testing.assert_frame_equal(then_e, as_of_e)
    survey = _survey_numbers(kb)
    assert (len(then_p), len(then_e)) == (survey["pool-size"], survey["exclusions-logged"])
    assert {STOPPER, ORCHESTRATOR} <= set(papers.index) - set(then_p.index)


def test_coverage_is_the_end_of_the_unbroken_run_of_rounds(kb: Path, tmp_path: Path) -> None:
    last_end = dt.date.fromisoformat(ROUND_LAST.split("_")[1])
    assert pool_coverage(kb) == pool_searched(kb) == last_end
    bare = copy_kb(tmp_path / "kb")
    assert pool_coverage(bare) == load_protocol(bare).baseline  # no round: the baseline
    # Two candidates of the last round awaiting a decision: searched to its end, covered
    # (searched and decided) only to the end of the round before it.
    waiting = tmp_path / "waiting"
    shutil.copytree(kb, waiting)
    shutil.rmtree(waiting / "screening" / ROUND_LAST)
    _round(waiting, ROUND_LAST, {}, to_screen=2)
    assert pool_searched(waiting) == last_end
    assert pool_coverage(waiting) == dt.date.fromisoformat(ROUND_IN.split("_")[1])


def test_new_papers_name_their_round(kb: Path, pool) -> None:
    frame = new_papers(pool[0], kb)
    assert list(frame.index) == [ORCHESTRATOR, STOPPER]  # newest first
    assert frame.at[STOPPER, "round"] == ROUND_IN
    assert frame.at[ORCHESTRATOR, "round"] is None  # added by hand
    assert DRAFT not in frame.index


def test_new_papers_say_whether_each_was_posted_after_the_cut_off(kb: Path, pool) -> None:
    frame = new_papers(pool[0], kb)
    assert frame.at[STOPPER, "posted"] == "after"  # its round's window opens after the cut-off
    assert frame.at[ORCHESTRATOR, "posted"] == "after"  # added by hand: its arXiv id's month


CUT_OFF = dt.date(2026, 5, 4)


@pytest.mark.parametrize(
    ("window", "arxiv_id", "posted"),
    [
        ((dt.date(2023, 1, 1), dt.date(2026, 5, 3)), "2605.00001", "before"),  # window wins
        ((CUT_OFF, dt.date(2026, 5, 31)), "2604.00001", "after"),
        ((dt.date(2026, 5, 1), dt.date(2026, 5, 31)), "2605.01234", None),  # both span it
        ((dt.date(2026, 5, 1), dt.date(2026, 5, 31)), "2604.01234", "before"),
        (None, "2604.12345", "before"),
        (None, "2606.00001", "after"),
        (None, "2605.00001", None),
        (None, None, None),
        (None, "cs/0112345", None),
        (None, "<script>2606.1</script>", None),
    ],
)
def test_posted_side_reads_the_round_window_then_the_arxiv_month(window, arxiv_id, posted):
    from masrl_kb.query.views import posted_side

    assert posted_side(window, arxiv_id, CUT_OFF) == posted


def test_moved_cells_list_the_papers_that_moved_them(kb: Path, pool) -> None:
    moved = moved_cells(pool[0], kb)
    cell = moved[
        (moved["rows"] == "reward_family")
        & (moved["row_value"] == "R7")
        & (moved["cols"] == "credit_unit")
        & (moved["col_value"] == "orchestrator")
        & ~moved["strict"]
    ]
    (row,) = cell.to_dict("records")
    assert row["today"] == row["survey"] + 1 and row["papers"] == [ORCHESTRATOR]
    # a mover is a paper added since, or a survey paper the codebook recoded (its codings
    # in the survey's view come from the view reading)
    from masrl_kb.kb.readings import load_readers

    (view,) = [r for r in load_readers(set(pool[0].index), kb) if r.view == "survey"]
    recoded = {
        key
        for key, coded in view.readings.items()
        if any(str(pool[0].at[key, f]) != str(v) for f, v in coded.items())
    }
    for record in moved.to_dict("records"):
        assert record["change"] == record["today"] - record["survey"] != 0
        assert set(record["papers"]) <= {STOPPER, ORCHESTRATOR} | recoded
        assert record["papers"]  # every moved cell names what moved it


def test_moved_claims_and_their_movers(kb: Path, pool) -> None:
    views = {v.claim.id: v for v in moved_claims(papers=pool[0], exclusions=pool[1], root=kb)}
    assert views["pool-size"].papers == (ORCHESTRATOR, STOPPER)
    assert views["exclusions-logged"].exclusions == (EXCLUDED,)
    assert views["o5-never-learned"].papers == (STOPPER,)
    assert not views["o5-never-learned"].today.holds  # the finding moved today...
    every = claim_views(papers=pool[0], exclusions=pool[1], root=kb)
    assert all(v.survey.holds for v in every)  # ...but holds in the survey's pool
    unmoved = [v for v in every if not v.moved]
    assert unmoved and all(v.papers == v.exclusions == () for v in unmoved)


# ---------------------------------------------------------------- drafts


def test_drafts_are_refused_by_default_and_left_out_on_request(kb: Path, pool) -> None:
    with pytest.raises(InvalidRecordsError, match=f"papers/{DRAFT}.yaml"):
        load_papers(kb)
    assert DRAFT not in pool[0].index
    drafts = load_drafts(kb)
    assert list(drafts["path"]) == [f"papers/{DRAFT}.yaml"]
    assert "summary" in drafts.iloc[0]["unfinished"]
    with pytest.raises(ValueError, match="allowed: error, exclude"):
        load_papers(kb, drafts="skip")


def test_stats_as_of_the_baseline_gives_the_survey_numbers(kb: Path, capsys) -> None:
    baseline = load_protocol(kb).baseline
    assert main(["--root", str(kb), "stats", "--as-of", baseline.isoformat()]) == 0
    out = capsys.readouterr().out
    survey = _survey_numbers(kb)
    assert f"pooled papers: {survey['pool-size']}\n" in out
    assert f"excluded records: {survey['exclusions-logged']}\n" in out
    assert f"papers/{DRAFT}.yaml" in out and "\x1b" not in out
    assert main(["--root", str(kb), "stats"]) == 0
    out = capsys.readouterr().out
    assert f"pooled papers: {survey['pool-size'] + 2}\n" in out
    assert f"covering papers up to {ROUND_LAST.split('_')[1]}" in out


def test_claims_check_passes_in_the_survey_view(kb: Path, capsys) -> None:
    assert main(["--root", str(kb), "claims", "--check"]) == 0
    out = capsys.readouterr().out
    survey = _survey_numbers(kb)
    line = next(x for x in out.splitlines() if "  pool-size  " in x)
    assert line.startswith("holds ") and f"value {survey['pool-size']:>3}" in line
    assert f"today {survey['pool-size'] + 2} (BROKEN); moved by: {ORCHESTRATOR}, {STOPPER}" in out
    assert f"papers/{DRAFT}.yaml" in out and "\x1b" not in out
    # today's pool alone would break claims: the check is about the survey's pool
    papers, exclusions = load_pool(kb, drafts="exclude")
    assert not all(r.holds for r in evaluate_claims(papers=papers, exclusions=exclusions))


def test_validate_and_the_release_build_refuse_drafts(kb: Path, tmp_path: Path, capsys) -> None:
    assert main(["--root", str(kb), "validate"]) == 2
    captured = capsys.readouterr()
    assert f"papers/{DRAFT}.yaml" in captured.out and "unfinished" in captured.out
    assert f"unfinished drafts (1): papers/{DRAFT}.yaml" in captured.err
    site = tmp_path / "site"
    assert main(["--root", str(kb), "build", "--site-dir", str(site)]) == 2
    assert not site.exists()
    with pytest.raises(InvalidRecordsError):  # what the MkDocs hook runs without --preview
        load_context(kb)


def test_a_broken_finished_record_still_stops_a_preview(kb: Path, tmp_path: Path, capsys) -> None:
    broken = tmp_path / "kb"
    shutil.copytree(kb, broken)
    path = broken / "papers" / f"{STOPPER}.yaml"
    path.write_text(path.read_text().replace("topology: centralized", "topology: ring"))
    before = {p: p.read_bytes() for p in (broken / "papers").iterdir()}
    for command in (["stats"], ["claims"], ["build", "--preview", "--site-dir", "out"]):
        assert main(["--root", str(broken), *command]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"papers/{STOPPER}.yaml:" in err[0] and "topology" in err[0]
    assert {p: p.read_bytes() for p in (broken / "papers").iterdir()} == before
    assert not (broken / "out").exists()


# ---------------------------------------------------------------- one preview build


@pytest.fixture(scope="module")
def preview(kb: Path, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("preview") / "site"
    assert build_site(kb, site_dir=site, preview=True) == 0
    return site


def test_preview_lists_the_drafts_it_left_out(kb: Path, preview: Path) -> None:
    for url in ("", "gaps/", "claims/", "since-survey/"):
        elements = parse(page(preview, url))
        (banner,) = with_attr(elements, "data-kb-preview")
        assert banner.get("data-kb-preview") == "1"
        (draft,) = with_attr(elements, "data-kb-draft", f"papers/{DRAFT}.yaml")
        assert "<script>alert(1)</script>" in draft.text  # the title, as text
        assert not [e for e in elements if e.tag == "script" and "alert" in e.text]
    assert not (preview / "papers" / DRAFT).exists()


def test_every_generated_page_says_what_the_pool_covers(preview: Path) -> None:
    covers = ROUND_LAST.split("_")[1]
    # record-format and trace-decisions are the hand-written pages, with no numbers
    hand_written = {p.stem for p in (REPO / "docs").glob("*.md")}
    pages = [p for p in preview.rglob("index.html") if p.parent.name not in hand_written]
    assert len(pages) > 100  # section, paper and cell pages
    for path in pages:
        assert with_attr(parse(path), "data-kb-coverage", covers), path


def test_home_gaps_and_claims_show_both_values(kb: Path, preview: Path, pool) -> None:
    baseline = load_protocol(kb).baseline.isoformat()
    views = {v.claim.id: v for v in claim_views(papers=pool[0], exclusions=pool[1], root=kb)}
    o5 = views["o5-never-learned"]
    home, gaps, claims = (parse(page(preview, url)) for url in ("", "gaps/", "claims/"))
    both = (
        f"{o5.survey.shown_value} in the survey's pool ({baseline}), {o5.today.shown_value} today"
    )
    for elements, mark in ((home, "data-kb-card"), (gaps, "data-kb-gap")):
        (survey,) = with_attr(elements, "data-kb-survey", "o5-stop:0")
        (today,) = with_attr(elements, mark, "o5-stop:0")
        assert survey.text == o5.survey.shown_value and today.text == o5.today.shown_value
        assert today.parent is survey.parent and both in (
            survey.parent.text if survey.parent else ""
        )
    for elements in (home, gaps, claims):
        assert _links_paper(elements, STOPPER)  # the paper that moved it, linked
        assert any("A Synthetic Paper Called synthetic-stopper" in e.text for e in elements)
    (row,) = [e for e in with_attr(claims, "data-claim", "o5-never-learned") if e.tag == "tr"]
    assert _inside(claims, row, "data-kb-claim-value") == o5.survey.shown_value
    assert _inside(claims, row, "data-kb-claim-today") == o5.today.shown_value
    assert "A Synthetic Paper Called synthetic-stopper" in row.text
    (home_row,) = with_attr(home, "id", "claim-o5-never-learned")
    assert _inside(home, home_row, "data-kb-claim-today") == o5.today.shown_value


def test_home_gaps_and_claims_say_what_the_pool_covers_once(preview: Path) -> None:
    """A moved number says "today", not "(pool covers up to ...)" each time (issue 30)."""
    covers = ROUND_LAST.split("_")[1]
    for url in ("", "gaps/", "claims/"):
        elements = parse(page(preview, url))
        text = " ".join(e.text for e in elements if e.tag == "article")
        assert len(re.findall(r"covers (?:papers )?up to", text)) == 1, url
        assert [e.get("data-kb-coverage") for e in with_attr(elements, "data-kb-coverage")] == [
            covers
        ], url


def _inside(elements: list, row, name: str) -> str:
    """The text of the one element with attribute ``name`` inside ``row``."""
    (found,) = [e for e in with_attr(elements, name) if e.within(row)]
    return found.text


def _links_paper(elements: list, key: str) -> bool:
    """Whether the page links a paper's page (by a relative href)."""
    pattern = re.compile(rf"(?:\.\./)*papers/{re.escape(key)}/")
    return any(pattern.fullmatch(e.get("href") or "") for e in elements if e.tag == "a")


def test_since_the_survey_lists_new_papers_cells_and_claims(kb: Path, preview: Path, pool) -> None:
    elements = parse(page(preview, "since-survey/"))
    rows = [(e.get("data-new"), e.text) for e in with_attr(elements, "data-new") if e.tag == "tr"]
    assert [key for key, _ in rows] == [ORCHESTRATOR, STOPPER]
    stopper = dict(rows)[STOPPER]
    assert "2026-06-15" in stopper and ROUND_IN in stopper
    assert "added by hand" in dict(rows)[ORCHESTRATOR]
    # posted after the cut-off or found late: one table each, counted in the lead sentence
    tables = {e.get("data-posted"): e for e in with_attr(elements, "data-posted")}
    assert list(tables) == ["after"]

    def side(e):
        while e is not None and "data-posted" not in e.attrs:
            e = e.parent
        return e.get("data-posted") if e is not None else None

    assert {side(e) for e in with_attr(elements, "data-new")} == {"after"}
    # the heading's anchor leaves the count out, so a link to it survives the next paper
    assert "posted-after" in {e.get("id") for e in elements if e.tag == "h3"}
    stats = {e.get("data-kb-stat"): e.text for e in with_attr(elements, "data-kb-stat")}
    assert (stats["added-since"], stats["posted-after"], stats["posted-before"]) == ("2", "2", "0")
    moved = {v.claim.id for v in moved_claims(papers=pool[0], exclusions=pool[1], root=kb)}
    assert {
        e.get("data-claim") for e in with_attr(elements, "data-claim") if e.tag == "tr"
    } == moved
    cells = moved_cells(pool[0], kb)
    assert len([e for e in with_attr(elements, "data-cell") if e.tag == "tr"]) == len(cells)


# ---------------------------------------------------------------- hostile input


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("until: 2026-11-22", "until: soon", "window"),
        ("until: 2026-11-22", "until: [2026-11-22, 2026-11-23]", "window"),
        ("round: 2026-06-15_2026-11-22", 'round: "\\x1b[2J"', "round"),
    ],
)
def test_a_tampered_round_stops_stats_in_one_line(
    kb: Path, tmp_path: Path, old: str, new: str, field: str, capsys
) -> None:
    copy = tmp_path / "kb"
    shutil.copytree(kb, copy)
    path = copy / "screening" / ROUND_LAST / "round.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    for command in ("stats", "claims"):
        assert main(["--root", str(copy), command]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "\x1b" not in err[0]
        assert f"screening/{ROUND_LAST}/round.yaml:" in err[0] and f": {field}: " in err[0]
    assert path.read_text() == text.replace(old, new)


def test_a_symlinked_record_is_no_draft(kb: Path, tmp_path: Path, capsys) -> None:
    copy = tmp_path / "kb"
    shutil.copytree(kb, copy)
    (copy / "papers" / "linked.yaml").symlink_to(copy / "papers" / f"{DRAFT}.yaml")
    assert main(["--root", str(copy), "stats"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "papers/linked.yaml" in err[0]
    assert list(load_drafts(copy)["path"]) == [f"papers/{DRAFT}.yaml"]


def test_without_a_protocol_there_is_one_view(mini_root: Path) -> None:
    papers, exclusions = load_pool(mini_root)
    assert survey_baseline(mini_root) is None and pool_coverage(mini_root) is None
    then = survey_view(papers, exclusions, mini_root)
    assert then[0].equals(papers) and then[1].equals(exclusions)
    assert new_papers(papers, mini_root).empty and moved_cells(papers, mini_root).empty
