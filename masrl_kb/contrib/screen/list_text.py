"""What every reader of an exported candidate list shares: the bounded UTF-8 text of the file
(no link, no NUL byte, LF line endings), its ``path:line: field: message`` problems raised
at once as :class:`ImportFileError`, and the parsers' own warnings, capped and cleaned.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from masrl_kb.contrib.outside_text import clean_text

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_WARNINGS = 5  # a parser's own warnings shown per file; the rest are counted


class ImportFileError(ValueError):
    """The file is malformed: ``problems`` are ``path:line: field: message`` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)


class Problems:
    """The ``path:line: field: message`` lines of one file, each terminal-safe, raised
    at once as ``error``."""

    def __init__(self, name: str, error: type[ValueError] = ImportFileError) -> None:
        self.name = name
        self.error = error
        self.lines: list[str] = []

    def add(self, line: int, field: str, message: str) -> None:
        self.lines.append(clean_text(f"{self.name}:{line}: {field}: {message}", 500))

    def raise_any(self) -> None:
        if self.lines:
            raise self.error(self.lines)

    def fail(self, line: int, field: str, message: str) -> NoReturn:
        self.add(line, field, message)
        raise self.error(self.lines)


def shown_name(path: Path | str) -> str:
    """A file name as printed and stored: one line, control and bidi characters gone."""
    return clean_text(str(path), 300) or "?"


class LibraryWarnings:
    """A parser's own warnings (bibtexparser logs one per bad block, with the block's bytes),
    kept instead of printed: the first :data:`MAX_WARNINGS` cleaned, the rest counted."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.more = 0

    def add(self, message: object) -> None:
        if len(self.kept) < MAX_WARNINGS:
            self.kept.append(clean_text(str(message), 300))
        else:
            self.more += 1

    def lines(self, name: str) -> list[str]:
        more = [f"{name}: and {self.more} more warning(s) of the parser"] if self.more else []
        return [f"{name}: {w}" for w in self.kept] + more

    @contextlib.contextmanager
    def catching(self, *loggers: str) -> Iterator[None]:
        keep = self

        class _Keep(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                keep.add(record.getMessage())

        handler = _Keep(logging.WARNING)
        found = [logging.getLogger(n) for n in loggers]
        old = [(lg.propagate, lg.level) for lg in found]
        for lg in found:
            lg.addHandler(handler)
            lg.propagate = False  # nothing reaches logging's last-resort printer
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.showwarning = lambda message, *args, **kw: keep.add(message)
                yield
        finally:
            for lg, (propagate, _level) in zip(found, old, strict=True):
                lg.removeHandler(handler)
                lg.propagate = propagate


def read_text(path: Path, problems: Problems, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A bounded UTF-8 text file with LF line endings (no link, no NUL byte)."""
    if path.is_symlink() or not path.is_file():
        problems.fail(1, "file", "no such file (symbolic links and special files are refused)")
    if path.stat().st_size > max_bytes:
        problems.fail(1, "file", f"larger than {max_bytes} bytes")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        problems.fail(path.read_bytes()[: err.start].count(b"\n") + 1, "file", "not UTF-8 text")
    if "\x00" in text:
        problems.fail(text[: text.index("\x00")].count("\n") + 1, "file", "holds a NUL byte")
    # CR-only files (old Mac exports) would otherwise read as one long line.
    return text.replace("\r\n", "\n").replace("\r", "\n")
