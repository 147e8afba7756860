"""Pages whose size would grow with the pool stay bounded (issue 14)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.query.frames import load_papers, value_counts
from masrl_kb.site.context import load_context
from masrl_kb.site.pages import render_pages
from masrl_kb.site.taxonomy_pages import LISTED_PER_VALUE

AXES = ("category", "topology", "scenario")


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[pd.DataFrame, dict[str, str]]:
    root = write_synthetic_root(tmp_path_factory.mktemp("kb") / "kb", 8 * LISTED_PER_VALUE, 5)
    ctx = load_context(root)  # the axis pages alone, not the paper and cell pages after them
    names = [f"taxonomy/{axis}/index.md" for axis in AXES]
    return load_papers(root), render_pages(ctx, names)


def _sections(text: str) -> dict[str, str]:
    """An axis page's text per value heading ({#v-...} anchor)."""
    parts = re.split(r"^## .*\{#(v-[^}]+)\}$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("axis", AXES)
def test_axis_pages_list_at_most_the_cap_and_count_the_rest(big, axis) -> None:
    papers, files = big
    sections = _sections(files[f"taxonomy/{axis}/index.md"])
    counts = value_counts(axis, papers=papers)
    assert counts.max() > LISTED_PER_VALUE  # the cap is exercised
    for value, n in counts.items():
        section = sections[f"v-{value}"]
        listed = re.findall(r'<li data-key="([^"]+)"', section)
        assert len(listed) == min(n, LISTED_PER_VALUE), value
        assert set(listed) <= set(papers.index[papers[axis] == value])
        more = re.search(r'data-kb-more="(\d+)"', section)
        assert (int(more.group(1)) if more else 0) == max(n - LISTED_PER_VALUE, 0), value
