"""``masrl-kb add`` and ``masrl-kb exclude``: new records from an arXiv id.

``add`` fetches a paper's facts from the arXiv API (title, every author, year,
id, URL, primary category) and writes ``papers/<key>.yaml`` with those facts
filled in and every judgement field (tags, decisions, summary, affiliation,
which the API does not know) set to the ``TODO`` placeholder, which
``masrl-kb validate`` reports as unfinished. ``exclude`` writes an exclusion
record the same way.

Both refuse to write when the record is already pooled or excluded (same
arXiv id, URL or normalised title), never overwrite a file, and write
atomically, so a failure leaves no file behind. ``MASRL_KB_ARXIV_URL``
replaces the API endpoint (the tests point it at a loopback server).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import textwrap
import threading
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from masrl_kb.contrib.sources.arxiv import (
    ArxivPaper,
    arxiv_or_none,
    fetch_paper,
    parse_arxiv_id,
)
from masrl_kb.contrib.text import MAX_ABSTRACT, MAX_AUTHOR, MAX_TITLE, clean_text
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.crossrules import arxiv_ids_of, normalise_title, normalise_url
from masrl_kb.kb.fields import (
    EXCLUSION_FIELDS,
    EXCLUSION_ID_PATTERN,
    KEY_PATTERN,
    PAPER_FIELDS,
    PLACEHOLDER,
    Field,
)
from masrl_kb.kb.records import EXCLUSIONS_DIR, PAPERS_DIR, RECORD_SUFFIX, RecordSet, read_records
from masrl_kb.kb.rules import is_http_url
from masrl_kb.kb.schema import schema_comment
from masrl_kb.kb.synthetic import dump_record
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten
from masrl_kb.kb.validate import record_text_problems

ARXIV_VENUE = "arXiv"

_KEY_RE = re.compile(KEY_PATTERN)
_EXCLUSION_RE = re.compile(EXCLUSION_ID_PATTERN)
# arXiv category names: archive[.subject], e.g. cs.AI, math-ph, astro-ph.GA.
_CATEGORY_RE = re.compile(r"^[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?$")
# Words that make a poor key: a key is the title's name (before ':') or its
# first meaningful word.
_STOPWORDS = frozenset(
    """a an and are as at be beyond by can do does for from how in into is it its
    not of on or our the their through to toward towards via we what when where
    which who why with without you your""".split()
)
# Default `source` of a non-arXiv exclusion, by host; used only when the id
# exists in taxonomy.yaml's exclusion_source axis.
_SOURCE_BY_HOST = {
    "openreview.net": "openreview",
    "aclanthology.org": "acl_anthology",
    "github.com": "github_project_page",
}
_NAME_PARTICLES = frozenset("da de del della der di dos du la le van von den ter".split())
_NAME_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv".split())
_GROUP_WORDS = frozenset("collaboration consortium team group".split())


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
        authors=tuple(a for a in (clean_text(x, MAX_AUTHOR) for x in paper.authors) if a),
        primary_category=category,
        abstract=clean_text(paper.abstract, MAX_ABSTRACT),
    )


# ---------------------------------------------------------------- names and keys


def family_given(name: str) -> str:
    """An arXiv author name ('Joshua B. Tenenbaum') as 'Tenenbaum, Joshua B.'.

    Lower-case particles join the family name ('van Beethoven, Ludwig'), a
    suffix follows it ('King, Jr., Martin'), and one-word names or group
    names ('OpenAI', 'H1 Collaboration') are kept as they are.
    """
    name = " ".join(name.split())
    words = name.split(" ")
    if "," in name or len(words) < 2 or words[-1].lower() in _GROUP_WORDS:
        return name
    suffix = ""
    if words[-1].lower().rstrip(",") in _NAME_SUFFIXES and len(words) > 2:
        suffix = words.pop().rstrip(",")
        words[-1] = words[-1].rstrip(",")
    start = len(words) - 1
    while start > 1 and words[start - 1] in _NAME_PARTICLES:
        start -= 1
    family, given = " ".join(words[start:]), " ".join(words[:start])
    return f"{family}, {suffix}, {given}" if suffix else f"{family}, {given}"


def _ascii_words(text: str) -> list[str]:
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", flat)


def _slug(words: list[str]) -> str:
    return re.sub(r"-+", "-", "-".join(w.lower() for w in words)).strip("-")


def derive_key(title: str, year: int, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A record key from a title and year, e.g. 'optima2024', 'wideseek-r1-2026'.

    The name before a colon (at most three words) or else the title's first
    meaningful word, lower-cased and hyphenated, then the year; '-2', '-3'...
    are appended when the key is taken.
    """
    head, colon, _ = title.partition(":")
    head_words = _ascii_words(head)
    if colon and 1 <= len(head_words) <= 3:
        base = _slug(head_words)
    else:
        words = [w for w in _ascii_words(title) if w.lower() not in _STOPWORDS and len(w) > 1]
        base = _slug(words[:1]) or "paper"
    base = base[:40].strip("-") or "paper"
    key = f"{base}{'-' if base[-1].isdigit() else ''}{year}"
    candidate, n = key, 2
    while candidate in taken:
        candidate, n = f"{key}-{n}", n + 1
    return candidate


def bibtex_key_for(key: str, year: int) -> str:
    """The citation key: the record key, with the year appended when it lacks it."""
    if key.endswith(str(year)):
        return key
    return f"{key}{'-' if key[-1].isdigit() else ''}{year}"


# ---------------------------------------------------------------- duplicates


def find_existing(
    records: RecordSet,
    arxiv_id: str | None = None,
    title: str | None = None,
    url: str | None = None,
) -> list[str]:
    """Where a paper is already pooled or excluded: one line per matching record.

    A record matches on the same arXiv id (in any field that names one), the
    same normalised URL or the same normalised title.
    """
    wanted_title = normalise_title(title) if title else None
    wanted_url = normalise_url(url) if url else None
    found = []
    for rec in records.papers + records.exclusions:
        data = rec.data
        if not isinstance(data, dict):
            continue
        if arxiv_id and arxiv_id in arxiv_ids_of(data):
            name = next(n for n in ("arxiv_id", "identifier", "url") if n in data)
            what = f"has arXiv id {arxiv_id}"
        elif (
            wanted_url
            and isinstance(data.get("url"), str)
            and (normalise_url(data["url"]) == wanted_url)
        ):
            name, what = "url", f"has the URL {url}"
        elif (
            wanted_title
            and isinstance(data.get("title"), str)
            and (normalise_title(data["title"]) == wanted_title)
        ):
            name, what = "title", f"has the same title {data['title']!r}"
        else:
            continue
        state = "pooled" if rec.kind == "paper" else "excluded"
        found.append(f"already {state}: {rec.rel}:{rec.line(name)} {what}")
    return found


def _refuse_existing(records: RecordSet, **what: str | None) -> None:
    existing = find_existing(records, **what)
    if existing:
        raise AlreadyRecorded(existing)


# ---------------------------------------------------------------- writing


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
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
    with _terminate_as_exit():
        write_atomic(path, text)


def _check_record(kind: str, rel: str, text: str, tax: Taxonomy) -> None:
    """Refuse a would-be record that breaks a record rule (placeholders aside)."""
    problems = record_text_problems(kind, rel, text, tax)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ArxivImportError(
            f"refusing to write a record that fails validation: {problems[0]}{more}"
        )


def record_text(kind: str, data: dict[str, Any], comments: tuple[str, ...] = ()) -> str:
    """A record file: the schema comment first, other comments, then the fields."""
    head = "\n".join((schema_comment(kind), *(f"# {c}" for c in comments)))
    return f"{head}\n{dump_record(data)}"


def _in_field_order(fields: tuple[Field, ...], facts: dict[str, Any]) -> dict[str, Any]:
    """Facts in field-list order; every other required field gets the placeholder."""
    return {f.name: facts.get(f.name, PLACEHOLDER) for f in fields if f.name in facts or f.required}


@dataclass
class Written:
    """What ``add`` or ``exclude`` wrote."""

    path: Path
    record: dict[str, Any]
    paper: ArxivPaper | None
    unfinished: list[str]


def _write(records: RecordSet, kind: str, rel: str, facts: dict[str, Any], **more: Any) -> Written:
    """Check and write a new record; ``more``: its comments and the paper it came from."""
    fields = PAPER_FIELDS if kind == "paper" else EXCLUSION_FIELDS
    record = _in_field_order(fields, facts)
    text = record_text(kind, record, more.get("comments", ()))
    _check_record(kind, rel, text, load_taxonomy(records.root))
    write_new_file(records.root / rel, text)
    unfinished = [name for name, value in record.items() if value == PLACEHOLDER]
    return Written(records.root / rel, record, more.get("paper"), unfinished)


# ---------------------------------------------------------------- papers


def _paper_key(records: RecordSet, key: str | None, title: str, year: int) -> str:
    """The new record's key: ``key`` checked (pattern, not taken), else derived."""
    folder = records.root / PAPERS_DIR
    taken = {p.stem for p in folder.glob(f"*{RECORD_SUFFIX}")} if folder.is_dir() else set()
    if key is None:
        return derive_key(title, year, taken)
    if not _KEY_RE.match(key):
        raise ArxivImportError(
            f"--key {key!r} does not match {KEY_PATTERN} (lower-case letters, digits, '-')"
        )
    if key in taken or (folder / f"{key}{RECORD_SUFFIX}").exists():
        raise ArxivImportError(
            f"{PAPERS_DIR}/{key}{RECORD_SUFFIX} already exists: refusing to overwrite it"
        )
    return key


def add_paper(
    reference: str,
    root: str | os.PathLike[str] | None = None,
    key: str | None = None,
    today: dt.date | None = None,
    endpoint: str | None = None,
    paper: ArxivPaper | None = None,
    notes: str | None = None,
) -> Written:
    """Fetch an arXiv paper and write its unfinished record under ``papers/``.

    ``paper``: its metadata when already fetched (a screening round), so no
    request is made; its text is cleaned and checked like a fetched one.
    ``notes``: the curator's remark, kept in the record's ``notes``.
    """
    arxiv_id = parse_arxiv_id(reference)
    records = read_records(root)
    if key is not None:
        _paper_key(records, key, "", 0)  # a bad or taken key is refused before any request
    _refuse_existing(records, arxiv_id=arxiv_id)
    paper = checked_paper(paper or fetch_paper(arxiv_id, endpoint))
    _refuse_existing(records, title=paper.title, url=paper.url)
    year = paper.published.year
    key = _paper_key(records, key, paper.title, year)
    facts = {
        "key": key,
        "title": paper.title,
        "authors": [family_given(a) for a in paper.authors] or [PLACEHOLDER],
        "year": year,
        "venue": ARXIV_VENUE,
        "arxiv_id": paper.arxiv_id,
        "url": paper.url,
        "added": today or dt.date.today(),
        "citation": {
            "bibtex_key": bibtex_key_for(key, year),
            "entry_type": "article",
            "journal": f"arXiv preprint arXiv:{paper.arxiv_id}",
        },
        **({"notes": notes} if notes else {}),
    }
    comment = f"arXiv primary category: {paper.primary_category or 'unknown'}"
    rel = f"{PAPERS_DIR}/{key}{RECORD_SUFFIX}"
    return _write(records, "paper", rel, facts, comments=(comment,), paper=paper)


def add_other_paper(
    title: str,
    authors: list[str] | tuple[str, ...],
    published: dt.date,
    url: str,
    root: str | os.PathLike[str] | None = None,
    key: str | None = None,
    today: dt.date | None = None,
    notes: str | None = None,
    comment: str = "",
) -> Written:
    """Write the unfinished record of a paper that is not on arXiv (an OpenReview
    submission, a DOI, a web page), from facts a screening source gave.

    The venue and BibTeX entry type are left TODO: the source does not settle them.
    """
    records = read_records(root)
    if key is not None:
        _paper_key(records, key, "", 0)
    _refuse_existing(records, title=title, url=url)
    key = _paper_key(records, key, title, published.year)
    facts = {
        "key": key,
        "title": " ".join(title.split()),
        "authors": [family_given(a) for a in authors] or [PLACEHOLDER],
        "year": published.year,
        "url": url,
        "added": today or dt.date.today(),
        "citation": {"bibtex_key": bibtex_key_for(key, published.year), "entry_type": "misc"},
        **({"notes": notes} if notes else {}),
    }
    rel = f"{PAPERS_DIR}/{key}{RECORD_SUFFIX}"
    return _write(records, "paper", rel, facts, comments=(comment,) if comment else ())


# ---------------------------------------------------------------- exclusions


def next_exclusion_id(records: RecordSet) -> str:
    """The next free log id: one past the highest E-number in use."""
    numbers, width = [0], 3
    names = [Path(r.rel).stem for r in records.exclusions]
    folder = records.root / EXCLUSIONS_DIR
    if folder.is_dir():
        names += [p.stem for p in folder.iterdir()]
    for name in names:
        if _EXCLUSION_RE.match(name):
            numbers.append(int(name[1:]))
            width = max(width, len(name) - 1)
    return f"E{max(numbers) + 1:0{width}d}"


def check_choice(tax: Taxonomy, axis: str, value: str | None, option: str) -> str:
    """``value`` when it is an id of ``axis``; else a clear error naming the option."""
    ids = tax[axis].ids
    if value is None or value not in ids:
        raise ArxivImportError(
            f"{option}: unknown value {value!r}; allowed ({axis} in taxonomy.yaml): "
            + ", ".join(ids)
        )
    return value


def _identifier_for(url: str) -> str | None:
    parts = urlsplit(url)
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.strip("/")
    if host == "openreview.net":
        found = re.search(r"(?:^|&)id=([^&]+)", parts.query)
        return f"OpenReview:{found.group(1)}" if found else None
    if host == "aclanthology.org" and path:
        return f"ACL:{path.removesuffix('.pdf')}"
    if host == "github.com" and path.count("/") >= 1:
        return "github:" + "/".join(path.split("/")[:2])
    return None


@dataclass(frozen=True)
class _Excluded:
    """What an exclusion names: its address, title, identifier and default source."""

    url: str
    title: str
    identifier: str | None
    source: str | None
    paper: ArxivPaper | None = None


def _excluded_arxiv(
    records: RecordSet, arxiv_id: str, endpoint: str | None, paper: ArxivPaper | None
) -> _Excluded:
    _refuse_existing(records, arxiv_id=arxiv_id)
    paper = checked_paper(paper or fetch_paper(arxiv_id, endpoint))
    return _Excluded(paper.url, paper.title, f"arXiv:{arxiv_id}", "arxiv", paper)


def _excluded_url(reference: str, title: str | None) -> _Excluded:
    url = reference.strip()
    if not is_http_url(url):
        raise ArxivImportError(f"{shorten(reference)} is neither an arXiv id nor an http(s) URL")
    if not title:
        raise ArxivImportError("give --title: only arXiv records have their title fetched")
    host = urlsplit(url).netloc.lower().removeprefix("www.")
    return _Excluded(url, title, _identifier_for(url), _SOURCE_BY_HOST.get(host))


def exclude_record(
    reference: str,
    stage: str,
    reason: str,
    root: str | os.PathLike[str] | None = None,
    source: str | None = None,
    query_family: str | None = None,
    note: str | None = None,
    title: str | None = None,
    identifier: str | None = None,
    today: dt.date | None = None,
    endpoint: str | None = None,
    paper: ArxivPaper | None = None,
) -> Written:
    """Write the next ``exclusions/E<nnn>.yaml`` for an arXiv id or a URL.

    ``paper``: the arXiv metadata when already fetched, so no request is made.
    """
    records = read_records(root)
    tax = load_taxonomy(records.root)
    check_choice(tax, "exclusion_stage", stage, "--stage")
    check_choice(tax, "exclusion_reason", reason, "--reason")
    for axis, value, option in (
        ("query_family", query_family, "--query-family"),
        ("exclusion_source", source, "--source"),
    ):
        if value is not None:
            check_choice(tax, axis, value, option)
    arxiv_id = arxiv_or_none(reference)
    if arxiv_id:
        found = _excluded_arxiv(records, arxiv_id, endpoint, paper)
    else:
        found = _excluded_url(reference, title)
    title = title or found.title
    _refuse_existing(records, title=title, url=found.url)
    if source is None and found.source in tax["exclusion_source"].ids:
        source = found.source
    eid = next_exclusion_id(records)
    facts = {
        "id": eid,
        "title": " ".join(title.split()),
        "identifier": identifier or found.identifier or PLACEHOLDER,
        "url": found.url,
        "source": source or PLACEHOLDER,
        "query_family": query_family or PLACEHOLDER,
        "screened": today or dt.date.today(),
        "stage": stage,
        "reason": reason,
        "note": note or PLACEHOLDER,
    }
    rel = f"{EXCLUSIONS_DIR}/{eid}{RECORD_SUFFIX}"
    return _write(records, "exclusion", rel, facts, paper=found.paper)


# ---------------------------------------------------------------- reporting


def describe_written(written: Written, root: Path, out: Callable[[str], None] = print) -> None:
    """Tell the contributor what was written and what is left to do."""
    try:
        shown = written.path.relative_to(root)
    except ValueError:
        shown = written.path
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
