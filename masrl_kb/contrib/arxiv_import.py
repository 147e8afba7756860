"""``masrl-kb add`` and ``masrl-kb exclude``: new records from an arXiv id (or a URL).

The facts the API knows are filled in and every judgement field is left ``TODO``,
which ``validate`` reports as unfinished. Nothing is written for a paper already
pooled or excluded (same arXiv id, URL or normalised title); a file is never
overwritten, and writes are atomic. ``MASRL_KB_ARXIV_URL`` replaces the API endpoint.
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

from masrl_kb.contrib.outside_text import MAX_ABSTRACT, MAX_TITLE, clean_names, clean_text
from masrl_kb.contrib.sources.arxiv import ArxivPaper, arxiv_or_none, fetch_paper, parse_arxiv_id
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.crossrules import identities, normalise_url
from masrl_kb.kb.editor_schema import schema_comment
from masrl_kb.kb.fields import (
    EXCLUSION_FIELDS,
    EXCLUSION_ID_PATTERN,
    KEY_PATTERN,
    PAPER_FIELDS,
    PLACEHOLDER,
)
from masrl_kb.kb.record_checks import record_text_problems
from masrl_kb.kb.records import EXCLUSIONS_DIR, PAPERS_DIR, RECORD_SUFFIX, RecordSet, read_records
from masrl_kb.kb.rules import is_http_url
from masrl_kb.kb.synthetic import dump_record
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten, title_skeleton

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
        authors=tuple(clean_names(paper.authors, None)),
        primary_category=category,
        abstract=clean_text(paper.abstract, MAX_ABSTRACT),
    )


# ---------------------------------------------------------------- names and keys


def family_given(name: str) -> str:
    """'Joshua B. Tenenbaum' as 'Tenenbaum, Joshua B.' ('van Beethoven, Ludwig',
    'King, Jr., Martin'); one-word and group names ('H1 Collaboration') kept as they are."""
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


def _with_year(base: str, year: int) -> str:
    return f"{base}{'-' if base[-1].isdigit() else ''}{year}"


def derive_key(title: str, year: int, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A record key ('optima2024', 'wideseek-r1-2026'): the name before a colon (at most
    three words) or the first meaningful word, then the year; '-2', '-3'... when taken."""
    head, colon, _ = title.partition(":")
    head_words = _ascii_words(head)
    if colon and 1 <= len(head_words) <= 3:
        base = _slug(head_words)
    else:
        words = [w for w in _ascii_words(title) if w.lower() not in _STOPWORDS and len(w) > 1]
        base = _slug(words[:1]) or "paper"
    key = _with_year(base[:40].strip("-") or "paper", year)
    candidate, n = key, 2
    while candidate in taken:
        candidate, n = f"{key}-{n}", n + 1
    return candidate


def bibtex_key_for(key: str, year: int) -> str:
    """The citation key: the record key, with the year appended when it lacks it."""
    return key if key.endswith(str(year)) else _with_year(key, year)


# ---------------------------------------------------------------- duplicates


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


# ---------------------------------------------------------------- writing


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


def _check_record(kind: str, rel: str, text: str, tax: Taxonomy) -> None:
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


def _write(
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
    _check_record(kind, rel, text, load_taxonomy(records.root))
    write_new_file(records.root / rel, text)
    unfinished = [name for name, value in record.items() if value == PLACEHOLDER]
    return Written(records.root / rel, record, paper, unfinished)


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


def _new_paper(
    records: RecordSet,
    key: str | None,
    authors: tuple[str, ...] | list[str],
    facts: dict[str, Any],
    paper: ArxivPaper | None = None,
) -> Written:
    """Write a paper record from ``facts`` (title, year, ...), with its key, authors
    ('Family, Given') and citation key."""
    key = _paper_key(records, key, facts["title"], facts["year"])
    citation = {"bibtex_key": bibtex_key_for(key, facts["year"]), **facts["citation"]}
    facts = {
        **facts,
        "key": key,
        "title": " ".join(facts["title"].split()),
        "authors": [family_given(a) for a in authors] or [PLACEHOLDER],
        "citation": citation,
    }
    return _write(records, "paper", f"{PAPERS_DIR}/{key}{RECORD_SUFFIX}", facts, paper)


def add_paper(
    reference: str,
    root: str | os.PathLike[str] | None = None,
    key: str | None = None,
    today: dt.date | None = None,
    paper: ArxivPaper | None = None,
    notes: str | None = None,
    stubs: tuple[str, ...] = (),
) -> Written:
    """Fetch an arXiv paper and write its unfinished record under ``papers/``. ``paper``:
    its metadata when already fetched (a screening round; cleaned and checked the same);
    ``stubs``: optional fields written as TODO too."""
    arxiv_id = parse_arxiv_id(reference)
    records = read_records(root)
    if key is not None:
        _paper_key(records, key, "", 0)  # a bad or taken key is refused before any request
    refuse_existing(records, arxiv_id=arxiv_id)
    paper = checked_paper(paper or fetch_paper(arxiv_id))
    refuse_existing(records, title=paper.title, url=paper.url)
    facts = {
        "title": paper.title,
        "year": paper.published.year,
        "venue": ARXIV_VENUE,
        "arxiv_id": paper.arxiv_id,
        "url": paper.url,
        "added": today or dt.date.today(),
        "citation": {
            "entry_type": "article",
            "journal": f"arXiv preprint arXiv:{paper.arxiv_id}",
        },
        "notes": notes,
        "comments": (f"arXiv primary category: {paper.primary_category or 'unknown'}",),
    } | dict.fromkeys(stubs, PLACEHOLDER)
    return _new_paper(records, key, paper.authors, facts, paper)


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
    stubs: tuple[str, ...] = (),
) -> Written:
    """Write the unfinished record of a paper not on arXiv (an OpenReview submission,
    a DOI, a web page) from a screening source's facts; venue and entry type stay TODO."""
    records = read_records(root)
    if key is not None:
        _paper_key(records, key, "", 0)
    refuse_existing(records, title=title, url=url)
    facts = {
        "title": title,
        "year": published.year,
        "url": url,
        "added": today or dt.date.today(),
        "citation": {"entry_type": "misc"},
        "notes": notes,
        "comments": (comment,) if comment else (),
    } | dict.fromkeys(stubs, PLACEHOLDER)
    return _new_paper(records, key, authors, facts)


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


def check_choice(
    tax: Taxonomy,
    axis: str,
    value: str | None,
    option: str,
    error: type[ValueError] = ArxivImportError,
) -> str:
    """``value`` when it is an id of ``axis``; else ``error`` naming the option."""
    ids = tax[axis].ids
    if value is None or value not in ids:
        raise error(
            f"{option}: unknown value {value!r}; allowed ({axis} in taxonomy.yaml): "
            + ", ".join(ids)
        )
    return value


def _url_facts(reference: str, title: str | None) -> tuple[str, str, str, str]:
    """A non-arXiv exclusion's URL, title, identifier and default source ("": none)."""
    url = reference.strip()
    if not is_http_url(url):
        raise ArxivImportError(f"{shorten(reference)} is neither an arXiv id nor an http(s) URL")
    if not title:
        raise ArxivImportError("give --title: only arXiv records have their title fetched")
    parts = urlsplit(url)
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.strip("/")
    forum = re.search(r"(?:^|&)id=([^&]+)", parts.query)
    identifier = ""
    if host == "openreview.net" and forum:
        identifier = f"OpenReview:{forum.group(1)}"
    elif host == "aclanthology.org" and path:
        identifier = f"ACL:{path.removesuffix('.pdf')}"
    elif host == "github.com" and path.count("/") >= 1:
        identifier = "github:" + "/".join(path.split("/")[:2])
    return url, title, identifier, _SOURCE_BY_HOST.get(host, "")


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
    paper: ArxivPaper | None = None,
) -> Written:
    """Write the next ``exclusions/E<nnn>.yaml`` for an arXiv id or a URL (``paper``: the
    arXiv metadata when already fetched, so no request is made)."""
    records = read_records(root)
    tax = load_taxonomy(records.root)
    for axis, value, option in (
        ("exclusion_stage", stage, "--stage"),
        ("exclusion_reason", reason, "--reason"),
        ("query_family", query_family, "--query-family"),
        ("exclusion_source", source, "--source"),
    ):
        if value is not None or option in ("--stage", "--reason"):
            check_choice(tax, axis, value, option)
    arxiv_id = arxiv_or_none(reference)
    if arxiv_id:
        refuse_existing(records, arxiv_id=arxiv_id)
        paper = checked_paper(paper or fetch_paper(arxiv_id))
        url, found_id, found_source = paper.url, f"arXiv:{arxiv_id}", "arxiv"
        title = title or paper.title
    else:
        paper = None
        url, title, found_id, found_source = _url_facts(reference, title)
    refuse_existing(records, title=title, url=url)
    if source is None and found_source in tax["exclusion_source"].ids:
        source = found_source
    eid = next_exclusion_id(records)
    facts = {
        "id": eid,
        "title": " ".join(title.split()),
        "identifier": identifier or found_id,
        "url": url,
        "source": source,
        "query_family": query_family,
        "screened": today or dt.date.today(),
        "stage": stage,
        "reason": reason,
        "note": note,
    }
    return _write(records, "exclusion", f"{EXCLUSIONS_DIR}/{eid}{RECORD_SUFFIX}", facts, paper)


# ---------------------------------------------------------------- reporting


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
