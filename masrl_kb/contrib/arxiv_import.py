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
import logging
import os
import re
import signal
import textwrap
import threading
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import arxiv
import requests

from masrl_kb.contrib.arxiv_client import (
    AtomEntry,
    FetchError,
    HttpStatusError,
    Limits,
    http_get,
    parse_feed,
    query_url,
)
from masrl_kb.kb.fields import (
    ARXIV_ID_PATTERN,
    EXCLUSION_FIELDS,
    EXCLUSION_ID_PATTERN,
    KEY_PATTERN,
    PAPER_FIELDS,
    PLACEHOLDER,
)
from masrl_kb.kb.records import EXCLUSIONS_DIR, PAPERS_DIR, RECORD_SUFFIX, RecordSet, read_records
from masrl_kb.kb.rules import is_http_url
from masrl_kb.kb.schema import schema_comment
from masrl_kb.kb.synthetic import dump_record
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten, strip_controls
from masrl_kb.kb.validate import (
    arxiv_ids_of,
    normalise_title,
    normalise_url,
    record_text_problems,
)

ENV_ARXIV_URL = "MASRL_KB_ARXIV_URL"
DEFAULT_ENDPOINT = "https://export.arxiv.org/api/query"
DEFAULT_TIMEOUT = 20.0  # per request, for paging clients of the arxiv package (screening)
ARXIV_VENUE = "arXiv"

_ARXIV_RE = re.compile(ARXIV_ID_PATTERN)
_KEY_RE = re.compile(KEY_PATTERN)
_EXCLUSION_RE = re.compile(EXCLUSION_ID_PATTERN)
_VERSION = re.compile(r"v[0-9]+$")
# arXiv category names: archive[.subject], e.g. cs.AI, math-ph, astro-ph.GA.
_CATEGORY_RE = re.compile(r"^[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?$")
_ARXIV_URL = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(?P<id>.+?)(?:\.pdf)?/?$",
    re.IGNORECASE,
)
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


class ArxivImportError(Exception):
    """A user-facing, one-line reason why ``add`` or ``exclude`` wrote nothing."""


class AlreadyRecorded(ArxivImportError):
    """The paper is already pooled or excluded; ``matches`` says where."""

    def __init__(self, matches: list[str]) -> None:
        self.matches = matches
        super().__init__("; ".join(matches))


# ---------------------------------------------------------------- arXiv ids


def parse_arxiv_id(text: str) -> str:
    """An arXiv id without version from an id, ``arXiv:`` id or arxiv.org URL."""
    raw = text.strip()
    found = _ARXIV_URL.match(raw)
    candidate = found.group("id") if found else re.sub(r"^arxiv:\s*", "", raw, flags=re.I)
    candidate = _VERSION.sub("", candidate)
    if not _ARXIV_RE.match(candidate):
        raise ArxivImportError(
            f"malformed arXiv id {text.strip()!r}: expected YYMM.NNNNN (e.g. 2505.19591), "
            "an old-style id such as cs/0112017, or an arxiv.org/abs/ URL"
        )
    return candidate


def is_arxiv_reference(text: str) -> bool:
    """Whether ``text`` names an arXiv paper (id, ``arXiv:`` id or arxiv.org URL)."""
    try:
        parse_arxiv_id(text)
    except ArxivImportError:
        return False
    return True


@dataclass(frozen=True)
class ArxivPaper:
    """What the arXiv API says about one paper."""

    arxiv_id: str
    title: str
    authors: tuple[str, ...]  # as arXiv lists them ("Given Family")
    published: dt.date  # first version
    primary_category: str
    abstract: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}"


def arxiv_endpoint(endpoint: str | None = None) -> str:
    """The API endpoint: the argument, ``MASRL_KB_ARXIV_URL``, then arXiv's own."""
    return endpoint or os.environ.get(ENV_ARXIV_URL) or DEFAULT_ENDPOINT


class TimeoutSession(requests.Session):
    """A session whose requests time out (the arxiv package sets no timeout)."""

    def __init__(self, timeout: float) -> None:
        super().__init__()
        self.timeout = timeout

    def request(self, *args, **kwargs):  # type: ignore[override]
        kwargs.setdefault("timeout", self.timeout)
        return super().request(*args, **kwargs)


def arxiv_client(
    endpoint: str,
    timeout: float = DEFAULT_TIMEOUT,
    page_size: int = 1,
    delay_seconds: float = 0.0,
    num_retries: int = 0,
    session: requests.Session | None = None,
) -> arxiv.Client:
    """An ``arxiv`` package client for ``endpoint`` whose requests time out.

    For paging searches (screening rounds); single records go through
    :func:`fetch_arxiv`'s bounded client instead.
    """
    client = arxiv.Client(page_size=page_size, delay_seconds=delay_seconds, num_retries=num_retries)
    separator = "&" if "?" in endpoint else "?"
    client.query_url_format = endpoint.replace("{", "{{").replace("}", "}}") + separator + "{}"
    client._session = session or TimeoutSession(timeout)
    return client


@contextmanager
def quiet_arxiv_logger():
    logger = logging.getLogger("arxiv")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def network_reason(err: requests.RequestException, timeout: float) -> str:
    if isinstance(err, requests.Timeout):
        return f"no answer within {timeout:g} s"
    errno = re.search(r"\[Errno -?[0-9]+\] ([^'\")\]]+)", str(err))
    if errno:
        return errno.group(1).strip().lower()
    return type(err).__name__


def clean_text(text: str) -> str:
    """API text as one line: control characters (ESC, BEL...) and runs of space made one space."""
    return " ".join(strip_controls(text).split())


def _category(raw: str) -> str:
    category = raw.strip()
    if category and not _CATEGORY_RE.match(category):
        raise ArxivImportError(f"arXiv returned a malformed primary category {shorten(raw)}")
    return category


def _published(raw: str, arxiv_id: str) -> dt.date:
    try:
        return dt.datetime.fromisoformat(raw.strip()).date()
    except ValueError:
        raise ArxivImportError(
            f"arXiv returned a malformed <published> date {shorten(raw)} for {arxiv_id}"
        ) from None


def _paper_from(entry: AtomEntry, arxiv_id: str) -> ArxivPaper:
    return ArxivPaper(
        arxiv_id=arxiv_id,
        title=clean_text(entry.title),
        authors=tuple(clean_text(a) for a in entry.authors if clean_text(a)),
        published=_published(entry.published, arxiv_id),
        primary_category=_category(entry.primary_category),
        abstract=clean_text(entry.summary),
    )


def cleaned_paper(paper: ArxivPaper) -> ArxivPaper:
    """A paper's API text made safe: control characters gone, category checked."""
    return ArxivPaper(
        arxiv_id=paper.arxiv_id,
        title=clean_text(paper.title),
        authors=tuple(clean_text(a) for a in paper.authors if clean_text(a)),
        published=paper.published,
        primary_category=_category(paper.primary_category or ""),
        abstract=clean_text(paper.abstract),
    )


def _entry_id(entry: AtomEntry) -> str:
    return _VERSION.sub("", entry.id.strip().rsplit("/abs/", 1)[-1])


def fetch_arxiv(
    arxiv_id: str,
    endpoint: str | None = None,
    timeout: float | None = None,
    delay: float | None = None,
) -> ArxivPaper:
    """Fetch one paper's metadata; raise :class:`ArxivImportError` on any failure.

    ``timeout`` is the overall deadline (default ``MASRL_KB_ARXIV_DEADLINE`` or
    30 s) and ``delay`` the wait between retries (``MASRL_KB_ARXIV_DELAY``, 3 s).
    """
    arxiv_id = parse_arxiv_id(arxiv_id)
    url = arxiv_endpoint(endpoint)
    try:
        limits = Limits.from_env(deadline=timeout, delay=delay)
        entries = parse_feed(http_get(query_url(url, arxiv_id), limits))
    except HttpStatusError as err:
        if err.status == 400:
            raise ArxivImportError(
                f"arXiv rejected {arxiv_id!r} as a malformed id (HTTP 400)"
            ) from None
        raise ArxivImportError(
            f"the arXiv API at {url} answered HTTP {err.status} for {arxiv_id}; try again later"
        ) from None
    except FetchError as err:
        raise ArxivImportError(
            f"cannot reach the arXiv API at {url} ({err}); check the network or {ENV_ARXIV_URL}"
        ) from None
    for entry in entries:
        if _entry_id(entry) == arxiv_id and clean_text(entry.title):
            return _paper_from(entry, arxiv_id)
    raise ArxivImportError(f"arXiv has no paper with id {arxiv_id}")


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


def _records_with(records: RecordSet):
    for rec in records.papers + records.exclusions:
        if isinstance(rec.data, dict):
            yield rec


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
    for rec in _records_with(records):
        data = rec.data
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


# ---------------------------------------------------------------- writing


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into SystemExit while writing, so ``finally`` still runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _exit(signum, frame):  # noqa: ARG001
        raise SystemExit(128 + signum)

    old = {sig: signal.signal(sig, _exit) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def write_new_file(path: Path, text: str) -> None:
    """Write ``text`` to a new file atomically; never overwrite; no partial file.

    The temporary file is removed on every way out: an error, Ctrl-C, or a
    SIGTERM/SIGHUP (turned into an exit for the duration of the write).
    """
    if path.exists():
        raise ArxivImportError(f"{path} already exists: refusing to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    # A dot-name: the record readers skip it even if the process dies mid-write.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with _terminate_as_exit():
        try:
            with open(tmp, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            if path.exists():
                raise ArxivImportError(f"{path} already exists: refusing to overwrite it")
            os.replace(tmp, path)
        finally:
            if os.path.lexists(tmp):
                tmp.unlink()


def _check_record(kind: str, rel: str, text: str, tax: Taxonomy) -> None:
    """Refuse a would-be record that breaks a record rule (placeholders aside)."""
    problems = record_text_problems(kind, rel, text, tax)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ArxivImportError(
            f"refusing to write a record that fails validation: {problems[0]}{more}"
        )


def record_text(kind: str, data: dict, comments: tuple[str, ...] = ()) -> str:
    """A record file: the schema comment first, other comments, then the fields."""
    head = "\n".join((schema_comment(kind), *(f"# {c}" for c in comments)))
    return f"{head}\n{dump_record(data)}"


def paper_record(paper: ArxivPaper, key: str, today: dt.date) -> dict:
    """A paper record with the arXiv facts and a placeholder in every other field."""
    facts = {
        "key": key,
        "title": paper.title,
        "authors": [family_given(a) for a in paper.authors] or [PLACEHOLDER],
        "year": paper.published.year,
        "venue": ARXIV_VENUE,
        "arxiv_id": paper.arxiv_id,
        "url": paper.url,
        "added": today,
        "citation": {
            "bibtex_key": bibtex_key_for(key, paper.published.year),
            "entry_type": "article",
            "journal": f"arXiv preprint arXiv:{paper.arxiv_id}",
        },
    }
    return _in_field_order(PAPER_FIELDS, facts)


def _in_field_order(fields, facts: dict) -> dict:
    """Facts in field-list order; every other required field gets the placeholder."""
    record = {}
    for f in fields:
        if f.name in facts:
            record[f.name] = facts[f.name]
        elif f.required:
            record[f.name] = PLACEHOLDER
    return record


def _unfinished(data: dict) -> list[str]:
    return [name for name, value in data.items() if value == PLACEHOLDER]


@dataclass
class Written:
    """What ``add`` or ``exclude`` wrote."""

    path: Path
    record: dict
    paper: ArxivPaper | None
    unfinished: list[str]


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
    papers_dir = records.root / PAPERS_DIR
    if key is not None:
        if not _KEY_RE.match(key):
            raise ArxivImportError(
                f"--key {key!r} does not match {KEY_PATTERN} (lower-case letters, digits, '-')"
            )
        if (papers_dir / f"{key}{RECORD_SUFFIX}").exists():
            raise ArxivImportError(
                f"{PAPERS_DIR}/{key}{RECORD_SUFFIX} already exists: refusing to overwrite it"
            )
    existing = find_existing(records, arxiv_id=arxiv_id)
    if existing:
        raise AlreadyRecorded(existing)
    paper = cleaned_paper(paper) if paper else fetch_arxiv(arxiv_id, endpoint=endpoint)
    existing = find_existing(records, title=paper.title, url=paper.url)
    if existing:
        raise AlreadyRecorded(existing)
    taken = {p.stem for p in papers_dir.glob(f"*{RECORD_SUFFIX}")} if papers_dir.is_dir() else set()
    key = key or derive_key(paper.title, paper.published.year, taken)
    record = paper_record(paper, key, today or dt.date.today())
    if notes:
        record = _in_field_order(PAPER_FIELDS, {**record, "notes": notes})
    comment = f"arXiv primary category: {paper.primary_category or 'unknown'}"
    return _write_paper(records, key, record, (comment,), paper)


def _write_paper(
    records: RecordSet, key: str, record: dict, comments: tuple[str, ...], paper
) -> Written:
    path = records.root / PAPERS_DIR / f"{key}{RECORD_SUFFIX}"
    text = record_text("paper", record, comments)
    _check_record("paper", f"{PAPERS_DIR}/{path.name}", text, load_taxonomy(records.root))
    write_new_file(path, text)
    return Written(path, record, paper, _unfinished(record))


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
    papers_dir = records.root / PAPERS_DIR
    if key is not None and not _KEY_RE.match(key):
        raise ArxivImportError(
            f"--key {key!r} does not match {KEY_PATTERN} (lower-case letters, digits, '-')"
        )
    existing = find_existing(records, title=title, url=url)
    if existing:
        raise AlreadyRecorded(existing)
    taken = {p.stem for p in papers_dir.glob(f"*{RECORD_SUFFIX}")} if papers_dir.is_dir() else set()
    key = key or derive_key(title, published.year, taken)
    if key in taken:
        raise ArxivImportError(
            f"{PAPERS_DIR}/{key}{RECORD_SUFFIX} already exists: refusing to overwrite it"
        )
    facts = {
        "key": key,
        "title": " ".join(title.split()),
        "authors": [family_given(a) for a in authors] or [PLACEHOLDER],
        "year": published.year,
        "url": url,
        "added": today or dt.date.today(),
        "citation": {"bibtex_key": bibtex_key_for(key, published.year), "entry_type": "misc"},
    }
    if notes:
        facts["notes"] = notes
    record = _in_field_order(PAPER_FIELDS, facts)
    return _write_paper(records, key, record, (comment,) if comment else (), None)


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
    if value not in ids:
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
    if query_family is not None:
        check_choice(tax, "query_family", query_family, "--query-family")
    if source is not None:
        check_choice(tax, "exclusion_source", source, "--source")
    if is_arxiv_reference(reference):
        arxiv_id = parse_arxiv_id(reference)
        existing = find_existing(records, arxiv_id=arxiv_id)
        if existing:
            raise AlreadyRecorded(existing)
        paper = cleaned_paper(paper) if paper else fetch_arxiv(arxiv_id, endpoint=endpoint)
        url = paper.url
        title = title or paper.title
        identifier = identifier or f"arXiv:{arxiv_id}"
        default_source = "arxiv"
    else:
        paper = None
        url = reference.strip()
        if not is_http_url(url):
            raise ArxivImportError(
                f"{shorten(reference)} is neither an arXiv id nor an http(s) URL"
            )
        parts = urlsplit(url)
        if not title:
            raise ArxivImportError("give --title: only arXiv records have their title fetched")
        identifier = identifier or _identifier_for(url)
        default_source = _SOURCE_BY_HOST.get(parts.netloc.lower().removeprefix("www."))
    existing = find_existing(records, title=title, url=url)
    if existing:
        raise AlreadyRecorded(existing)
    if source is None and default_source in tax["exclusion_source"].ids:
        source = default_source
    eid = next_exclusion_id(records)
    facts = {
        "id": eid,
        "title": " ".join(title.split()),
        "identifier": identifier or PLACEHOLDER,
        "url": url,
        "source": source or PLACEHOLDER,
        "query_family": query_family or PLACEHOLDER,
        "screened": today or dt.date.today(),
        "stage": stage,
        "reason": reason,
        "note": note or PLACEHOLDER,
    }
    record = _in_field_order(EXCLUSION_FIELDS, facts)
    path = records.root / EXCLUSIONS_DIR / f"{eid}{RECORD_SUFFIX}"
    text = record_text("exclusion", record)
    _check_record("exclusion", f"{EXCLUSIONS_DIR}/{path.name}", text, tax)
    write_new_file(path, text)
    return Written(path, record, paper, _unfinished(record))


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
