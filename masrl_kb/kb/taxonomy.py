"""The controlled vocabularies, read from ``taxonomy.yaml``
(the model: :mod:`.model.taxonomy_model`)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from masrl_kb.kb.fields import required_axes
from masrl_kb.kb.model.base import validate_file
from masrl_kb.kb.model.taxonomy_model import Taxonomy
from masrl_kb.kb.paths import TAXONOMY_FILE, Root, find_root
from masrl_kb.kb.problem import DataFileError, Problem

__all__ = ["TAXONOMY_FILE", "Taxonomy", "TaxonomyError", "load_taxonomy"]


class TaxonomyError(DataFileError):
    """``taxonomy.yaml`` is missing or breaks its rules; ``problems`` lists each."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems, f"problem(s) in {TAXONOMY_FILE}")


@lru_cache(maxsize=8)
def _load_cached(path: Path, mtime_ns: int, size: int) -> Taxonomy:
    ctx = {"required_axes": required_axes()}
    tax, problems = validate_file(Taxonomy, path, TAXONOMY_FILE, ctx, top="taxonomy")
    if tax is None:
        raise TaxonomyError(sorted(set(problems)))
    return tax


def load_taxonomy(root: Root = None) -> Taxonomy:
    """Load and check ``taxonomy.yaml`` from the data root; :class:`TaxonomyError` lists
    every problem when the file is missing, unsafe, malformed or breaks a rule."""
    path = find_root(root) / TAXONOMY_FILE
    try:
        info = os.lstat(path)
    except OSError:
        message = f"does not exist in the data root {path.parent}"
        raise TaxonomyError([Problem(TAXONOMY_FILE, 1, "file", message)]) from None
    return _load_cached(path.absolute(), info.st_mtime_ns, info.st_size)
