"""Writing one new record for ``add`` and ``exclude``: the arXiv metadata cleaned and checked,
a paper already pooled or excluded refused, the record checked against the record rules
and written atomically (never over a file), and what was written told to the contributor.
"""

from __future__ import annotations

import re
import signal
import textwrap
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from masrl_kb.contrib.outside_text import MAX_ABSTRACT, MAX_TITLE, clean_names, clean_text
from masrl_kb.contrib.sources.arxiv import ArxivPaper
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.crossrules import identities, normalise_url
from masrl_kb.kb.editor_schema import schema_comment
from masrl_kb.kb.fields import EXCLUSION_FIELDS, PAPER_FIELDS, PLACEHOLDER
from masrl_kb.kb.record_checks import record_text_problems
from masrl_kb.kb.records import RecordSet
from masrl_kb.kb.synthetic import dump_record
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten, title_skeleton

# arXiv category names: archive[.subject], e.g. cs.AI, math-ph, astro-ph.GA.
_CATEGORY_RE = re.compile(r"^[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?$")


class ArxivImportError(ValueError):
    """A user-facing, one-line reason why ``add`` or ``exclude`` wrote nothing."""


class AlreadyRecorded(ArxivImportError):
    """The paper is already pooled or excluded; ``matches`` says where."""

    def __init__(self, matches: list[str]) -> None:
        self.matches = matches
        super().__init__("; ".join(matches))


def checked_paper(paper: ArxivPaper) -> ArxivPaper:
    """A paper's text made safe again (it may come from a round's ``entries.json``),
    its primary category checked."""
    category = clean_text(paper.primary_category)
    if category and not _CATEGORY_RE.match(category):
        raise ArxivImportError(f"arXiv returned a malformed primary category {shorten(category)}")
    return replace(
        paper,
        title=clean_text(paper.title, MAX_TITLE),
        authors=tuple(clean_names(paper.authors, None)),
        primary_category=category,
        abstract=clean_text(paper.abstract, MAX_ABSTRACT),
    )


def refuse_existing(
    records: RecordSet,
    arxiv_id: str | None = None,
    title: str | None = None,
    url: str | None = None,
) -> None:
    """Raise :class:`AlreadyRecorded` when a pooled or excluded record has the same
    arXiv id (in any field naming one), normalised URL or normalised title."""
    wanted = {
        ("arXiv id", arxiv_id),
        ("URL", normalise_url(url) if url else None),
        ("title", title_skeleton(title) if title else None),
    }
    found = []
    for rec in records.papers + records.exclusions:
        match = next(((n, w) for n, w, v in identities(rec) if (w, v) in wanted), None)
        if match is not None:
            name, what = match
            data = rec.data if isinstance(rec.data, dict) else {}
            shown = {"arXiv id": f"arXiv id {arxiv_id}", "URL": f"the URL {url}"}.get(
                what, f"the same title {data.get('title')!r}"
            )
            state = "pooled" if rec.kind == "paper" else "excluded"
            found.append(f"already {state}: {rec.rel}:{rec.line(name)} has {shown}")
    if found:
        raise AlreadyRecorded(found)


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into SystemExit while writing, so ``finally`` still runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _exit(signum: int, frame: object) -> None:  # noqa: ARG001
        raise SystemExit(128 + signum)

    old = {sig: signal.signal(sig, _exit) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def write_new_file(path: Path, text: str) -> None:
    """Write a new file atomically; never overwrite; no partial or temporary file is
    left by an error, Ctrl-C or SIGTERM/SIGHUP (an exit for the duration of the write).
    The temporary file is a dot-name, which the record readers skip."""
    if path.exists():
        raise ArxivImportError(f"{path} already exists: refusing to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    with terminate_as_exit():
        write_atomic(path, text)


def check_record_text(kind: str, rel: str, text: str, tax: Taxonomy) -> None:
    """Refuse a would-be record that breaks a record rule (placeholders aside)."""
    problems = record_text_problems(kind, rel, text, tax)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ArxivImportError(
            f"refusing to write a record that fails validation: {problems[0]}{more}"
        )


@dataclass
class Written:
    """What ``add`` or ``exclude`` wrote."""

    path: Path
    record: dict[str, Any]
    paper: ArxivPaper | None
    unfinished: list[str]


def write_record(
    records: RecordSet, kind: str, rel: str, facts: dict[str, Any], paper: ArxivPaper | None = None
) -> Written:
    """Check and write a new record: ``facts`` in field order, every other required
    field (or one given as None or "") the placeholder; ``comments`` head the file."""
    fields = PAPER_FIELDS if kind == "paper" else EXCLUSION_FIELDS
    given = {n: v for n, v in facts.items() if v is not None and v != ""}
    record = {
        f.name: given.get(f.name, PLACEHOLDER) for f in fields if f.name in given or f.required
    }
    comments = (f"# {c}" for c in given.get("comments", ()))
    text = "\n".join((schema_comment(kind), *comments, dump_record(record)))
    check_record_text(kind, rel, text, load_taxonomy(records.root))
    write_new_file(records.root / rel, text)
    unfinished = [name for name, value in record.items() if value == PLACEHOLDER]
    return Written(records.root / rel, record, paper, unfinished)


def describe_written(written: Written, root: Path, out: Callable[[str], None] = print) -> None:
    """Tell the contributor what was written and what is left to do."""
    shown = written.path.relative_to(root) if written.path.is_relative_to(root) else written.path
    out(f"wrote {shown.as_posix()}")
    paper = written.paper
    if paper is not None:
        out(f"  title: {paper.title}")
        out(f"  arXiv {paper.arxiv_id}, primary category {paper.primary_category or 'unknown'}")
        out("")
        out("Abstract (for tagging; it is not stored in the record):")
        out(textwrap.fill(paper.abstract, width=88, initial_indent="  ", subsequent_indent="  "))
        out("")
    if written.unfinished:
        out(f"Unfinished ({PLACEHOLDER}): {', '.join(written.unfinished)}")
        out(
            "Replace each placeholder (see taxonomy.yaml for tag values), then run "
            "`masrl-kb validate`."
        )
