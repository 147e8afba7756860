"""Hostile inputs for the provenance rule: look-alike and disguised source URLs, and a
broken or planted ``sources.yaml``. Each case runs ``validate`` on a small root that
carries the real host data (see :func:`tests.hostile.corpus.run_case`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GOOD_PAPER, REPO
from tests.hostile.corpus import BAD, SECRET, Case

GROUP = "provenance"
HOSTS = "sources.yaml"
_REASON = (
    "evaluated_on_none:\n"
    "  reason: The paper reports no benchmark.\n"
    "  url: https://arxiv.org/abs/2501.00001\n"
)
GOOD = GOOD_PAPER + _REASON
LEARNED_URL = "decisions[0].evidence.url"

# (name, evidence URL): none of these may count as a primary source.
EVIDENCE_URLS = (
    ("lookalike-suffix", "https://arxiv.org.evil.com/abs/2501.00001"),
    ("userinfo", "https://arxiv.org@evil.com/abs/2501.00001"),
    ("userinfo-password", "https://arxiv.org:x@evil.com/abs/2501.00001"),
    ("backslash-userinfo", "https://evil.com\\\\@arxiv.org/abs/2501.00001"),
    ("cyrillic-a", "https://\u0430rxiv.org/abs/2501.00001"),
    ("greek-omicron", "https://openrevi\u03bfw.net/forum?id=x"),
    ("fullwidth-dot", "https://arxiv\uff0eorg/abs/2501.00001"),
    ("punycode", "https://xn--rxiv-53d.org/abs/2501.00001"),
    ("port", "https://arxiv.org:8443/abs/2501.00001"),
    ("trailing-dot", "https://arxiv.org./abs/2501.00001"),
    ("ftp", "ftp://arxiv.org/abs/2501.00001"),
    ("javascript", "javascript:alert(1)//arxiv.org/abs/2501.00001"),
    ("not-the-paper", "https://arxiv.org/list/cs.MA/new"),
    ("aggregator", "https://www.sciencestack.ai/paper/2501.00001"),
    ("mirror", "https://hf-mirror.com/papers/2501.00001"),
    ("fork", "https://github.com/someone-else/repo/blob/main/x.py"),
    ("dot-segments", "https://example.org/code/../../evil/x"),
    ("encoded-dot-segments", "https://example.org/code/%2e%2e/evil"),
    ("pages-lookalike", "https://example.org.github.io/x"),
    ("long-host", "https://" + "a" * 300 + ".com/x"),
)


def _plant(text: str, named: str = BAD, after: Callable[[Path], None] | None = None):
    def plant(root: Path) -> str:
        shutil.copy(REPO / HOSTS, root / HOSTS)
        for path in (root / "papers").glob("synthetic-*.yaml"):
            path.unlink()  # their example.org links are not primary
        (root / BAD).write_text(text, encoding="utf-8")
        if after is not None:
            after(root)
        return named

    return plant


def _learned(url: str) -> str:
    quoted = url.replace("'", "''")
    return GOOD.replace("    learned: false\n", "    learned: true\n").replace(
        "    why: A fixed rule picks the next agent.\n",
        "    why: A fixed rule picks the next agent.\n    mechanism: explicit\n"
        f"    evidence:\n      source: secondary\n      where: Section 3\n      url: '{quoted}'\n",
    )


def _record_cases() -> list[Case]:
    cases = [Case(GROUP, f"url-{n}", LEARNED_URL, _plant(_learned(u))) for n, u in EVIDENCE_URLS]
    paper_label = _learned("https://www.sciencestack.ai/paper/1").replace(
        "source: secondary", "source: paper"
    )
    strict = GOOD.replace(
        "credit_strict: false\n",
        "credit_strict: true\ncredit_mechanism: shaping\ncredit_evidence:\n"
        "  source: secondary\n  where: a review\n  url: https://paperhub.cn/paper/1\n",
    )
    fact = GOOD + "sources:\n  - field: authors\n    url: https://granhotel.example.com/pulse/x\n"
    blank = _learned("https://www.sciencestack.ai/paper/1").replace(
        "      where: Section 3\n", "      where: Section 3\n      provisional: ''\n"
    )
    disguised_own = _learned("https://evil.com/abs/1").replace(
        "affiliation:", "own_sites:\n  - https://arxiv.org@evil.com/\naffiliation:"
    )
    forged_vendor = _learned("https://www.anthropic.com.evil.com/x").replace(
        "affiliation: Nowhere University", "affiliation: Anthropic"
    )
    news_evaluation = GOOD.replace(
        "evaluated_on: []\nevaluated_on_none:\n  reason: The paper reports no benchmark.\n"
        "  url: https://arxiv.org/abs/2501.00001\n",
        "evaluated_on:\n  - {benchmark: synthetic-bench, metric: accuracy,"
        " multi_agent_native: false}\nevaluation_source: https://news.example.com/a\n",
    )
    return cases + [
        Case(GROUP, "own-site-with-user-info", LEARNED_URL, _plant(disguised_own)),
        Case(GROUP, "vendor-lookalike", LEARNED_URL, _plant(forged_vendor)),
        Case(GROUP, "evaluation-source-on-news-site", "evaluation_source", _plant(news_evaluation)),
        Case(
            GROUP, "label-paper-on-aggregator", "decisions[0].evidence.source", _plant(paper_label)
        ),
        Case(GROUP, "strict-credit-on-review-site", "credit_evidence.url", _plant(strict)),
        Case(GROUP, "corrected-fact-on-unrelated-host", "sources[0].url", _plant(fact)),
        Case(GROUP, "empty-provisional", "decisions[0].evidence.provisional", _plant(blank)),
        Case(GROUP, "empty-evaluated-on-unexplained", "evaluated_on_none", _plant(GOOD_PAPER)),
    ]


def _hosts_text(edit: Callable[[str], str]) -> Callable[[Path], None]:
    def after(root: Path) -> None:
        path = root / HOSTS
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")

    return after


def _hosts_link(target: str) -> Callable[[Path], None]:
    def after(root: Path) -> None:
        (root / HOSTS).unlink()
        os.symlink(target, root / HOSTS)

    return after


def _hosts_fifo(root: Path) -> None:
    (root / HOSTS).unlink()
    os.mkfifo(root / HOSTS)


def _hosts_huge(root: Path) -> None:
    with open(root / HOSTS, "wb") as fh:
        fh.write(b"version: 1\npapers: []\n# " + b"x" * (2 << 20) + b"\n")


def _host_file_cases() -> list[Case]:
    edits = (
        ("symlink-to-secret", "file", _hosts_link(SECRET)),
        ("symlink-dangling", "file", _hosts_link("/nonexistent/sources.yaml")),
        ("fifo", "file", _hosts_fifo),
        ("oversized", "file", _hosts_huge),
        (
            "python-tag",
            "version",
            _hosts_text(
                lambda t: t.replace(
                    "version: 1", "version: !!python/object/apply:os.system ['echo pwned']"
                )
            ),
        ),
        ("a-list", "sources", _hosts_text(lambda t: "- arxiv.org\n")),
        ("empty", "sources", _hosts_text(lambda t: "")),
        (
            "wildcard-host",
            "papers[0].hosts",
            _hosts_text(lambda t: t.replace("hosts: [arxiv.org,", "hosts: ['*',")),
        ),
        (
            "control-char-host",
            "papers[0].hosts",
            _hosts_text(lambda t: t.replace("hosts: [arxiv.org,", 'hosts: ["arxiv.org\\e[31m",')),
        ),
        (
            "unicode-host",
            "papers[0].hosts",
            _hosts_text(lambda t: t.replace("hosts: [arxiv.org,", "hosts: [\u0430rxiv.org,")),
        ),
        (
            "hosts-not-a-list",
            "papers[1].hosts",
            _hosts_text(lambda t: t.replace("hosts: [openreview.net]", "hosts: openreview.net")),
        ),
        ("repeated-key", "version", _hosts_text(lambda t: t + "version: 1\n")),
        ("unknown-section", "everything", _hosts_text(lambda t: t + "everything: primary\n")),
    )
    return [
        Case(GROUP, f"hosts-{name}", field, _plant(GOOD, HOSTS, after))
        for name, field, after in edits
    ]


def provenance_cases() -> list[Case]:
    """Every hostile provenance case."""
    return _record_cases() + _host_file_cases()
