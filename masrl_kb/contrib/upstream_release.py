"""Reading a release of the survey's CSV files for ``import-upstream``: a regular file of
bounded size with exactly the survey's columns, guarded cells read as written, LaTeX
accents in names turned into Unicode; :class:`UpstreamError` names file, line and field.
"""

from __future__ import annotations

import csv
import io
import os

from masrl_kb.contrib.export.csv_io import unguard_cell
from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.kb.text import shorten_name
from masrl_kb.kb.yamlio import UnsafeFileError, read_regular_file

MAX_CSV_BYTES = 20 * 1024 * 1024
MAX_LINE = 400  # characters of one printed line


class UpstreamError(ValueError):
    """A release is missing or malformed, or applying it would break a rule (``problems``:
    one ``path:line: field: message`` line each)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = [clean_text(p, MAX_LINE) for p in problems or []]
        super().__init__(clean_text(message, MAX_LINE))


def read_release(path: str | os.PathLike[str], columns: tuple[str, ...]) -> list[tuple[int, dict]]:
    """(line, row) pairs of a release CSV with exactly ``columns``: a regular file of
    bounded size (no link, FIFO or device), guarded cells (``'=...``) read as written."""
    file = str(path)
    try:
        raw = read_regular_file(path, MAX_CSV_BYTES)
    except UnsafeFileError as err:
        raise UpstreamError(f"{file}:1: file: {err}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UpstreamError(f"{file}:1: file: not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    try:
        header = tuple(reader.fieldnames or ())
        if header != columns:
            raise UpstreamError(
                f"{file}:1: header: expected the survey's columns {','.join(columns)}; "
                f"got {shorten_name(','.join(header) or 'nothing')}"
            )
        for row in reader:
            if None in row:
                raise UpstreamError(f"{file}:{reader.line_num}: row: more cells than columns")
            cells = {k: unguard_cell((v or "").strip()) for k, v in row.items()}
            rows.append((reader.line_num, cells))
    except csv.Error as err:
        raise UpstreamError(f"{file}:{reader.line_num}: row: {err}") from None
    return rows


def plain_name(text: str) -> str:
    """A name with LaTeX accents (``Gr\\'{e}goire``) turned into Unicode."""
    if "\\" not in text:
        return text
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text().latex_to_text(text)
