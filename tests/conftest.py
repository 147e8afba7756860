"""Shared fixtures: a small valid data root to break one rule at a time."""

from __future__ import annotations

import functools
import gc
import importlib.util
import os
from pathlib import Path

import pytest

from masrl_kb.kb.synthetic import write_synthetic_root

REPO = Path(__file__).resolve().parent.parent

# asreview is optional and heavy: without it its test file is left out rather than
# skipped, and .ci/run runs that file in an environment that has it.
collect_ignore = [] if importlib.util.find_spec("asreview") else ["test_screening_asreview.py"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all",
        action="store_true",
        help="run the tests marked slow too (wheel, browser, ASReview), as CI does",
    )


def pytest_configure(config: pytest.Config) -> None:
    # A plain local run leaves the slow tests out so that an edit is checked in a
    # couple of minutes; an explicit -m (say -m slow) or --all decides otherwise.
    if not config.option.markexpr and not config.getoption("--all"):
        config.option.markexpr = "not slow"


_MODULE: list[object] = [None]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """At each test module's first test, what is still alive (the session's sites, their
    parsed pages, the caches) moves out of the garbage collector's view: a full collection
    walked those millions of objects again and again, seconds a session. Garbage is
    collected first, so what is frozen is alive; what dies later without a cycle is still
    freed."""
    module = getattr(item, "module", None)
    if module is not _MODULE[0]:
        _MODULE[0] = module
        gc.collect()
        gc.freeze()


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.option.markexpr == "not slow":
        return "slow tests left out (wheel, browser, ASReview); --all runs them"
    return None


# A valid paper record; tests replace one line at a time. Line numbers matter:
# the expected messages name them.
GOOD_PAPER = """\
key: bad
title: A Deliberately Broken Record
authors:
  - Doe, Jane
year: 2025
venue: arXiv
arxiv_id: "2501.00001"
url: https://arxiv.org/abs/2501.00001
affiliation: Nowhere University
category: rl_method
is_rl: "yes"
reward_type: shared
credit_unit: agent
topology: centralized
scenario: general
pool_role: core
verified: "yes"
credit_strict: false
decisions:
  - id: O2
    learned: false
    why: A fixed rule picks the next agent.
added: 2026-05-04
summary: A record used by the tests.
citation:
  bibtex_key: bad2025
  entry_type: article
  journal: arXiv preprint arXiv:2501.00001
artifacts:
  code: "https://example.org/code"
  weights: {none: 2026-11-30}
  data: {none: 2026-11-30}
  traces: {none: 2026-11-30}
  source: "https://arxiv.org/abs/2501.00001"
evaluated_on: []
"""

GOOD_EXCLUSION = """\
id: E900
title: A Screened Record That Was Left Out
identifier: arXiv:2502.00002
url: https://arxiv.org/abs/2502.00002
source: arxiv
query_family: orchestration
screened: 2026-04-26
stage: abstract_screen
reason: out_of_scope
note: Left out for the tests.
"""


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The session's cache entries go to a folder of its own, not the user's."""
    os.environ["MASRL_KB_CACHE_DIR"] = str(tmp_path_factory.mktemp("user-cache"))


@pytest.fixture
def mini_root(tmp_path: Path) -> Path:
    """A data root with three valid synthetic papers and two exclusions."""
    return write_synthetic_root(tmp_path / "kb", papers=3, exclusions=2)


@functools.cache
def allowed(axis: str) -> str:
    """An axis's values as a message lists them, read from the repository's taxonomy.yaml:
    an expected message written with it still holds when the axis gains a value."""
    from masrl_kb.kb.taxonomy import load_taxonomy
    from masrl_kb.kb.text import capped_list

    return capped_list(load_taxonomy(REPO)[axis].ids)


def run_cli(*argv: str) -> int:
    """Run the real ``masrl-kb`` command line in-process; returns the exit code."""
    from masrl_kb.cli import main

    return main(list(argv))


# ---------------------------------------------------------------- the real site, once a session


@pytest.fixture(scope="session")
def real_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's site, built once per session (``mkdocs build --strict``) and shared
    by every site test module (under pytest-xdist: once per worker). Read it, never write."""
    from masrl_kb.kb.paths import find_root
    from masrl_kb.site import build_site

    target = tmp_path_factory.mktemp("real-site") / "site"
    code = build_site(find_root(), strict=True, site_dir=target)
    assert code == 0, f"mkdocs build --strict exited {code}"
    return target


@pytest.fixture(scope="session")
def real_site_files() -> dict[str, str]:
    """Every generated file of the repository's site, rendered in memory once per session
    (``site_files()``, what the MkDocs hooks hand MkDocs). Read it, never change it."""
    from masrl_kb.kb.paths import find_root
    from masrl_kb.site import site_files

    return site_files(find_root())


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site built once per session from a synthetic root whose first records carry HTML
    and Markdown payloads (``tests/test_site_support.py``)."""
    from tests.test_site_support import build_hostile_site

    return build_hostile_site(tmp_path_factory)
