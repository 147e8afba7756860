"""``masrl-kb validate`` is the whole gate (issue 27): a hand-written valid record passes
it and every test over the real records; each rule those tests hold, and each input it
once accepted though it was wrong, is refused in one line naming file, line and field."""

from __future__ import annotations

import datetime as dt
import inspect
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

import masrl_kb
from masrl_kb.cli import main
from masrl_kb.kb.synthetic import write_synthetic_root
from tests import test_records
from tests.conftest import REPO
from tests.hostile.gate_cases import gate_cases

DATA = (
    "papers",
    "exclusions",
    "readings",
    "screening",
    "taxonomy.yaml",
    "sources.yaml",
    "benchmarks.yaml",
    "claims.yaml",
    "protocol.yaml",
)

# What a new contributor writes by hand after the survey's cut-off, outside any round:
# plain test data (an example.org project, a made-up arXiv id), valid in every field.
HAND_WRITTEN = """\
# yaml-language-server: $schema=../schema/paper.schema.json
key: handmade-test-2026
title: A Hand-Written Test Record for the Contributor Path
authors:
  - Example, Ada
  - Sample, Bo
year: 2026
venue: arXiv
arxiv_id: '2611.99901'
url: https://arxiv.org/abs/2611.99901
affiliation: Example University
category: rl_method
is_rl: 'yes'
reward_type: shared
credit_unit: agent
topology: centralized
scenario: general
pool_role: supporting
verified: 'yes'
credit_strict: false
decisions:
  - id: O2
    learned: true
    why: A trained router picks which worker answers each sub-question.
    mechanism: explicit
    evidence:
      source: paper
      where: Section 3 (router head)
      url: https://arxiv.org/abs/2611.99901
  - id: O4
    learned: false
    why: The workers' answers are merged by a fixed majority vote.
added: {today}
summary: >-
  A test record that stands for a paper added by pull request outside a screening
  round; its facts are made up and it is never committed.
citation:
  bibtex_key: handmade2026
  entry_type: article
  journal: arXiv preprint arXiv:2611.99901
artifacts:
  code: {{none: {today}}}
  weights: {{none: {today}}}
  data: {{none: {today}}}
  traces: {{none: {today}}}
  source: https://arxiv.org/abs/2611.99901
evaluated_on:
  - benchmark: gsm8k
    metric: accuracy
    multi_agent_native: false
    results:
      - metric: accuracy
        value: '71.3%'
        setting: the trained router with four workers
        where: Table 2
        source: https://arxiv.org/abs/2611.99901
evaluation_source: https://arxiv.org/abs/2611.99901
"""


def copy_real_root(target: Path) -> Path:
    """The repository's data files (not its code) in ``target``."""
    target.mkdir(parents=True)
    for name in DATA:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, target / name)
        elif src.is_file():
            shutil.copy(src, target / name)
    return target


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _record_level_tests() -> list:
    """The tests of tests/test_records.py that judge the loaded pool (``papers``)."""
    tests = []
    for name, func in inspect.getmembers(test_records, inspect.isfunction):
        if name.startswith("test_") and list(inspect.signature(func).parameters) == ["papers"]:
            tests.append(func)
    return tests


def test_a_hand_written_record_added_outside_rounds_passes_validate_and_the_record_tests(
    tmp_path, monkeypatch, capsys
) -> None:
    root = copy_real_root(tmp_path / "kb")
    text = HAND_WRITTEN.format(today=dt.date.today().isoformat())
    (root / "papers" / "handmade-test-2026.yaml").write_text(text, encoding="utf-8")
    assert main(["--root", str(root), "validate"]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.startswith("ok")
    monkeypatch.setenv("MASRL_KB_ROOT", str(root))
    papers = masrl_kb.load_papers(root)
    assert "handmade-test-2026" in papers.index
    tests = _record_level_tests()
    assert test_records.test_survey_pool_entered_on_cut_off_and_rounds_after_it in tests
    for test in tests:
        test(papers)
    # The rounds page lists it among the papers added outside screening rounds.
    from masrl_kb.site.context import load_context
    from masrl_kb.site.screening_pages import rounds_page

    page = rounds_page(load_context(root)).render()
    assert "handmade-test-2026" in page.split("## Added outside screening rounds", 1)[1]


CASES = gate_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_gate_rule_is_one_line_exit_2_files_untouched(case, tmp_path, capsys) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=3, exclusions=2)
    named = case.plant(root)
    before = _snapshot(root)
    code = main(["--root", str(root), "validate"])
    out = capsys.readouterr()
    assert code == 2, out
    pattern = re.compile(rf"^{re.escape(named)}:[1-9][0-9]*: {re.escape(case.field)}: \S")
    lines = [line for line in out.out.splitlines() if pattern.match(line)]
    assert len(lines) == 1, out.out
    assert "Traceback" not in out.out + out.err
    assert _snapshot(root) == before


# ---------------------------------------------------------------- messages


def _problems(root: Path) -> list[str]:
    from masrl_kb.query.datafiles import compute_report

    return [str(p) for p in compute_report(root).problems]


def _case(name: str):
    return next(c for c in CASES if c.name == name)


def _planted(tmp_path: Path, name: str) -> list[str]:
    root = write_synthetic_root(tmp_path / "kb", papers=3, exclusions=2)
    _case(name).plant(root)
    return _problems(root)


def test_future_added_names_today_and_the_fix(tmp_path) -> None:
    (found,) = [p for p in _planted(tmp_path, "added-tomorrow") if ": added: " in p]
    assert f"later than today ({dt.date.today().isoformat()})" in found
    assert "set today's date" in found


def test_added_before_the_cut_off_names_the_baseline(tmp_path) -> None:
    (found,) = _planted(tmp_path, "added-before-cut-off")
    assert found.startswith("papers/bad.yaml:23: added: 2026-05-03 is before the survey's cut-off")
    assert "protocol.yaml survey.baseline" in found


def test_an_inclusion_without_its_record_is_refused_with_the_fix(tmp_path) -> None:
    (found,) = _planted(tmp_path, "round-include-without-record")
    assert re.match(r"screening/[0-9_-]+/round\.yaml:\d+: decided: include '2611\.00001'", found)
    assert "papers/no-such-paper.yaml, which does not exist" in found
    assert "remove the entry from decided" in found


def test_batch_counts_must_sum_to_the_round_counts(tmp_path) -> None:
    (found,) = _planted(tmp_path, "round-batches-identify-more")
    assert ": counts.retrieved: 10 disagrees with the sources' identified (11)" in found
    assert "set it to 11" in found


def test_results_need_a_primary_page(tmp_path) -> None:
    found = _planted(tmp_path, "result-on-news-site")
    assert any(
        "evaluated_on[0].results[0].source: news.example.com is a secondary host" in p
        for p in found
    ), found


def test_an_aggregator_is_never_an_own_site(tmp_path) -> None:
    found = _planted(tmp_path, "own-site-hf-papers")
    assert any(
        ": own_sites[0]: huggingface.co/papers is an aggregator (sources.yaml aggregators)" in p
        for p in found
    ), found


# ---------------------------------------------------------------- the rules' parts


def test_path_prefixes_match_whole_segments() -> None:
    from masrl_kb.kb.provenance import path_under

    assert path_under(("forum",), "/forum")
    assert path_under(("forum", "x"), "/forum")
    assert path_under(("abs", "2501.00001"), "/abs/")
    assert not path_under(("forumless", "x"), "/forum")
    assert not path_under(("abstract", "1"), "/abs/")
    assert not path_under((), "/forum")


def test_vendor_pages_are_primary_only_under_their_segments() -> None:
    from masrl_kb.kb.model.sources_model import read_sources
    from masrl_kb.kb.provenance import Kind, classify, record_owner

    data, problems = read_sources(REPO)
    assert data is not None and not problems
    owner = record_owner(data, {"affiliation": "Moonshot AI"})
    assert isinstance(classify(data, owner, "https://www.kimi.com/blog/kimi-k2-5.html"), Kind)
    assert not isinstance(classify(data, owner, "https://www.kimi.com/share/abc"), Kind)
    assert not isinstance(classify(data, owner, "https://www.kimi.com/blogger/x"), Kind)
    stranger = record_owner(data, {"affiliation": "Nowhere University"})
    assert not isinstance(classify(data, stranger, "https://www.kimi.com/blog/x"), Kind)


def test_iso_day_is_anchored() -> None:
    from masrl_kb.kb.rules import iso_day

    assert iso_day("2026-06-03") == dt.date(2026, 6, 3)
    for text in ("2026-06-031", "2026-06-03/2026-07-09", "20260603", "2026-W23-3", "2026-06-03 "):
        with pytest.raises(ValueError):
            iso_day(text)


def test_a_date_argument_with_a_tail_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["stats", "--as-of", "2026-06-031"])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "'2026-06-031' is not a date YYYY-MM-DD" in line


def test_the_flow_never_counts_an_inclusion_without_its_record() -> None:
    from masrl_kb.kb.rounds import Round
    from masrl_kb.kb.taxonomy import load_taxonomy
    from masrl_kb.site.screening_pages import pooled_includes, round_flow

    day = dt.date(2026, 11, 30)
    rnd = Round(
        id="2026-11-01_2026-11-30",
        since=dt.date(2026, 11, 1),
        until=day,
        run_on=day,
        families=[],
        counts={"retrieved": 3, "outside_window": 0, "duplicates_removed": 0, "to_screen": 3},
        decided={
            "2611.00001": {"decision": "include", "record": "papers/kept.yaml"},
            "2611.00002": {"decision": "include", "record": "papers/missing.yaml"},
        },
    )
    ctx = SimpleNamespace(papers=pd.DataFrame(index=["kept"]), tax=load_taxonomy(REPO))
    assert pooled_includes(ctx, rnd) == ["kept"]  # type: ignore[arg-type]
    flow = round_flow(ctx, [rnd], 10, "t")  # type: ignore[arg-type]
    assert (flow.included, flow.awaiting) == (1, 2)


def test_short_why_and_summary_are_both_reported_in_one_run(tmp_path) -> None:
    from tests.conftest import GOOD_PAPER

    root = write_synthetic_root(tmp_path / "kb", papers=3, exclusions=2)
    text = GOOD_PAPER.replace("why: A fixed rule picks the next agent.", "why: Fixed.")
    text = text.replace("summary: A record used by the tests.", "summary: Too short.")
    (root / "papers" / "bad.yaml").write_text(text, encoding="utf-8")
    assert _problems(root) == [
        "papers/bad.yaml:22: decisions[0].why: one line saying what in the work makes this "
        "decision: at least 4 words, got 1",
        "papers/bad.yaml:24: summary: one or two sentences: 5 to 90 words, got 2",
    ]
