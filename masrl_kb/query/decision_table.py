"""The orchestration decisions as a long table, beside ``evaluations()`` and ``results()``.

>>> import masrl_kb
>>> papers = masrl_kb.load_papers()
>>> table = masrl_kb.decisions(papers=papers)     # one row per (paper, decision)
>>> table[table["learned"]].groupby("decision")["key"].count()
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from masrl_kb.query.args import checked
from masrl_kb.query.axes import require_columns
from masrl_kb.query.pool import PathLike, load_papers

DECISION_COLUMNS = [
    "key",
    "decision",
    "learned",
    "mechanism",
    "source",
    "where",
    "evidence_url",
    "provisional",
    "why",
]


def _row(key: str, d: Mapping[str, Any]) -> list[object]:
    evidence = d.get("evidence")
    ev: Mapping[str, Any] = evidence if isinstance(evidence, Mapping) else {}
    return [
        key,
        d["id"],
        bool(d["learned"]),
        d.get("mechanism"),
        ev.get("source"),
        ev.get("where"),
        ev.get("url"),
        ev.get("provisional"),
        d["why"],
    ]


@checked(papers=("decisions",))
def decisions(papers: pd.DataFrame | None = None, root: PathLike = None) -> pd.DataFrame:
    """One row per (paper ``key``, ``decision`` id) a paper touches, in record order:
    ``learned`` (an RL update acts on it), its ``mechanism`` (explicit or implicit, learned
    only), the evidence's ``source`` label, ``where`` and ``evidence_url``, ``provisional``
    (why no primary page is cited yet, else None) and the one-line ``why``. A decision a
    paper does not touch has no row (its decision column reads "absent")."""
    papers = load_papers(root) if papers is None else papers
    require_columns(papers, ["decisions"], "decisions")
    rows = [
        _row(str(key), d)
        for key, listed in papers["decisions"].items()
        for d in (listed if isinstance(listed, list) else [])
    ]
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)
