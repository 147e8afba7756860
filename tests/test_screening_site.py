"""Screening rounds on the site: flows, what each round added, the since-the-survey
page and the protocol page, computed from the records and rounds."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from masrl_kb.contrib.screen.batches import run_round
from masrl_kb.contrib.screen.decide import decide_round
from masrl_kb.contrib.sources.arxiv import Paging
from masrl_kb.kb.editor_schema import schema_comment
from masrl_kb.kb.fields import PLACEHOLDER
from masrl_kb.kb.protocol import load_protocol
from masrl_kb.kb.rounds import RoundError, load_round
from masrl_kb.kb.synthetic import dump_record, write_synthetic_root
from masrl_kb.query.claims import evaluate_claims
from masrl_kb.query.frames import crosstab, load_pool, pool_as_of
from masrl_kb.query.views import survey_view
from masrl_kb.site.context import load_context
from masrl_kb.site.pages import render_page, render_pages, site_files
from masrl_kb.site.prisma import Flow, flow_svg
from tests.screening_stub import ScreeningStub, copy_kb

SINCE, UNTIL = dt.date(2026, 11, 16), dt.date(2026, 11, 22)
ROUND = f"{SINCE}_{UNTIL}"


def _finish(path: Path, like: Path) -> None:
    """Fill a new record's TODO fields from another record (as a curator would)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))  # plain dicts, dumpable
    model = yaml.safe_load(like.read_text(encoding="utf-8"))
    for name, value in list(data.items()):
        if value == PLACEHOLDER:
            data[name] = model[name]
    for name in model.keys() - data.keys():  # judgement fields a new record lacks
        data[name] = model[name]
    data["decisions"] = model["decisions"]
    data["reward_type"], data["credit_unit"] = "orchestration", "orchestrator"
    path.write_text(schema_comment("paper") + "\n" + dump_record(data), encoding="utf-8")


@pytest.fixture(scope="module")
def screened(tmp_path_factory) -> Path:
    """A copy of the records after one fixture round: one paper in, two out."""
    kb = copy_kb(tmp_path_factory.mktemp("site") / "kb")
    stub = ScreeningStub()
    try:
        run_round(
            SINCE,
            UNTIL,
            root=kb,
            paging=Paging(page_size=3, delay_seconds=0),
            endpoint=stub.url,
            today=dt.date(2026, 11, 23),
        )
    finally:
        stub.close()
    decisions = kb / "decisions.csv"
    decisions.write_text(
        "id,decision,reason\n2611.90001,include,\n2611.90003,exclude,out_of_scope\n"
        "2611.90006,exclude,background_only\n"
    )
    decide_round(ROUND, decisions, root=kb, today=dt.date(2026, 11, 24))
    rnd = load_round(kb, ROUND)
    _finish(kb / rnd.decided["2611.90001"]["record"], kb / "papers" / "magrpo.yaml")
    return kb


@pytest.fixture(scope="module")
def rendered(screened: Path) -> tuple[dict[str, str], list[Path]]:
    """Every file of the screened copy's site, and the round files read to render it."""
    from masrl_kb.kb import rounds

    real, read = rounds.validate_file, []

    def counted(model, path, *args, **kwargs):
        read.append(path)
        return real(model, path, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rounds, "validate_file", counted)
        return site_files(screened), read


@pytest.fixture(scope="module")
def files(rendered: tuple[dict[str, str], list[Path]]) -> dict[str, str]:
    return rendered[0]


def _flow_numbers(table: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in re.findall(r'data-kb-flow="([a-z]+)">(\d+)<', table)}


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, flags=re.S)


def _flow_tables(page: str) -> list[str]:
    """The table of numbers printed under each flow diagram."""
    return re.findall(r"</svg>.*?</table>", page, flags=re.S)


def test_round_flow_shows_the_round_counts(screened: Path, files: dict[str, str]) -> None:
    page = files["rounds/index.md"]
    rnd = load_round(screened, ROUND)
    papers, exclusions = load_pool(screened)
    baseline = len(pool_as_of(papers, exclusions, load_protocol(screened).baseline)[0])
    svgs = _svgs(page)
    # all rounds together, then the one round; each drawn wide and stacked (for phones)
    assert len(svgs) == 4
    for svg in svgs:
        ET.fromstring(svg)  # well-formed
        assert "href" not in svg  # no external reference
    pairs = list(zip(svgs[0::2], svgs[1::2], strict=True))
    for (wide, stacked), table in zip(pairs, _flow_tables(page), strict=True):
        numbers = _flow_numbers(table)
        for name, n in numbers.items():  # both drawings show the same numbers
            for svg in (wide, stacked):
                assert f"(n = {n})" in svg or name == "removed"
        assert numbers == {
            "previous": baseline,
            "identified": rnd.counts["retrieved"],
            "removed": rnd.counts["duplicates_removed"] + rnd.counts["outside_window"],
            "duplicates": rnd.counts["duplicates_removed"],
            "outside": rnd.counts["outside_window"],
            "screened": rnd.counts["to_screen"],
            "excluded": rnd.excluded,
            "included": rnd.included,
            "awaiting": rnd.awaiting,
            "total": baseline + rnd.included,
        }
    assert "mermaid" not in page and "<script" not in page


def test_one_page_is_rendered_as_the_whole_site_renders_it(
    screened: Path, files: dict[str, str], tmp_path: Path
) -> None:
    """render_page() (what the tests of one page use) gives site_files()'s text."""
    ctx = load_context(screened)
    names = ["index.md", "rounds/index.md", "new/index.md"]
    assert render_pages(ctx, names) == {name: files[name] for name in names}
    assert render_page(ctx, "protocol/index.md") == files["protocol/index.md"]
    small = write_synthetic_root(tmp_path / "kb", papers=3)
    with pytest.raises(KeyError):
        render_page(load_context(small), "no-such-page/index.md")


def test_a_build_reads_each_round_once(screened: Path, rendered) -> None:
    """The rounds page, What's new, the coverage date on every page and the candidates
    awaiting share one read of the rounds (Context.rounds)."""
    files, read = rendered
    assert f"## Round {ROUND}" in files["rounds/index.md"]
    assert "data-kb-coverage" in files["index.md"]
    assert read == [screened / "screening" / ROUND / "round.yaml"]


def test_round_lists_what_it_added(screened: Path, files: dict[str, str]) -> None:
    page = files["rounds/index.md"]
    rnd = load_round(screened, ROUND)
    key = Path(rnd.decided["2611.90001"]["record"]).stem
    section = page.split(f"## Round {ROUND}")[1]
    assert f'data-key="{key}"' in section
    for d in rnd.decided.values():
        if d["decision"] == "exclude":
            assert f"#{Path(d['record']).stem}" in section
    # the hostile title of an excluded entry is escaped
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_since_survey_shows_changed_cells_and_moved_claims(
    screened: Path, files: dict[str, str]
) -> None:
    page = files["since-survey/index.md"]
    papers, exclusions = load_pool(screened)
    # the survey's view: the baseline pool with the codings of its view reading, so a
    # recoded survey paper moves a claim as a new paper does
    base_p, base_e = survey_view(papers, exclusions, screened)
    before = crosstab("reward_family", "credit_unit", papers=base_p)
    after = crosstab("reward_family", "credit_unit", papers=papers)
    assert int(after.at["R7", "orchestrator"]) == int(before.at["R7", "orchestrator"]) + 1
    row = re.search(
        r'<tr data-cell="reward_family-x-credit_unit"><td><a [^>]*>R7 [^<]*× [^<]*</a></td>'
        r'<td class="kb-num">(\d+)</td><td class="kb-num">(\d+)</td>',
        page,
    )
    assert row and (int(row[1]), int(row[2])) == (
        int(before.at["R7", "orchestrator"]),
        int(after.at["R7", "orchestrator"]),
    )
    # a value moves when its count or, for "N of M" claims, its denominator moves
    now = {r.claim.id: r.shown_value for r in evaluate_claims(root=screened)}
    then = {
        r.claim.id: r.shown_value
        for r in evaluate_claims(root=screened, papers=base_p, exclusions=base_e)
    }
    moved = {c for c in now if now[c] != then[c]}
    assert moved  # two exclusions and one paper move the audit counts
    assert set(re.findall(r'data-claim="([^"]+)"', page)) == moved
    for claim in moved:
        shown = re.search(
            rf'<tr data-claim="{re.escape(claim)}">.*?<td class="kb-num">([^<]*)</td>'
            r'<td class="kb-num">([^<]*)</td>',
            page,
        )
        assert shown and (shown[1], shown[2]) == (then[claim], now[claim])


def test_protocol_page_renders_the_protocol(screened: Path, files: dict[str, str]) -> None:
    page = files["protocol/index.md"]
    protocol = load_protocol(screened)
    for family in protocol.families:
        assert f'id="f-{family.id}"' in page
        for term in family.terms:
            assert f"<code>{term}</code>" in page
    for rule in protocol.inclusion_rules:
        assert f'id="{rule.id}"' in page
    for code in ("out_of_scope", "prompted_framework_only"):
        assert f'id="exclusion_reason-{code}"' in page
    assert f"<strong>{protocol.title_similarity:g}</strong>" in page
    assert 'href="../protocol/"' in files["exclusions/index.md"]


def test_flow_svg_escapes_text() -> None:
    flow = Flow('<x>"&', 1, 2, "</text><script>", 0, 0, 2, 1, [("<b>", 1)], 0, 1)
    svg = flow_svg(flow)  # the wide drawing and the stacked one
    root = ET.fromstring(f"<div>{svg}</div>")
    assert [d.get("class") for d in root] == ["kb-flow-wide", "kb-flow-stacked"]
    assert "<script>" not in svg and "<b>" not in svg


def test_no_round_yet(tmp_path: Path) -> None:
    kb = copy_kb(tmp_path / "kb")
    page = render_page(load_context(kb), "rounds/index.md")
    assert "No screening round has been recorded yet." in page
    # no paper added since: what moved a cell is the recoding of the survey's own papers
    from masrl_kb.query.views import moved_cells, new_papers

    assert new_papers(root=kb).empty
    survey = set(load_pool(kb)[0].index)
    assert all(set(r["papers"]) <= survey for r in moved_cells(root=kb).to_dict("records"))


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("round: 2026-11-16_2026-11-22", "round: <script>x</script>", "round"),
        ("record: exclusions/E033.yaml", "record: ../../etc/passwd", "decided"),
        ("run_on: 2026-11-23", "run_on: [1, 2]", "run_on"),
    ],
)
def test_a_tampered_round_stops_the_build(screened: Path, tmp_path: Path, old, new, field) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(screened, kb)
    path = kb / "screening" / ROUND / "round.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    line = text.splitlines().index(next(t for t in text.splitlines() if old in t)) + 1
    with pytest.raises(RoundError) as exc:
        site_files(kb)
    message = str(exc.value)
    assert message.startswith(f"screening/{ROUND}/round.yaml:")
    assert f": {field}: " in message
    if field != "decided":
        assert message.startswith(f"screening/{ROUND}/round.yaml:{line}:")


def test_whats_new_groups_papers_by_round(screened: Path, files: dict[str, str]) -> None:
    page = files["new/index.md"]
    rnd = load_round(screened, ROUND)
    papers, exclusions = load_pool(screened)
    baseline = pool_as_of(papers, exclusions, load_protocol(screened).baseline)[0]
    head, rest = page.split(f"## Round {ROUND} {{#r-{ROUND}}}")
    in_round, in_baseline = rest.split("## Survey baseline {#baseline}")
    added = {Path(d["record"]).stem for d in rnd.decided.values() if d["decision"] == "include"}
    assert set(re.findall(r'data-key="([^"]+)"', in_round)) == added
    assert set(re.findall(r'data-key="([^"]+)"', in_baseline)) == set(baseline.index)
    assert 'data-key="' not in head  # every paper sits in exactly one group
    assert len(re.findall(r'data-key="', page)) == len(papers)


def test_whats_new_goes_by_day_without_rounds(tmp_path: Path) -> None:
    kb = copy_kb(tmp_path / "kb")
    page = render_page(load_context(kb), "new/index.md")
    papers, _ = load_pool(kb)
    days = sorted({d.date().isoformat() for d in papers["added"]}, reverse=True)
    assert re.findall(r"^## (\S+) \{#d-", page, flags=re.M) == days
    assert "Survey baseline" not in page


def test_hostile_protocol_text_is_escaped(tmp_path: Path) -> None:
    kb = copy_kb(tmp_path / "kb")
    path = kb / "protocol.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    payload = "<script>alert(1)</script>"
    data["survey"]["title"] = payload
    data["query_families"][0]["label"] = payload
    data["query_families"][0]["terms"][0] = payload
    data["inclusion_rules"][0]["rule"] = payload
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    ctx = load_context(kb)
    names = ("protocol/index.md", "rounds/index.md", "since-survey/index.md")
    files = render_pages(ctx, list(names))
    for name in names:
        assert "<script>" not in files[name]
    assert files["protocol/index.md"].count("&lt;script&gt;alert(1)&lt;/script&gt;") == 4


IMPORTED = (
    "id,title,authors,date,url,abstract,doi,arxiv_id,openreview_id\n"
    'A1,LLM Collaboration With Multi-Agent Reinforcement Learning,"Sample, Cara",2025-08-06,'
    ",Test text: a pooled paper again.,,2508.04652,\n"
    'A2,Fictional Turn Credit for Debating Agents,"Stub, Dan",2026-11-18,,'
    "Test text: message credit for LLM agents.,,,AbCdEf1234\n"
    'A3,A Fictional Survey of Agent Memory,"Mock, Eve",2026-11-19,https://example.org/a3,'
    "Test text.,,,\n"
)


@pytest.fixture(scope="module")
def two_sources(screened: Path, tmp_path_factory) -> Path:
    """The screened round plus an imported OpenAlex batch (1 duplicate, 2 new), one of
    whose candidates is excluded, and a second round from a curated list."""
    from masrl_kb.contrib.screen.batches import import_round

    kb = tmp_path_factory.mktemp("two") / "kb"
    shutil.copytree(screened, kb)
    path = kb / "openalex.csv"
    path.write_text(IMPORTED, encoding="utf-8")
    import_round(path, "openalex", SINCE, UNTIL, query="fictional", root=kb)
    decisions = kb / "d2.csv"
    decisions.write_text("id,decision,reason\nopenreview:AbCdEf1234,exclude,out_of_scope\n")
    decide_round(ROUND, decisions, root=kb, today=dt.date(2026, 11, 25))
    later = kb / "list.csv"
    later.write_text(IMPORTED.replace("2026-11-1", "2026-11-2").replace("AbCdEf1234", "Zz99"))
    import_round(later, "curated_list", dt.date(2026, 11, 23), dt.date(2026, 11, 29), root=kb)
    return kb


def _source_row(page: str, source: str, nth: int = 0) -> dict[str, int]:
    rows = re.findall(rf'<tr data-source="{source}">(.*?)</tr>', page, flags=re.S)
    return {k: int(n) for k, n in re.findall(r'data-kb-count="([a-z_]+)">(\d+)<', rows[nth])}


def test_flow_by_source_per_round_and_cumulative(two_sources: Path) -> None:
    page = render_page(load_context(two_sources), "rounds/index.md")
    first = load_round(two_sources, ROUND)
    arxiv = first.sources[0]
    assert [b["name"] for b in first.sources] == ["arxiv", "openalex"]
    expected_openalex = {
        "batches": 1,
        "identified": 3,
        "duplicates_removed": 1,
        "outside_window": 0,
        "screened": 2,
        "included": 0,
        "excluded": 1,
        "awaiting": 1,
    }
    # cumulative table first: arXiv ran once, OpenAlex once, the curated list once
    assert _source_row(page, "openalex", 0) == expected_openalex
    screened_arxiv = arxiv["identified"] - arxiv["duplicates_removed"] - arxiv["outside_window"]
    assert _source_row(page, "arxiv", 0) == {
        "batches": 1,
        "identified": arxiv["identified"],
        "duplicates_removed": arxiv["duplicates_removed"],
        "outside_window": arxiv["outside_window"],
        "screened": screened_arxiv,
        "included": 1,
        "excluded": 2,
        "awaiting": screened_arxiv - 3,
    }
    curated = _source_row(page, "curated_list", 0)
    # the later list repeats the pooled paper and the two candidates of the first round
    assert (curated["identified"], curated["duplicates_removed"], curated["screened"]) == (3, 3, 0)
    tables = _flow_tables(page)
    overall = _flow_numbers(tables[0])
    assert overall["identified"] == arxiv["identified"] + 3 + 3
    assert overall["screened"] == screened_arxiv + 2
    assert overall["excluded"] == 3 and overall["included"] == 1
    assert "from OpenAlex" in tables[0] and "from curated list" in tables[0]
    assert 'data-batch="openalex"' in page and "<code>openalex.csv</code>" in page
