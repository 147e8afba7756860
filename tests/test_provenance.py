"""The provenance rule: primary hosts, hostile URLs, provisional items, the host data file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from masrl_kb.kb.model.base import validate_mapping
from masrl_kb.kb.model.sources_model import SOURCES_FILE, HostData, read_sources
from masrl_kb.kb.provenance import Kind, classify, place_of, provisional_notes, record_owner
from masrl_kb.kb.record_checks import validate
from masrl_kb.kb.yamlio import load_yaml_text
from tests.conftest import GOOD_PAPER, REPO, run_cli

HOSTS, _ = read_sources(REPO)
assert HOSTS is not None
OWNER = record_owner(HOSTS, {"artifacts": {"code": "https://github.com/OpenMLRL/CoMLRL"}})


def primary(url: str, record: dict | None = None) -> bool:
    owner = OWNER if record is None else record_owner(HOSTS, record)
    return isinstance(classify(HOSTS, owner, url), Kind)


@pytest.mark.parametrize(
    "url",
    [
        "https://arxiv.org/abs/2508.04652",
        "https://arxiv.org/html/2508.04652v1",
        "https://arxiv.org/pdf/2508.04652",
        "https://www.arxiv.org/abs/2508.04652",
        "https://ARXIV.ORG/abs/2508.04652",
        "https://openreview.net/forum?id=abc",
        "https://aclanthology.org/2025.acl-long.421/",
        "https://ojs.aaai.org/index.php/AAAI/article/view/6220",
        "https://doi.org/10.1142/S0219525901000188",
        "https://ar5iv.labs.arxiv.org/html/2310.00322",
        "https://github.com/OpenMLRL/CoMLRL/blob/main/README.md",
        "https://github.com/openmlrl/other-repo",
        "https://openmlrl.github.io/CoMLRL/docs/env",
    ],
)
def test_primary_hosts_are_accepted(url: str) -> None:
    assert primary(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.sciencestack.ai/paper/2508.04652",
        "https://huggingface.co/papers/2508.04652",
        "https://arxiv.org/list/cs.MA/new",  # arXiv, but not the paper's own page
        "https://ar5iv.labs.arxiv.org/",  # ar5iv, but not a paper's page
        "https://arxiv.cnoctave.top/abs/2601.05465",  # a proxy of arxiv.org on another domain
        "https://github.com/Super-E-Fee/Fork_ReMA-public",  # someone else's fork
        "https://github.com/OpenMLRL.evil/CoMLRL",
        "https://github.com/",
        "https://evil.github.io/",
        "https://www.anthropic.com/news/x",  # a vendor's site, but not this record's vendor
    ],
)
def test_secondary_hosts_are_refused(url: str) -> None:
    assert not primary(url)


HOSTILE = {
    "look-alike suffix": ("https://arxiv.org.evil.com/abs/1", "secondary host"),
    "user-info": ("https://arxiv.org@evil.com/abs/1", "user-info"),
    "user-info with password": ("https://arxiv.org:443@evil.com/abs/1", "user-info"),
    "backslash before @": ("https://evil.com\\@arxiv.org/abs/1", "backslash"),
    "cyrillic a": ("https://\u0430rxiv.org/abs/1", "non-ASCII"),
    "fullwidth dot": ("https://arxiv\uff0eorg/abs/1", "non-ASCII"),
    "ideographic dot": ("https://arxiv\u3002org/abs/1", "non-ASCII"),
    "punycode": ("https://xn--rxiv-53d.org/abs/1", "punycode"),
    "ftp": ("ftp://arxiv.org/abs/1", "scheme"),
    "javascript": ("javascript:alert('arxiv.org/abs/1')", "scheme"),
    "data": ("data:text/html,https://arxiv.org/abs/1", "scheme"),
    "file": ("file:///arxiv.org/abs/1", "scheme"),
    "no scheme": ("//arxiv.org/abs/1", "scheme"),
    "port": ("https://arxiv.org:8443/abs/1", "port"),
    "newline": ("https://arxiv.org/abs/1\nhttps://evil.com", "control"),
    "space in host": ("https://arxiv .org/abs/1", "space"),
    "dot segments": ("https://github.com/OpenMLRL/../evil/x", "dot segments"),
    "encoded dot segments": ("https://github.com/OpenMLRL/%2e%2e/evil/x", "dot segments"),
    "encoded slash": ("https://github.com/OpenMLRL%2F..%2Fevil/x", "encoded slash"),
    "trailing dot host": ("https://arxiv.org./abs/1", "not a host"),
    "ip address": ("https://127.0.0.1/abs/1", "secondary host"),
    "bracketed ipv6": ("https://[::1]/abs/1", "host"),
    "broken ipv6": ("https://[::1/abs/1", "malformed"),
    "not text": (12345, "not text"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_urls_are_never_primary(name: str) -> None:
    url, reason = HOSTILE[name]
    verdict = classify(HOSTS, OWNER, url)
    assert isinstance(verdict, str), verdict
    assert reason in verdict


def test_place_of_strips_www_and_splits_the_path() -> None:
    place = place_of("https://www.GitHub.com/OpenMLRL/CoMLRL/tree/main")
    assert (place.host, place.segments) == ("github.com", ("OpenMLRL", "CoMLRL", "tree", "main"))


def test_the_record_declares_its_own_accounts_and_vendor() -> None:
    record = {
        "affiliation": "Anthropic",
        "own_sites": ["https://rlinf.readthedocs.io", "https://huggingface.co/tencent"],
        "artifacts": {"code": {"none": "2026-11-30"}},
    }
    assert primary("https://www.anthropic.com/engineering/x", record)
    assert primary("https://github.com/anthropics/claude-code", record)
    assert primary("https://rlinf.readthedocs.io/en/latest/x.html", record)
    assert primary("https://huggingface.co/datasets/tencent/ArtifactsBenchmark", record)
    assert not primary("https://rlinf.readthedocs.io.evil.com/x", record)
    assert not primary("https://huggingface.co/datasets/evil/ArtifactsBenchmark", record)
    assert not primary("https://github.com/OpenMLRL/CoMLRL", record)


# ---------------------------------------------------------------- the rule in validate


@pytest.fixture
def root(mini_root: Path) -> Path:
    """A small root with the real host data; the synthetic papers (example.org links) go."""
    shutil.copy(REPO / SOURCES_FILE, mini_root / SOURCES_FILE)
    for path in (mini_root / "papers").glob("synthetic-*.yaml"):
        path.unlink()
    return mini_root


def problems(root: Path, text: str) -> list[str]:
    (root / "papers" / "bad.yaml").write_text(text, encoding="utf-8")
    return [str(p) for p in validate(root).problems]


NONE_REASON = (
    "evaluated_on_none:\n"
    "  reason: The paper reports no benchmark.\n"
    "  url: https://arxiv.org/abs/2501.00001\n"
)
GOOD = GOOD_PAPER + NONE_REASON


def learned(url: str, extra: str = "", source: str = "paper") -> str:
    return GOOD.replace("    learned: false\n", "    learned: true\n").replace(
        "    why: A fixed rule picks the next agent.\n",
        "    why: A fixed rule picks the next agent.\n"
        "    mechanism: explicit\n"
        f"    evidence:\n      source: {source}\n      where: Section 3\n      url: '{url}'\n"
        + extra,
    )


def test_the_good_paper_with_a_reason_for_no_benchmark_is_valid(root: Path) -> None:
    assert problems(root, GOOD) == []


def test_an_empty_evaluated_on_needs_a_sourced_reason(root: Path) -> None:
    assert problems(root, GOOD_PAPER) == [
        "papers/bad.yaml:35: evaluated_on_none: an RL method or framework with no benchmark "
        "says why: evaluated_on_none: {reason, url} (a primary page that shows it)"
    ]


def test_a_reason_alongside_benchmarks_is_refused(root: Path) -> None:
    text = GOOD.replace(
        "evaluated_on: []\n",
        "evaluated_on:\n  - {benchmark: synthetic-bench, metric: accuracy,"
        " multi_agent_native: false}\n"
        "evaluation_source: https://arxiv.org/abs/2501.00001\n",
    )
    assert [p.split(": ", 2)[1] for p in problems(root, text)] == ["evaluated_on_none"]


def test_a_learned_decision_on_a_primary_page_is_valid(root: Path) -> None:
    assert problems(root, learned("https://arxiv.org/abs/2501.00001")) == []


def test_a_learned_decision_on_a_secondary_host_is_refused(root: Path) -> None:
    found = problems(
        root, learned("https://www.sciencestack.ai/paper/2501.00001", source="secondary")
    )
    assert len(found) == 1
    line = found[0]
    assert line.startswith("papers/bad.yaml:27: decisions[0].evidence.url: sciencestack.ai ")
    assert "learned decision 'O2'" in line and "provisional: <reason>" in line
    assert "allowed kinds: arxiv (arxiv.org" in line and "openreview (openreview.net)" in line


def test_a_provisional_reason_accepts_a_secondary_host(root: Path) -> None:
    text = learned(
        "https://www.sciencestack.ai/paper/2501.00001",
        "      provisional: the method section was not yet read\n",
        source="secondary",
    )
    assert problems(root, text) == []


def test_a_blank_provisional_is_no_reason(root: Path) -> None:
    text = learned(
        "https://www.sciencestack.ai/paper/1", "      provisional: '  '\n", source="secondary"
    )
    fields = sorted(p.split(": ", 2)[1] for p in problems(root, text))
    assert fields == ["decisions[0].evidence.provisional", "decisions[0].evidence.url"]


def test_a_paper_label_must_point_at_the_paper(root: Path) -> None:
    found = problems(root, learned("https://example.com/x", source="secondary"))
    assert [p.split(": ", 2)[1] for p in found] == ["decisions[0].evidence.url"]
    found = problems(root, learned("https://example.com/x", source="paper"))
    assert (
        "papers/bad.yaml:25: decisions[0].evidence.source: source: paper needs the work's own"
        in (" ".join(found))
    )
    # artifacts.code off a forge declares an own site: it can back code, not the paper
    own = problems(root, learned("https://example.org/code/tree/main", source="paper"))
    assert own == [
        "papers/bad.yaml:25: decisions[0].evidence.source: source: paper does not fit the "
        "record's own site; allowed: appendix, code, secondary"
    ]


def _with_code(text: str) -> str:
    return text.replace('code: "https://example.org/code"', 'code: "https://github.com/owner/repo"')


def test_a_fork_is_not_the_authors_repository(root: Path) -> None:
    ok = _with_code(learned("https://github.com/owner/repo/blob/main/x.py", source="code"))
    assert problems(root, ok) == []
    fork = _with_code(learned("https://github.com/someone/fork-of-repo/x.py", source="code"))
    fields = sorted(p.split(": ", 2)[1] for p in problems(root, fork))
    assert fields == ["decisions[0].evidence.source", "decisions[0].evidence.url"]


def test_a_corrected_fact_needs_one_primary_entry(root: Path) -> None:
    secondary = "sources:\n  - field: authors\n    url: https://www.researchtrend.ai/papers/1\n"
    found = problems(root, GOOD + secondary)
    assert len(found) == 1 and "sources[0].url: researchtrend.ai" in found[0]
    assert "the corrected 'authors'" in found[0]
    both = secondary + "  - field: authors\n    url: https://arxiv.org/abs/2501.00001\n"
    assert problems(root, GOOD + both) == []


def test_strict_credit_and_release_links_need_primary_sources(root: Path) -> None:
    strict = GOOD.replace(
        "credit_strict: false\n",
        "credit_strict: true\ncredit_mechanism: shaping\ncredit_evidence:\n"
        "  source: secondary\n  where: a summary\n  url: https://paperhub.cn/paper/1\n",
    ).replace('source: "https://arxiv.org/abs/2501.00001"', 'source: "https://dijee.net/primary/x"')
    fields = sorted(p.split(": ", 2)[1] for p in problems(root, strict))
    assert fields == ["artifacts.source", "credit_evidence.url"]


def test_the_cli_fails_with_one_line_per_problem(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "papers" / "bad.yaml").write_text(learned("https://arxiv.org@evil.com/abs/1"))
    assert run_cli("--root", str(root), "validate") != 0
    err = capsys.readouterr()
    text = err.out + err.err
    assert "papers/bad.yaml:27: decisions[0].evidence.url:" in text
    assert "user-info" in text and "Traceback" not in text


def test_without_host_data_the_rule_is_off(mini_root: Path) -> None:
    assert problems(mini_root, GOOD_PAPER) == []


def test_the_knowledge_base_ships_its_host_data() -> None:
    data, found = read_sources(REPO)
    assert found == [] and data is not None
    assert {k.kind for k in data.papers} >= {"arxiv", "ar5iv", "openreview", "proceedings", "doi"}


# ---------------------------------------------------------------- the host data file


def _host_data_problems(root: Path, text: str | None) -> list[str]:
    path = root / SOURCES_FILE
    if text is not None:
        path.write_text(text, encoding="utf-8")
    return [str(p) for p in validate(root).problems if p.path == SOURCES_FILE]


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda t: t.replace("version: 1", "version: 2"), "version"),
        (lambda t: t.replace("hosts: [openreview.net]", "hosts: [Open Review]"), "papers[1].hosts"),
        (
            lambda t: t.replace("hosts: [openreview.net]", "hosts: openreview.net"),
            "papers[1].hosts",
        ),
        (lambda t: t.replace("    - host: gitlab.com", "    - host: 7"), "forges.hosts[1].host"),
        (lambda t: t + "extra: 1\n", "extra"),
        (lambda t: t.replace("  backs: [vendor, code]", "  backs: []"), "vendors.backs"),
        (lambda t: t + "  broken: [unclosed\n", "yaml"),
        (lambda t: "- a list\n", "sources"),
    ],
)
def test_a_broken_host_file_is_reported_by_line_and_field(root: Path, edit, field: str) -> None:
    text = edit((root / SOURCES_FILE).read_text(encoding="utf-8"))
    found = _host_data_problems(root, text)
    assert any(p.startswith(f"{SOURCES_FILE}:") and f": {field}:" in p for p in found), found


def test_a_linked_host_file_is_refused(root: Path) -> None:
    (root / SOURCES_FILE).rename(root / "real-sources.yaml")
    os.symlink("real-sources.yaml", root / SOURCES_FILE)
    found = _host_data_problems(root, None)
    assert found and all(p.startswith(f"{SOURCES_FILE}:1: file:") for p in found)


def test_the_host_data_model_reads_the_sections() -> None:
    loaded = load_yaml_text((REPO / SOURCES_FILE).read_text(encoding="utf-8"))
    data, found = validate_mapping(HostData, loaded.data, SOURCES_FILE)
    assert found == [] and data is not None
    assert "github.com" in {f.host for f in data.forges.hosts}
    assert "Anthropic" in {v.name for v in data.vendors.members}


# ---------------------------------------------------------------- the site badge


def test_provisional_notes_list_every_provisional_item() -> None:
    record = {
        "sources": [{"field": "authors", "url": "u", "provisional": "not yet checked"}],
        "decisions": [{"id": "O3", "evidence": {"url": "u", "provisional": "<b>x</b>"}}],
        "credit_evidence": {"url": "u"},
        "artifacts": {"source": "u", "provisional": "release check pending"},
        "evaluated_on_none": {"reason": "r", "url": "u", "provisional": "names unread"},
    }
    assert provisional_notes(record) == [
        ("source of authors", "not yet checked"),
        ("evidence for O3", "<b>x</b>"),
        ("release links", "release check pending"),
        ("no-benchmark reason", "names unread"),
    ]
    assert provisional_notes({"credit_evidence": float("nan"), "sources": []}) == []


def test_the_paper_page_shows_a_provisional_badge_with_escaped_reasons(root: Path) -> None:
    from masrl_kb.site.context import load_context
    from masrl_kb.site.paper_pages import paper_page

    hostile = "<script>alert(1)</script> & not yet read"
    text = GOOD.replace(
        '  source: "https://arxiv.org/abs/2501.00001"\n',
        f'  source: "https://arxiv.org/abs/2501.00001"\n  provisional: "{hostile}"\n',
    )
    (root / "papers" / "bad.yaml").write_text(text, encoding="utf-8")
    ctx = load_context(root)
    page = paper_page(ctx, "bad").render()
    assert "data-provisional" in page and "Provisional sources" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; not yet read" in page
    assert "<script>alert" not in page


def test_a_page_without_provisional_items_has_no_badge(root: Path) -> None:
    from masrl_kb.site.context import load_context
    from masrl_kb.site.paper_pages import paper_page

    (root / "papers" / "bad.yaml").write_text(GOOD, encoding="utf-8")
    page = paper_page(load_context(root), "bad").render()
    assert "data-provisional" not in page and "Provisional sources" not in page


def test_the_hostile_corpus_has_a_provenance_group() -> None:
    from tests.hostile.corpus import all_cases

    cases = [c for c in all_cases() if c.group == "provenance"]
    assert len(cases) >= 30
    assert {c.field for c in cases} >= {"decisions[0].evidence.url", "file", "sources[0].url"}


def test_the_host_data_is_part_of_the_pool_fingerprint(root: Path) -> None:
    from masrl_kb.kb.cache import pool_fingerprint

    before = pool_fingerprint(root, "salt")
    path = root / SOURCES_FILE
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert pool_fingerprint(root, "salt") != before


def test_the_paper_page_says_why_no_benchmark_is_listed(root: Path) -> None:
    from masrl_kb.site.context import load_context
    from masrl_kb.site.paper_pages import paper_page

    text = GOOD.replace("The paper reports no benchmark.", "'<img src=x onerror=alert(1)> none'")
    (root / "papers" / "bad.yaml").write_text(text, encoding="utf-8")
    page = paper_page(load_context(root), "bad").render()
    assert "&lt;img src=x onerror=alert(1)&gt; none" in page and "<img src=x" not in page
    assert '<a href="https://arxiv.org/abs/2501.00001" rel="noopener">source</a>' in page


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("affiliation: Nowhere University", "affiliation: [Anthropic]"),
        lambda t: t.replace("affiliation: Nowhere University", "affiliation: {a: 1}"),
        lambda t: t + "own_sites: https://github.com/owner\n",
        lambda t: t + "own_sites:\n  - 7\n  - [a]\n",
        lambda t: t + "sources: {field: authors}\n",
        lambda t: t + "sources:\n  - 7\n  - {field: [authors], url: 3}\n",
        lambda t: t.replace("decisions:\n", "decisions: 7\nx_decisions:\n"),
        lambda t: t.replace("evaluated_on_none:\n", "evaluated_on_none: [1]\nx_none:\n"),
        lambda t: t.replace('  code: "https://example.org/code"', "  code: [1, 2]"),
        lambda t: t.replace("artifacts:\n", "artifacts: 7\nx_artifacts:\n"),
    ],
)
def test_malformed_shapes_give_problems_not_crashes(root: Path, edit) -> None:
    found = problems(root, edit(GOOD))
    assert found and all(p.startswith("papers/bad.yaml:") for p in found)


def test_the_evaluation_source_needs_a_primary_page_or_a_reason(root: Path) -> None:
    evaluated = GOOD.replace(
        "evaluated_on: []\nevaluated_on_none:\n  reason: The paper reports no benchmark.\n"
        "  url: https://arxiv.org/abs/2501.00001\n",
        "evaluated_on:\n  - {benchmark: synthetic-bench, metric: accuracy,"
        " multi_agent_native: false}\nevaluation_source: https://ai-navigate-news.com/a/1\n",
    )
    found = problems(root, evaluated)
    assert len(found) == 1
    assert found[0].startswith("papers/bad.yaml:37: evaluation_source: ai-navigate-news.com ")
    assert "evaluation_provisional: <reason>" in found[0]
    reason = "evaluation_provisional: read from a news digest\n"
    assert problems(root, evaluated + reason) == []
    primary = evaluated.replace(
        "https://ai-navigate-news.com/a/1", "https://arxiv.org/abs/2501.00001"
    )
    assert problems(root, primary) == []
    assert provisional_notes({"evaluation_provisional": "read from a digest"}) == [
        ("evaluation source", "read from a digest")
    ]


def test_every_url_field_of_the_model_is_cited_or_named_the_work_s_own() -> None:
    """A new URL field cannot escape the primary-source rule: it is a row of CITED (the
    rule and the badge both read it) or listed in NOT_CITED as one of the work's own links."""
    from masrl_kb.kb.fields import PAPER_FIELDS, Field
    from masrl_kb.kb.provenance import CITED, NOT_CITED

    def urls(fields: tuple[Field, ...], prefix: str = "") -> list[str]:
        found = []
        for f in fields:
            if f.kind in ("url", "urls", "artifact"):
                found.append(prefix + f.name)
            found += urls(f.sub, f"{prefix}{f.name}.")
        return found

    cited = {".".join([*(p for p in c.path if p != "*"), c.url]) for c in CITED}
    model = set(urls(PAPER_FIELDS))
    assert cited & NOT_CITED == set()
    assert model == cited | NOT_CITED, model ^ (cited | NOT_CITED)
