"""``masrl-kb diff <git-ref>``: what a change does to the knowledge base, as Markdown.

Compares the data files at a git ref (extracted with ``git archive``) with the
working tree: papers and exclusions added, removed or changed (tags old -> new),
and, when both sides validate, the cross-tab cells and claims whose values move.
CI posts it as each pull request's job summary. The ref's files come from
`masrl_kb/contrib/git_ref.py`, each side and its changes from
`masrl_kb/contrib/diff_sides.py`, the Markdown from `masrl_kb/contrib/diff_report.py`;
the names this module offered are re-exported.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.contrib.diff_report import SHOWN_PROBLEMS, render
from masrl_kb.contrib.diff_sides import (
    CROSSTABS,
    JUDGEMENT_FIELDS,
    Side,
    cell_changes,
    claim_changes,
    load_side,
    paper_changes,
)
from masrl_kb.contrib.git_ref import DATA_PATHS, DiffError, extract_ref
from masrl_kb.kb.paths import find_root

__all__ = [  # what this module has always offered, wherever it now lives
    "CROSSTABS",
    "DATA_PATHS",
    "JUDGEMENT_FIELDS",
    "SHOWN_PROBLEMS",
    "DiffError",
    "DiffResult",
    "Side",
    "cell_changes",
    "claim_changes",
    "diff_against",
    "extract_ref",
    "load_side",
    "paper_changes",
    "render",
]


@dataclass
class DiffResult:
    """The report and whether the working tree side is valid."""

    markdown: str
    old: Side
    new: Side


def diff_against(ref: str, root: str | os.PathLike[str] | None = None) -> DiffResult:
    """Compare the data root's working tree with the same files at ``ref``."""
    base = find_root(root).resolve()
    with tempfile.TemporaryDirectory(prefix="masrl-kb-diff-") as tmp:
        ref_root = Path(tmp)
        extract_ref(base, ref, ref_root)
        old = load_side(ref_root, f"`{ref}`", claims_root=base)
        new = load_side(base, "the working tree")
        return DiffResult(render(old, new, ref), old, new)
