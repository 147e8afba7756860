"""The controlled vocabularies, read from ``taxonomy.yaml``
(the model: :mod:`.model.taxonomy_model`)."""

from __future__ import annotations

import os
from functools import lru_cache

from masrl_kb.kb.fields import required_axes
from masrl_kb.kb.model.base import validate_bytes
from masrl_kb.kb.model.taxonomy_model import Taxonomy
from masrl_kb.kb.paths import TAXONOMY_FILE, Root, find_root
from masrl_kb.kb.problem import DataFileError, Problem
from masrl_kb.kb.yamlio import UnsafeFileError, read_regular_file

__all__ = ["TAXONOMY_FILE", "Taxonomy", "TaxonomyError", "load_taxonomy"]


class TaxonomyError(DataFileError):
    """``taxonomy.yaml`` is missing or breaks its rules; ``problems`` lists each."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems, f"problem(s) in {TAXONOMY_FILE}")


@lru_cache(maxsize=8)
def _load_cached(raw: bytes) -> Taxonomy:
    """The taxonomy these bytes hold: one model per content, whichever root it is in (a
    test session's many roots share one taxonomy.yaml)."""
    ctx = {"required_axes": required_axes()}
    tax, problems = validate_bytes(Taxonomy, raw, TAXONOMY_FILE, ctx, top="taxonomy")
    if tax is None:
        raise TaxonomyError(sorted(set(problems)))
    return tax


def load_taxonomy(root: Root = None) -> Taxonomy:
    """Load and check ``taxonomy.yaml`` from the data root; :class:`TaxonomyError` lists
    every problem when the file is missing, unsafe, malformed or breaks a rule."""
    path = find_root(root) / TAXONOMY_FILE
    if not os.path.lexists(path):
        message = f"does not exist in the data root {path.parent}"
        raise TaxonomyError([Problem(TAXONOMY_FILE, 1, "file", message)])
    try:  # bounded, and never through a link (as validate_file reads)
        raw = read_regular_file(path)
    except UnsafeFileError as err:
        raise TaxonomyError([Problem(TAXONOMY_FILE, 1, "file", str(err))]) from None
    return _load_cached(raw)
