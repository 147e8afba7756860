"""Independent readings: other readers' codings of pooled papers, one file per reader
(``readings/<reader>.yaml``, the model: :mod:`masrl_kb.kb.model.readings_model`). The
knowledge base's own records are a reader too (``kb``), so agreement can be measured.
"""

from __future__ import annotations

from masrl_kb.kb.model.base import context, validate_file
from masrl_kb.kb.model.readings_model import KB_READER, READING_AXES, READING_FIELDS, Reader
from masrl_kb.kb.paths import Root, find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.taxonomy import load_taxonomy

__all__ = [
    "KB_READER",
    "READINGS_DIR",
    "READING_AXES",
    "READING_FIELDS",
    "Reader",
    "ReadingsError",
    "load_readers",
]
READINGS_DIR = "readings"


class ReadingsError(ValueError):
    """A readings file is malformed; ``problem`` says where (``path:line: field: message``)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def load_readers(paper_keys: set[str] | None, root: Root = None) -> list[Reader]:
    """Every reader under ``readings/``, sorted by id (the kb's own reading excluded).
    ``paper_keys``: the keys a reading may name (None: not checked, for callers that hold
    only part of the pool, such as the pool as of a date; ``validate`` checks them all)."""
    base = find_root(root)
    folder = base / READINGS_DIR
    if not folder.is_dir():
        return []
    tax, readers = load_taxonomy(base), []
    for path in sorted(p for p in folder.iterdir() if p.suffix == ".yaml"):
        ctx = context(tax, stem=path.stem, paper_keys=paper_keys)
        reader, problems = validate_file(Reader, path, f"{READINGS_DIR}/{path.name}", ctx)
        if reader is None:
            raise ReadingsError(min(problems))
        readers.append(reader)
    return readers
