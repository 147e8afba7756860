"""How far the rounds reached (the pool's coverage date) and the capture-recapture
estimate of what two independent search strategies both missed."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from masrl_kb.kb.rounds import Round
from masrl_kb.query.coverage import (
    captures,
    covered_until,
    lincoln_petersen,
    round_reach,
)

D = dt.date
CUT = D(2026, 5, 3)


def _round(since: D, until: D, *reaches: D | None, **extra) -> Round:
    batches = [
        {
            "name": f"web_search:{i}",
            "query": "",
            "file": f"{i}.csv",
            "imported_on": until,
            "identified": 0,
            "duplicates_removed": 0,
            "outside_window": 0,
        }
        | ({"reached": r} if r else {})
        for i, r in enumerate(reaches or [None])
    ]
    rid = f"{since}_{until}"
    return Round(
        rid,
        since,
        until,
        until,
        [],
        {"to_screen": 0, "retrieved": 0, "duplicates_removed": 0, "outside_window": 0},
        sources=batches,
        **extra,
    )


def test_a_round_reaches_the_earliest_day_every_batch_reached() -> None:
    rnd = _round(D(2026, 10, 1), D(2026, 10, 31), None, D(2026, 10, 6))
    assert round_reach(rnd) == D(2026, 10, 6)
    assert round_reach(_round(D(2026, 10, 1), D(2026, 10, 31))) == D(2026, 10, 31)


def test_a_strategys_batches_reach_together_and_the_round_waits_for_every_strategy() -> None:
    rnd = _round(D(2026, 9, 1), D(2026, 9, 30), D(2026, 9, 4), D(2026, 8, 31), None)
    for batch, strategy in zip(rnd.sources, "AAB", strict=True):
        batch["strategy"] = strategy
    # A's digests reached the 4th (one of them none of the month); B reached the end
    assert round_reach(rnd) == D(2026, 9, 4)
    rnd.sources[2]["reached"] = D(2026, 9, 2)
    assert round_reach(rnd) == D(2026, 9, 2)


def test_coverage_runs_through_contiguous_rounds_and_stops_where_a_source_stopped() -> None:
    rounds = [
        _round(D(2023, 1, 1), D(2026, 5, 3)),  # the catch-up, before the cut-off
        _round(D(2026, 5, 4), D(2026, 5, 31)),
        _round(D(2026, 6, 1), D(2026, 6, 30), D(2026, 6, 12)),
        _round(D(2026, 7, 1), D(2026, 7, 31)),  # after the gap: not covered
    ]
    assert covered_until(rounds, CUT) == D(2026, 6, 12)


def test_coverage_stops_at_a_window_no_round_searched() -> None:
    rounds = [_round(D(2026, 5, 4), D(2026, 5, 31)), _round(D(2026, 7, 1), D(2026, 7, 31))]
    assert covered_until(rounds, CUT) == D(2026, 5, 31)
    assert covered_until([], CUT) == CUT


def test_chapman_estimate() -> None:
    # 10 and 8 found, 4 by both: (11 x 9) / 5 - 1
    assert lincoln_petersen(10, 8, 4) == pytest.approx(18.8)
    # all found by both: nothing missed
    assert lincoln_petersen(5, 5, 5) == pytest.approx(5.0)


def test_captures_count_inclusions_and_duplicates_of_papers_per_strategy() -> None:
    since, until = D(2026, 6, 1), D(2026, 6, 30)
    rid = f"{since}_{until}"
    rnd = _round(since, until, None, None)
    rnd.sources[0] |= {"strategy": "A"}
    rnd.sources[1] |= {"strategy": "B"}
    rnd.decided.update(
        {
            "2606.00001": {
                "decision": "include",
                "record": "papers/one.yaml",
                "source": "web_search:0",
            },
            "2606.00002": {
                "decision": "exclude",
                "record": "exclusions/E1.yaml",
                "source": "web_search:0",
            },
            "2606.00003": {
                "decision": "include",
                "record": "papers/three.yaml",
                "source": "web_search:1",
            },
        }
    )
    duplicates = [
        # B found A's included candidate again, and A's excluded one
        {
            "id": "2606.00001",
            "duplicate_of": f"screening/{rid}/candidates.csv (2606.00001)",
            "source": "web_search:1",
        },
        {
            "id": "2606.00002",
            "duplicate_of": f"screening/{rid}/candidates.csv (2606.00002)",
            "source": "web_search:1",
        },
        # A found a paper already in the pool
        {"id": "2606.00009", "duplicate_of": "papers/old.yaml", "source": "web_search:0"},
        {"id": "2606.00010", "duplicate_of": "exclusions/E9.yaml", "source": "web_search:0"},
    ]
    got = captures(rnd, {rid: rnd}, duplicates)
    assert got.found == {
        "A": {"papers/one.yaml", "papers/old.yaml"},
        "B": {"papers/three.yaml", "papers/one.yaml"},
    }


def test_a_duplicate_of_a_paper_from_another_window_is_not_credited() -> None:
    """A look-alike title can match a paper of another window (a new arXiv id for an old
    work); crediting it would inflate this window's captures, as it once did for July."""
    catch = _round(D(2023, 1, 1), CUT)
    july = _round(D(2026, 7, 1), D(2026, 7, 31), None, None)
    july.sources[0] |= {"strategy": "A"}
    july.sources[1] |= {"strategy": "B"}
    catch.decided["2601.00001"] = {
        "decision": "include",
        "record": "papers/old-window.yaml",
        "source": "web_search:0",
    }
    july.decided["2607.00002"] = {
        "decision": "include",
        "record": "papers/july.yaml",
        "source": "web_search:1",
    }
    duplicates = [
        {"id": "2607.00003", "duplicate_of": "papers/old-window.yaml", "source": "web_search:0"},
        {"id": "2607.00004", "duplicate_of": "papers/survey.yaml", "source": "web_search:0"},
        {"id": "2607.00005", "duplicate_of": "papers/july.yaml", "source": "web_search:0"},
    ]
    rounds = {catch.id: catch, july.id: july}
    got = captures(july, rounds, duplicates, baseline=CUT + dt.timedelta(days=1))
    # only the July paper counts; the catch-up's and the survey's papers are another window's
    assert got.found == {"A": {"papers/july.yaml"}, "B": {"papers/july.yaml"}}
    # before the baseline, a paper no round included is the catch-up's own
    catch.sources[0] |= {"strategy": "A"}
    dup = [{"id": "2501.9", "duplicate_of": "papers/survey.yaml", "source": "web_search:0"}]
    got = captures(catch, rounds, dup, baseline=CUT + dt.timedelta(days=1))
    assert got.found == {"A": {"papers/old-window.yaml", "papers/survey.yaml"}}


# ---------------------------------------------------------------- screen import, end to end

LIST_A = (
    "id,title,authors,date,url,abstract\n"
    'A1,Training Orchestrators With Reinforcement Learning,"Ray, Bo",2026-06-03,'
    "https://example.org/a1,Text.\n"
    'A2,Another Team Paper On Credit,"Ray, Bo",2026-06-04,https://example.org/a2,Text.\n'
)
LIST_B = (
    "id,title,authors,date,url,abstract\n"
    'B1,Training Orchestrators With Reinforcement Learning,"Ray, Bo",2026-06-03,'
    "https://example.org/a1,Text.\n"
)


def _import(kb, path, source, *extra) -> int:
    from tests.conftest import run_cli

    window = ("--since", "2026-06-01", "--until", "2026-06-30")
    return run_cli("--root", str(kb), "screen", "import", str(path), "--source", source, *window,
                   *extra)  # fmt: skip


def test_named_sources_strategies_and_reach_are_recorded(tmp_path, capsys) -> None:
    from masrl_kb.kb.rounds import load_round
    from masrl_kb.query.coverage import batch_reaches, recall_estimates
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    (tmp_path / "b.csv").write_text(LIST_B, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "github:someone/awesome-list", "--strategy", "A") == 0
    args = ("--strategy", "B", "--reached", "2026-06-20")
    assert _import(kb, tmp_path / "b.csv", "huggingface_papers", *args) == 0
    rnd = load_round(kb, "2026-06-01_2026-06-30")
    names = [(b["name"], b.get("strategy"), b.get("reached")) for b in rnd.batches]
    assert names == [
        ("github:someone/awesome-list", "A", None),
        ("huggingface_papers", "B", D(2026, 6, 20)),
    ]
    assert round_reach(rnd) == D(2026, 6, 20)
    assert list(batch_reaches(kb)["reached"])[-1] == D(2026, 6, 20)
    # nothing decided yet: no paper is known to be in scope, the estimate is empty
    row = recall_estimates(kb).iloc[0]
    assert (row["found_1"], row["found_2"], row["awaiting"]) == (0, 0, 2)


@pytest.mark.parametrize(
    "source, message",
    [
        ("github:", "expected an exclusion_source id"),
        ("nosuchkind:x", "nosuchkind"),
        ("github:a b", "expected an exclusion_source id"),
    ],
)
def test_a_bad_source_name_is_one_line_and_writes_nothing(tmp_path, capsys, source, message):
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", source) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (kb / "screening" / "2026-06-01_2026-06-30").exists()


def test_a_reach_outside_the_window_is_refused(tmp_path, capsys) -> None:
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "github:a/b", "--reached", "2026-07-02") == 2
    assert "outside the window" in capsys.readouterr().err
    assert not (kb / "screening" / "2026-06-01_2026-06-30").exists()


def test_a_source_under_a_second_strategy_is_refused_and_writes_nothing(tmp_path, capsys):
    """The estimate credits a decided candidate to its source's strategy, so one source
    name under two strategies would give both strategies' finds to one of them."""
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    (tmp_path / "b.csv").write_text(LIST_B, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "huggingface_papers", "--strategy", "A") == 0
    folder = kb / "screening" / "2026-06-01_2026-06-30"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert _import(kb, tmp_path / "b.csv", "huggingface_papers", "--strategy", "B") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is strategy A in sources[0]" in err[0] and "use A" in err[0]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    # the same source without a strategy, or under its own, is still accepted
    assert _import(kb, tmp_path / "b.csv", "huggingface_papers", "--strategy", "A") == 0


@pytest.mark.parametrize("first", [("--strategy", "A"), ()])
def test_a_source_with_and_without_a_strategy_is_refused_and_writes_nothing(
    tmp_path, capsys, first
):
    """A batch that names no strategy shares its candidates' source name with one that
    does, so the estimate would count the first batch's finds for the other's strategy."""
    from tests.screening_stub import copy_kb

    second = () if first else ("--strategy", "B")
    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    (tmp_path / "b.csv").write_text(LIST_B, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "web_search", *first) == 0
    folder = kb / "screening" / "2026-06-01_2026-06-30"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert _import(kb, tmp_path / "b.csv", "web_search", *second) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sources[1]" in err[0] and "a source belongs to one strategy" in err[0]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    # named apart, the second batch is accepted
    assert _import(kb, tmp_path / "b.csv", "web_search:other", *second) == 0


def test_a_round_file_naming_a_source_under_two_strategies_fails_validate(tmp_path, capsys):
    import yaml

    from tests.conftest import run_cli
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    (tmp_path / "b.csv").write_text(LIST_B, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "huggingface_papers", "--strategy", "A") == 0
    assert _import(kb, tmp_path / "b.csv", "github:a/b", "--strategy", "B") == 0
    path = kb / "screening" / "2026-06-01_2026-06-30" / "round.yaml"
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    data["sources"][1]["name"] = "huggingface_papers"  # a hand edit
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert run_cli("--root", str(kb), "validate") != 0
    out = capsys.readouterr()
    (line,) = [x for x in (out.out + out.err).splitlines() if "strategy" in x]
    assert "screening/2026-06-01_2026-06-30/round.yaml:" in line
    assert "sources[1].strategy" in line and "is strategy A in sources[0]" in line
    number = int(line.split("round.yaml:")[1].split(":")[0])
    assert "strategy: B" in path.read_text(encoding="utf-8").splitlines()[number - 1]


def test_no_estimate_when_a_strategy_found_nothing_in_scope(tmp_path) -> None:
    import math

    from masrl_kb.query.coverage import recall_estimates
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "github:someone/list", "--strategy", "A") == 0
    (tmp_path / "b.csv").write_text(LIST_B, encoding="utf-8")
    assert _import(kb, tmp_path / "b.csv", "huggingface_papers", "--strategy", "B") == 0
    row = recall_estimates(kb).iloc[0]
    assert math.isnan(row["estimate"]) and math.isnan(row["missed"])


def test_the_rounds_page_shows_each_batchs_reach_and_the_estimate(tmp_path) -> None:
    """The page names the sources searched, each batch's reach, the round's reach, and
    says why a round of two strategies has no estimate yet."""
    from masrl_kb.site.context import load_context
    from masrl_kb.site.pages import render_page
    from tests.screening_stub import copy_kb

    kb = copy_kb(tmp_path / "kb")
    (tmp_path / "a.csv").write_text(LIST_A, encoding="utf-8")
    (tmp_path / "b.csv").write_text(LIST_B, encoding="utf-8")
    assert _import(kb, tmp_path / "a.csv", "github:someone/list", "--strategy", "A") == 0
    args = ("--strategy", "B", "--reached", "2026-06-20")
    assert _import(kb, tmp_path / "b.csv", "huggingface_papers", *args) == 0
    rid = "2026-06-01_2026-06-30"
    page = render_page(load_context(kb), "rounds/index.md")
    assert f'data-kb-reach="{rid}">2026-06-20<' in page
    assert "GitHub list: someone/list" in page and "Hugging Face papers" in page
    # two strategies, nothing decided in scope yet: the row says why there is no estimate
    assert re.search(rf'data-kb-recall="?{rid}"?>0 found; a strategy found none', page)


def test_a_round_with_candidates_awaiting_ends_the_decided_run() -> None:
    waiting = _round(D(2026, 6, 1), D(2026, 6, 30))
    waiting.counts["to_screen"] = 3  # three candidates, none decided
    rounds = [_round(D(2026, 5, 4), D(2026, 5, 31)), waiting, _round(D(2026, 7, 1), D(2026, 7, 31))]
    assert covered_until(rounds, CUT) == D(2026, 7, 31)  # searched
    assert covered_until(rounds, CUT, decided=True) == D(2026, 5, 31)  # decided
    waiting.counts["to_screen"] = 0
    assert covered_until(rounds, CUT, decided=True) == D(2026, 7, 31)


def test_the_pool_covers_no_later_than_its_searches() -> None:
    from masrl_kb.query.views import pool_coverage, pool_searched

    covers, searched = pool_coverage(), pool_searched()
    assert covers is not None and searched is not None and covers <= searched
