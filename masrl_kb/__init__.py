"""masrl-kb: the knowledge base of RL for LLM-based multi-agent systems.

>>> import masrl_kb
>>> papers = masrl_kb.load_papers()
>>> masrl_kb.crosstab("reward_family", "credit_unit", papers=papers)

The package is laid out as the pipeline it runs:

- ``masrl_kb.kb``: read and check the records and the taxonomy;
- ``masrl_kb.query``: pandas frames, the safe query language, claims;
- ``masrl_kb.site``: the website generated from the queries;
- ``masrl_kb.contrib``: exchange with the outside (arXiv, exports, diff, links);
- ``masrl_kb.traces``: the orchestration-trace toolkit (stands apart);
- ``masrl_kb.cli``: the command line.

The public names below are imported on first use, so importing the package
(and running ``masrl-kb --help``) does not load pandas.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

# public name -> module that defines it
_EXPORTS = {
    "InvalidRecordsError": "masrl_kb.query.pool",
    "QueryError": "masrl_kb.query.lang",
    "UnknownNameError": "masrl_kb.query.lang",
    "cell_papers": "masrl_kb.query.axes",
    "crosstab": "masrl_kb.query.axes",
    "load_drafts": "masrl_kb.query.pool",
    "load_exclusions": "masrl_kb.query.pool",
    "load_papers": "masrl_kb.query.pool",
    "load_pool": "masrl_kb.query.pool",
    "select": "masrl_kb.query.axes",
    "tag_matrix": "masrl_kb.query.axes",
    "value_counts": "masrl_kb.query.axes",
    "evaluations": "masrl_kb.query.evaluation_table",
    "results": "masrl_kb.query.evaluation_table",
    "decisions": "masrl_kb.query.decision_table",
    "benchmark_matrix": "masrl_kb.query.evaluation_table",
    "authors": "masrl_kb.query.authors",
    "coauthors": "masrl_kb.query.authors",
    "claim_views": "masrl_kb.query.views",
    "moved_cells": "masrl_kb.query.views",
    "moved_claims": "masrl_kb.query.views",
    "new_papers": "masrl_kb.query.views",
    "pool_coverage": "masrl_kb.query.views",
    "pool_searched": "masrl_kb.query.views",
    "survey_baseline": "masrl_kb.query.views",
    "survey_view": "masrl_kb.query.views",
    "agreement": "masrl_kb.query.agreement",
    "disagreements": "masrl_kb.query.agreement",
    "readings": "masrl_kb.query.agreement",
    "evaluate_claims": "masrl_kb.query.claims",
    "load_claims": "masrl_kb.query.claims",
    "load_taxonomy": "masrl_kb.kb.taxonomy",
    "validate": "masrl_kb.query.datafiles",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.2.0"


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` that import each name of ``exports``
    (name -> module defining it) on first use and keep it in the package."""
    namespace = sys.modules[package].__dict__

    def get(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module), name)
        return value

    def listing() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return get, listing


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
