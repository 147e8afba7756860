"""One problem found in a data file, printable as ``path:line: field: message``."""

from __future__ import annotations

import os
from dataclasses import dataclass

from masrl_kb.kb.text import strip_controls


@dataclass(frozen=True, order=True)
class Problem:
    """One validation problem, printable as ``path:line: field: message``."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.message}"


@dataclass
class Report:
    """What ``validate`` found. It lives here, not with the models, so that a cached report
    unpickles without importing them (a warm ``validate`` never loads pydantic)."""

    problems: list[Problem]
    papers: int
    exclusions: int

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self, root: str | os.PathLike[str] | None = None) -> str:
        """The last line of ``validate``, naming the data root checked when given."""
        where = "" if root is None else f" in {strip_controls(os.fspath(root))}"
        if self.ok:
            return f"ok: {self.papers} papers and {self.exclusions} exclusions are valid{where}"
        files = len({p.path for p in self.problems})
        return f"{len(self.problems)} problem(s) in {files} file(s){where}"


class DataFileError(ValueError):
    """A data file the knowledge base cannot run on; ``problems`` lists every reason."""

    shown = 20

    def __init__(self, problems: list[Problem], what: str = "problem(s)") -> None:
        self.problems = problems
        lines = "\n".join(str(p) for p in problems[: self.shown])
        more = len(problems) - self.shown
        tail = f"\n... and {more} more" if more > 0 else ""
        # One problem is one line: what a caller's log or the CLI's error line shows whole.
        start = " " if len(problems) == 1 else "\n"
        super().__init__(f"{len(problems)} {what}:{start}{lines}{tail}")
