"""Hostile inputs for the rules that make ``validate`` the whole gate (issue 27): what
``validate`` once accepted though it was wrong. Record cases run on a small root carrying
the real ``sources.yaml`` and ``protocol.yaml``; round cases break the valid round of
:mod:`tests.hostile.datafiles`. Dates that must lie ahead are computed from today, so
no case turns valid as the calendar moves on."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO
from tests.hostile.corpus import BAD, Case
from tests.hostile.datafiles import ROUND_FILE, valid_files
from tests.hostile.provenance_cases import GOOD, LEARNED_URL, _learned

GROUP = "gate"
HOSTS = "sources.yaml"


def _tomorrow() -> str:
    return (dt.date.today() + dt.timedelta(days=1)).isoformat()


def _record(text: Callable[[], str]) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        shutil.copy(REPO / HOSTS, root / HOSTS)
        shutil.copy(REPO / "protocol.yaml", root / "protocol.yaml")
        for path in (root / "papers").glob("synthetic-*.yaml"):
            path.unlink()  # their example.org links are not primary
        (root / BAD).write_text(text(), encoding="utf-8")
        return BAD

    return plant


def _sub(pattern: str, repl: str, base: str = GOOD) -> Callable[[], str]:
    def text() -> str:
        new = re.sub(pattern, repl, base, count=1, flags=re.M)
        assert new != base, pattern
        return new

    return text


_RESULT = (
    "evaluated_on:\n  - benchmark: synthetic-bench\n    metric: accuracy\n"
    "    multi_agent_native: false\n    results:\n      - metric: accuracy\n"
    "        value: '42.0%'\n        setting: the trained team\n        where: Table 2\n"
    "        source: {url}\nevaluation_source: https://arxiv.org/abs/2501.00001\n"
)
_NO_BENCHMARK = (
    "evaluated_on: []\nevaluated_on_none:\n  reason: The paper reports no benchmark.\n"
    "  url: https://arxiv.org/abs/2501.00001\n"
)


def _result_on(url: str) -> Callable[[], str]:
    return lambda: GOOD.replace(_NO_BENCHMARK, _RESULT.format(url=url))


def _own_site(url: str) -> Callable[[], str]:
    evidence = _learned(url.rstrip("/") + "/x")
    return lambda: evidence.replace("affiliation:", f"own_sites:\n  - {url}\naffiliation:")


def _vendor(affiliation: str, url: str) -> Callable[[], str]:
    text = _learned(url).replace("affiliation: Nowhere University", f"affiliation: {affiliation}")
    return lambda: text


RECORD_CASES: list[tuple[str, str, Callable[[], str]]] = [
    ("added-tomorrow", "added", lambda: _sub(r"^added: .*", f"added: {_tomorrow()}")()),
    ("added-before-cut-off", "added", _sub(r"^added: .*", "added: 2026-05-03")),
    # A copied record keeps the survey's day: a paper that appeared later cannot have it.
    (
        "added-before-its-arxiv-month",
        "added",
        _sub(r"^arxiv_id: .*", 'arxiv_id: "2611.00001"'),
    ),
    (
        "added-before-its-year",
        "added",
        _sub(
            r"^year: .*\nvenue: arXiv\narxiv_id: .*", "year: 2027\nvenue: arXiv"
        ),  # no arXiv id: the year is the bound
    ),
    (
        "added-explicit-timestamp-tail",
        "added",
        _sub(r"^added: .*", "added: !!timestamp 2026-06-031"),
    ),
    (
        "added-explicit-timestamp-range",
        "added",
        _sub(r"^added: .*", "added: !!timestamp 2026-06-03/2026-07-09"),
    ),
    ("added-day-with-tail", "added", _sub(r"^added: .*", "added: 2026-06-031")),
    ("added-range", "added", _sub(r"^added: .*", "added: 2026-06-03/2026-07-09")),
    (
        "artifact-none-date-with-tail",
        "artifacts.weights",
        _sub(r"^  weights: .*", "  weights: {none: 2026-06-031}"),
    ),
    (
        "artifact-none-range",
        "artifacts.data",
        _sub(r"^  data: .*", "  data: {none: 2026-06-03/2026-07-09}"),
    ),
    ("why-one-word", "decisions[0].why", _sub(r"^    why: .*", "    why: Fixed.")),
    ("summary-two-words", "summary", _sub(r"^summary: .*", "summary: Too short.")),
    (
        "evaluation-provisional-alone",
        "evaluation_provisional",
        lambda: GOOD + "evaluation_provisional: read from a news story\n",
    ),
    (
        "result-on-aggregator",
        "evaluated_on[0].results[0].source",
        _result_on("https://www.sciencestack.ai/paper/2501.00001"),
    ),
    (
        "result-on-news-site",
        "evaluated_on[0].results[0].source",
        _result_on("https://news.example.com/leaderboard"),
    ),
    (
        "result-on-forumless-path",
        "evaluated_on[0].results[0].source",
        _result_on("https://openreview.net/forumless/x"),
    ),
    ("own-site-sciencestack", "own_sites[0]", _own_site("https://www.sciencestack.ai/")),
    ("own-site-medium", "own_sites[0]", _own_site("https://medium.com/@someone")),
    ("own-site-medium-subdomain", "own_sites[0]", _own_site("https://someone.medium.com/")),
    ("own-site-hf-papers", "own_sites[0]", _own_site("https://huggingface.co/papers")),
    ("own-site-github-topics", "own_sites[0]", _own_site("https://github.com/topics")),
    ("own-site-arxiv-list", "own_sites[0]", _own_site("https://arxiv.org/list/cs.MA")),
    (
        "evidence-forumless-path",
        LEARNED_URL,
        lambda: _learned("https://openreview.net/forumless/x"),
    ),
    (
        "evidence-absent-path",
        LEARNED_URL,
        lambda: _learned("https://arxiv.org/abstract/2501.00001"),
    ),
    (
        "vendor-shared-chat",
        LEARNED_URL,
        _vendor("Moonshot AI", "https://www.kimi.com/share/d1abc2def3"),
    ),
    (
        "vendor-careers-page",
        LEARNED_URL,
        _vendor("OpenAI", "https://openai.com/careers/research-engineer"),
    ),
    (
        "vendor-affiliation-substring",
        LEARNED_URL,
        _vendor("OpenAI and friends", "https://openai.com/index/some-post/"),
    ),
]


def _round(edit: Callable[[str], str]) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        valid_files(root)
        path = root / ROUND_FILE
        text = path.read_text(encoding="utf-8")
        new = edit(text)
        assert new != text
        path.write_text(new, encoding="utf-8")
        return ROUND_FILE

    return plant


_BATCH = (
    "sources:\n  - name: arxiv\n    query: multi_agent_llm\n    file: ''\n"
    "    imported_on: 2026-11-23\n    identified: {identified}\n    duplicates_removed: 2\n"
    "    outside_window: {outside}\n"
)


def _batches(identified: int, outside: int) -> Callable[[str], str]:
    return lambda t: t + _BATCH.format(identified=identified, outside=outside)


def _decided(entry: str) -> Callable[[str], str]:
    return lambda t: t + f"decided:\n  '2611.00001': {entry}\n"


ROUND_CASES: list[tuple[str, str, Callable[[Path], str]]] = [
    (
        "round-include-without-record",
        "decided",
        _round(_decided("{decision: include, record: papers/no-such-paper.yaml}")),
    ),
    (
        "round-exclude-without-record",
        "decided",
        _round(_decided("{decision: exclude, reason: out_of_scope, record: exclusions/E999.yaml}")),
    ),
    (
        "round-include-into-exclusions",
        "decided",
        _round(_decided("{decision: include, record: exclusions/E000.yaml}")),
    ),
    ("round-batches-identify-more", "counts.retrieved", _round(_batches(11, 1))),
    ("round-batches-outside-fewer", "counts.outside_window", _round(_batches(10, 0))),
]


def gate_cases() -> list[Case]:
    """Every case of the one-gate rules."""
    return [Case(GROUP, n, f, _record(t)) for n, f, t in RECORD_CASES] + [
        Case(GROUP, n, f, plant) for n, f, plant in ROUND_CASES
    ]
