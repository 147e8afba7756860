"""Living-review screening rounds: ``masrl-kb screen run`` and ``screen decide``.

A round runs every query family of ``protocol.yaml`` against arXiv for a
window of submission dates, removes what the knowledge base already holds
(pool, exclusions, earlier rounds), ranks the rest and writes
``screening/<round-id>/`` for screening in ASReview LAB or Zotero:

- ``candidates.csv``: id, title, authors, submitted, families, score, duplicate_of
  (candidates first, best score first; removed duplicates last, each naming the
  record it duplicates);
- ``candidates.ris``: the candidates for ASReview or Zotero (written with rispy);
- ``entries.json``: the candidates' arXiv metadata, so ``decide`` needs no network;
- ``round.yaml``: window, families run and counts; ``decide`` adds decisions.

Duplicates are the same arXiv id whatever its version suffix, or a look-alike
title: both titles normalised, then a rapidfuzz ratio of at least the
protocol's ``deduplication.title_similarity``. The score is the TF-IDF cosine
similarity (scikit-learn) of a candidate's title and abstract to the most
similar pooled paper's title and summary, plus ``ranking.family_weight`` per
query family that found it.

API text is hostile: control characters are dropped, whitespace collapsed,
lengths bounded, ids checked against the arXiv pattern, responses capped in
size and time, and CSV cells that a spreadsheet would run as a formula are
quoted.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
import shutil
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import arxiv
import requests
import yaml

from masrl_kb.contrib.arxiv_import import (
    DEFAULT_TIMEOUT,
    AlreadyRecorded,
    ArxivImportError,
    ArxivPaper,
    TimeoutSession,
    add_paper,
    arxiv_client,
    arxiv_endpoint,
    exclude_record,
    network_reason,
    parse_arxiv_id,
    quiet_arxiv_logger,
)
from masrl_kb.kb.fields import PLACEHOLDER
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.protocol import Protocol, QueryFamily, load_protocol
from masrl_kb.kb.records import read_records
from masrl_kb.kb.rounds import (
    ROUND_FILE,
    SCREENING_DIR,
    Round,
    load_round,
    load_rounds,
    round_dir,
    round_id,
)
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.kb.validate import arxiv_ids_of, normalise_title

CANDIDATES_CSV = "candidates.csv"
CANDIDATES_RIS = "candidates.ris"
ENTRIES_JSON = "entries.json"
CSV_COLUMNS = ("id", "title", "authors", "submitted", "families", "score", "duplicate_of")
ENV_DELAY = "MASRL_KB_ARXIV_DELAY"
# Bounds on hostile API text and responses.
MAX_TITLE = 500
MAX_AUTHOR = 200
MAX_AUTHORS = 300
MAX_ABSTRACT = 6000
MAX_CATEGORY = 40
MAX_RESPONSE_BYTES = 20 * 1024 * 1024
MAX_DECISION_BYTES = 50 * 1024 * 1024
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ASREVIEW_LABELS = {
    "asreview_relevant": "include",
    "asreview_irrelevant": "exclude",
    "asreview_not_seen": None,
}
_ARXIV_IN_TEXT = re.compile(
    r"arxiv\.org/(?:abs|pdf)/([a-z-]+(?:\.[A-Z]{2})?/[0-9]{7}|[0-9]{4}\.[0-9]{4,5})", re.I
)


class ScreeningError(ValueError):
    """A user-facing reason why a screening command did nothing."""


class DecisionFileError(ScreeningError):
    """The decisions file is malformed; one line per problem, ``file:line: field: msg``."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class Paging:
    """How politely to page through the API (arXiv asks for one request per 3 s)."""

    page_size: int = 100
    delay_seconds: float = 3.0
    num_retries: int = 3
    max_per_family: int = 2000
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_env(cls, **overrides) -> Paging:
        """Defaults, ``MASRL_KB_ARXIV_DELAY`` (seconds), then explicit overrides."""
        values = {k: v for k, v in overrides.items() if v is not None}
        if os.environ.get(ENV_DELAY) and "delay_seconds" not in values:
            try:
                values["delay_seconds"] = max(0.0, float(os.environ[ENV_DELAY]))
            except ValueError:
                raise ScreeningError(f"{ENV_DELAY} must be a number of seconds") from None
        return cls(**values)


class ResponseTooLarge(requests.RequestException):
    """An API answer over ``MAX_RESPONSE_BYTES`` (not retried)."""


class _BoundedSession(TimeoutSession):
    """Requests that time out and refuse bodies over ``MAX_RESPONSE_BYTES``."""

    def request(self, *args, **kwargs):  # type: ignore[override]
        kwargs["stream"] = True
        response = super().request(*args, **kwargs)
        body = bytearray()
        for chunk in response.iter_content(64 * 1024):
            body.extend(chunk)
            if len(body) > MAX_RESPONSE_BYTES:
                response.close()
                raise ResponseTooLarge(f"an answer larger than {MAX_RESPONSE_BYTES} bytes")
        response._content = bytes(body)
        return response


# ---------------------------------------------------------------- entries


@dataclass
class Entry:
    """One arXiv entry a round found, sanitised."""

    arxiv_id: str
    title: str
    authors: list[str]
    submitted: dt.date
    primary_category: str
    abstract: str
    families: list[str] = field(default_factory=list)
    score: float | None = None
    duplicate_of: str = ""
    match: str = ""

    def paper(self) -> ArxivPaper:
        return ArxivPaper(
            self.arxiv_id,
            self.title,
            tuple(self.authors),
            self.submitted,
            self.primary_category,
            self.abstract,
        )

    def to_json(self) -> dict:
        data = asdict(self)
        data["submitted"] = self.submitted.isoformat()
        return data

    @classmethod
    def from_json(cls, data: dict) -> Entry:
        values = dict(data)
        values["submitted"] = dt.date.fromisoformat(values["submitted"])
        return cls(**values)


def clean_text(value: object, limit: int) -> str:
    """API text made safe to store: no control or format characters, one space, bounded."""
    text = unicodedata.normalize("NFC", str(value or ""))
    text = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in text
        if unicodedata.category(c) not in ("Cf", "Cs", "Co") or c == "\u200d"
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def entry_from_result(result: arxiv.Result) -> Entry | None:
    """A sanitised entry, or None when the result has no usable id, title or date."""
    try:
        arxiv_id = parse_arxiv_id(clean_text(result.entry_id, 200))
    except ArxivImportError:
        return None
    title = clean_text(result.title, MAX_TITLE)
    if not title or result.published is None:
        return None
    authors = [clean_text(a.name, MAX_AUTHOR).replace(";", ",") for a in result.authors]
    return Entry(
        arxiv_id=arxiv_id,
        title=title,
        authors=[a for a in authors if a][:MAX_AUTHORS],
        submitted=result.published.date(),
        primary_category=clean_text(result.primary_category, MAX_CATEGORY),
        abstract=clean_text(result.summary, MAX_ABSTRACT),
    )


def family_query(family: QueryFamily, since: dt.date, until: dt.date) -> str:
    """The arXiv query of one family: any term in title or abstract, submitted in the window."""
    terms = " OR ".join(f'ti:"{t}" OR abs:"{t}"' for t in family.terms)
    window = f"submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"
    return f"({terms}) AND {window}"


def search_family(
    client: arxiv.Client, family: QueryFamily, since: dt.date, until: dt.date, paging: Paging
) -> tuple[list[Entry], bool]:
    """Every sanitised entry the API returns for one family (in the window or not).

    At most ``paging.max_per_family`` results are asked for; the flag says whether
    the API had that many (the family's results may be cut short).
    """
    search = arxiv.Search(
        query=family_query(family, since, until),
        max_results=paging.max_per_family,
        sort_by=arxiv.SortCriterion.SubmittedDate,
        sort_order=arxiv.SortOrder.Descending,
    )
    url = client.query_url_format.split("?")[0]
    try:
        with quiet_arxiv_logger():
            results = list(client.results(search))
    except arxiv.HTTPError as err:
        raise ScreeningError(
            f"the arXiv API at {url} answered HTTP {err.status} for family {family.id}; "
            "try again later"
        ) from None
    except arxiv.ArxivError as err:
        raise ScreeningError(f"the arXiv API at {url} failed: {err.message}") from None
    except ResponseTooLarge as err:
        raise ScreeningError(f"the arXiv API at {url} sent {err}; refused") from None
    except requests.RequestException as err:
        reason = network_reason(err, paging.timeout)
        raise ScreeningError(f"cannot reach the arXiv API at {url} ({reason})") from None
    entries = [e for e in map(entry_from_result, results) if e is not None]
    return entries, len(results) >= paging.max_per_family


def retrieve(
    protocol: Protocol,
    since: dt.date,
    until: dt.date,
    paging: Paging,
    endpoint: str | None = None,
) -> tuple[dict[str, Entry], dict[str, int], list[str]]:
    """Unique entries by arXiv id (families merged), the number each family returned,
    and the families whose results reached ``paging.max_per_family``."""
    client = arxiv_client(
        arxiv_endpoint(endpoint),
        timeout=paging.timeout,
        page_size=paging.page_size,
        delay_seconds=paging.delay_seconds,
        num_retries=paging.num_retries,
        session=_BoundedSession(paging.timeout),
    )
    found: dict[str, Entry] = {}
    per_family: dict[str, int] = {}
    capped: list[str] = []
    for family in protocol.families:
        entries, full = search_family(client, family, since, until, paging)
        per_family[family.id] = len({e.arxiv_id for e in entries})
        if full:
            capped.append(family.id)
        for entry in entries:
            kept = found.setdefault(entry.arxiv_id, entry)
            if family.id not in kept.families:
                kept.families.append(family.id)
    return dict(sorted(found.items())), per_family, capped


# ---------------------------------------------------------------- duplicates


def title_key(title: str) -> str:
    """A title for look-alike comparison: accents folded, then the records' normalisation."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return normalise_title(folded)


@dataclass
class Known:
    """What the knowledge base already holds: arXiv ids and titles, each with its label."""

    ids: dict[str, str] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    def add(self, label: str, arxiv_ids: Iterable[str], title: object) -> None:
        for aid in arxiv_ids:
            self.ids.setdefault(aid, label)
        if isinstance(title, str) and title_key(title):
            self.titles.setdefault(title_key(title), label)


def known_records(root: Path, before: Iterable[Round] = ()) -> Known:
    """Pool, exclusions and the candidates of earlier rounds."""
    known = Known()
    records = read_records(root)
    for rec in records.papers + records.exclusions:
        if isinstance(rec.data, dict):
            known.add(rec.rel, arxiv_ids_of(rec.data), rec.data.get("title"))
    for earlier in before:
        for entry in read_entries(root, earlier.id).values():
            label = f"{SCREENING_DIR}/{earlier.id}/{CANDIDATES_CSV} ({entry.arxiv_id})"
            known.add(label, [entry.arxiv_id], entry.title)
    return known


def mark_duplicates(
    entries: Iterable[Entry], known: Known, threshold: float, within: bool = False
) -> None:
    """Set ``duplicate_of`` and ``match`` on every entry the knowledge base already holds.

    ``within``: also compare entries with each other, in id order, so a title
    posted twice under two ids keeps its first id.
    """
    from rapidfuzz import fuzz, process

    titles = dict(known.titles)
    for entry in entries:
        if entry.duplicate_of:
            continue
        if entry.arxiv_id in known.ids:
            entry.duplicate_of, entry.match = known.ids[entry.arxiv_id], "same arXiv id"
            continue
        key = title_key(entry.title)
        best = process.extractOne(key, list(titles), scorer=fuzz.ratio, score_cutoff=threshold)
        if best is not None:
            entry.duplicate_of = titles[best[0]]
            entry.match = f"look-alike title (similarity {best[1]:.1f})"
        elif within:
            titles.setdefault(key, f"this round ({entry.arxiv_id})")


# ---------------------------------------------------------------- ranking


def pool_texts(root: Path) -> list[str]:
    """Each pooled paper's title and summary (the ranking's reference texts).

    Read from the record files, not the validated pool: papers a previous round
    included are still unfinished (TODO) while the next round runs.
    """
    texts = []
    for rec in read_records(root).papers:
        data = rec.data if isinstance(rec.data, dict) else {}
        parts = [data.get(f) for f in ("title", "summary")]
        text = " ".join(p for p in parts if isinstance(p, str) and p != PLACEHOLDER)
        if text.strip():
            texts.append(text)
    return texts


def score_entries(entries: list[Entry], pool: list[str], family_weight: float) -> None:
    """Set ``score``: best TF-IDF cosine similarity to a pooled paper + weight x families."""
    if not entries:
        return
    texts = [f"{e.title} {e.abstract}" for e in entries]
    similarity = [0.0] * len(entries)
    if pool:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.metrics.pairwise import cosine_similarity

        vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        vectorizer.fit(pool + texts)
        matrix = cosine_similarity(vectorizer.transform(texts), vectorizer.transform(pool))
        similarity = [float(row.max()) for row in matrix]
    for entry, sim in zip(entries, similarity, strict=True):
        entry.score = round(sim + family_weight * len(entry.families), 4)


def ranked(entries: Iterable[Entry]) -> list[Entry]:
    """Best score first, then by id (deterministic)."""
    return sorted(entries, key=lambda e: (-(e.score or 0.0), e.arxiv_id))


# ---------------------------------------------------------------- writing


def csv_cell(text: str) -> str:
    """A cell no spreadsheet runs as a formula (a leading quote marks it as text)."""
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def candidates_csv(entries: list[Entry]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in entries:
        writer.writerow(
            [
                e.arxiv_id,
                csv_cell(e.title),
                csv_cell("; ".join(e.authors)),
                e.submitted.isoformat(),
                ";".join(e.families),
                "" if e.score is None else f"{e.score:.4f}",
                e.duplicate_of,
            ]
        )
    return out.getvalue()


def candidates_ris(entries: list[Entry]) -> str:
    """RIS for ASReview LAB or Zotero: the arXiv id in ID, the abs page in UR."""
    import rispy

    refs = [
        {
            "type_of_reference": "JOUR",
            "id": e.arxiv_id,
            "title": e.title,
            "authors": e.authors,
            "year": str(e.submitted.year),
            "date": e.submitted.strftime("%Y/%m/%d"),
            "abstract": e.abstract,
            "journal_name": f"arXiv preprint arXiv:{e.arxiv_id}",
            "urls": [f"https://arxiv.org/abs/{e.arxiv_id}"],
            "keywords": list(e.families),
            "name_of_database": "arXiv",
        }
        for e in entries
    ]
    return rispy.dumps(refs)


def yaml_text(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def round_data(rnd: Round) -> dict:
    data = {
        "round": rnd.id,
        "window": {"since": rnd.since, "until": rnd.until},
        "run_on": rnd.run_on,
        "source": "arxiv",
        "families": rnd.families,
        "counts": dict(rnd.counts),
        "duplicates": rnd.duplicates,
        "retrieved_per_family": rnd.per_family,
    }
    if rnd.capped:
        data["capped"] = rnd.capped
    if rnd.decided:
        data["decision_counts"] = {
            "included": rnd.included,
            "excluded": rnd.excluded,
            "awaiting": rnd.awaiting,
        }
        data["decided"] = rnd.decided
    return data


def _write_round_dir(target: Path, files: dict[str, str]) -> None:
    """Create ``target`` with ``files`` at once: built beside it, then renamed."""
    if target.exists():
        raise ScreeningError(f"{target} already exists: refusing to overwrite a round")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        for name, text in files.items():
            with open(tmp / name, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        os.rename(tmp, target)  # fails if target appeared meanwhile: never overwrites
    except OSError as err:
        raise ScreeningError(f"cannot write {target}: {err.strerror or err}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replace_file(path: Path, text: str) -> bool:
    """Atomically replace a machine-written file; False when the text is unchanged."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return True


# ---------------------------------------------------------------- screen run


@dataclass
class RunResult:
    round: Round
    folder: Path
    candidates: list[Entry]
    duplicates: list[Entry]


def run_round(
    since: dt.date,
    until: dt.date | None = None,
    root: str | os.PathLike[str] | None = None,
    paging: Paging | None = None,
    endpoint: str | None = None,
    today: dt.date | None = None,
) -> RunResult:
    """Search, deduplicate, rank and write one round; nothing is written on failure."""
    base = find_root(root)
    today = today or dt.date.today()
    until = until or today
    if until < since:
        raise ScreeningError(f"--until {until} is before --since {since}")
    protocol = load_protocol(base)
    rid = round_id(since, until)
    folder = round_dir(base, rid)
    if folder.exists():
        raise ScreeningError(f"round {rid} already exists in {SCREENING_DIR}/{rid}")
    earlier = load_rounds(base)
    known = known_records(base, earlier)
    pool = pool_texts(base)
    found, per_family, capped = retrieve(protocol, since, until, paging or Paging(), endpoint)
    # Duplicates first (a pooled paper's new version keeps its first submission date),
    # then the window, then look-alikes among the round's own entries.
    entries = list(found.values())
    mark_duplicates(entries, known, protocol.title_similarity)
    fresh = [e for e in entries if not e.duplicate_of]
    in_window = [e for e in fresh if since <= e.submitted <= until]
    mark_duplicates(in_window, Known(), protocol.title_similarity, within=True)
    candidates = [e for e in in_window if not e.duplicate_of]
    duplicates = [e for e in entries if e.duplicate_of]
    score_entries(candidates, pool, protocol.family_weight)
    candidates = ranked(candidates)
    rnd = Round(
        id=rid,
        since=since,
        until=until,
        run_on=today,
        families=[f.id for f in protocol.families],
        counts={
            "retrieved": len(found),
            "outside_window": len(fresh) - len(in_window),
            "duplicates_removed": len(duplicates),
            "to_screen": len(candidates),
        },
        duplicates=[
            {"id": e.arxiv_id, "duplicate_of": e.duplicate_of, "match": e.match} for e in duplicates
        ],
        per_family=per_family,
        capped=capped,
    )
    files = {
        CANDIDATES_CSV: candidates_csv(candidates + duplicates),
        CANDIDATES_RIS: candidates_ris(candidates),
        ENTRIES_JSON: json.dumps(
            [e.to_json() for e in candidates], indent=1, ensure_ascii=False, sort_keys=True
        )
        + "\n",
        ROUND_FILE: yaml_text(round_data(rnd)),
    }
    _write_round_dir(folder, files)
    return RunResult(rnd, folder, candidates, duplicates)


def read_entries(root: Path, rid: str) -> dict[str, Entry]:
    """The candidates of a round, by arXiv id, from its ``entries.json``."""
    path = round_dir(root, rid) / ENTRIES_JSON
    if not path.is_file() or path.is_symlink():
        return {}
    if path.stat().st_size > MAX_RESPONSE_BYTES:
        raise ScreeningError(f"{path} is larger than expected; refusing to read it")
    try:
        entries = [Entry.from_json(d) for d in json.loads(path.read_text(encoding="utf-8"))]
    except (ValueError, TypeError, KeyError) as err:
        raise ScreeningError(f"{path}: malformed ({err})") from None
    return {e.arxiv_id: e for e in entries}


# ---------------------------------------------------------------- decisions


@dataclass(frozen=True)
class Decision:
    """One screening decision read from a decisions file."""

    arxiv_id: str
    decision: str  # include or exclude
    reason: str | None
    line: int


def _read_bounded(path: Path) -> bytes:
    if not path.is_file() or path.is_symlink():
        raise ScreeningError(f"{path}: no such file")
    if path.stat().st_size > MAX_DECISION_BYTES:
        raise ScreeningError(f"{path}: larger than {MAX_DECISION_BYTES} bytes")
    return path.read_bytes()


def _id_from(values: Iterable[object]) -> str | None:
    """The first arXiv id among cell values (an id, ``arXiv:`` id or arxiv.org URL)."""
    for value in values:
        if not isinstance(value, str) or not value.strip():
            continue
        for part in [value.strip(), *_ARXIV_IN_TEXT.findall(value)]:
            try:
                return parse_arxiv_id(part)
            except ArxivImportError:
                continue
    return None


def _csv_rows(text: str) -> tuple[list[str], list[tuple[int, dict]]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    rows = []
    for row in reader:
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items() if k}
        rows.append((reader.line_num, clean))
    return header, rows


_ID_COLUMNS = ("id", "arxiv_id", "record_id", "url", "urls", "doi", "journal_name", "notes")


def read_decisions(
    path: Path,
    default_reason: str | None,
    reasons: tuple[str, ...],
    candidates: Iterable[str] | None = None,
) -> list[Decision]:
    """Decisions from an ASReview export (CSV with ``included``, or RIS) or ``id,decision,reason``.

    Entries ASReview has not labelled are skipped. Every problem is collected and
    raised at once as :class:`DecisionFileError`.
    """
    raw = _read_bounded(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DecisionFileError([f"{path}:1: file: not UTF-8 text"]) from None
    name = path.name
    problems: list[str] = []
    found: list[Decision] = []
    if path.suffix.lower() == ".ris" or re.search(r"^TY  - ", text, re.MULTILINE):
        items = _ris_items(text, name, problems)
    else:
        items = _csv_items(text, name, problems)
    allowed = ", ".join(reasons)
    wanted = None if candidates is None else set(candidates)
    for line, arxiv_id, decision, reason in items:
        if wanted is not None and arxiv_id not in wanted:
            problems.append(f"{name}:{line}: id: {arxiv_id} is not a candidate of this round")
            continue
        if decision == "exclude":
            reason = reason or default_reason
            if not reason:
                problems.append(
                    f"{name}:{line}: reason: an exclusion needs a reason code (a reason column "
                    f"or --reason); allowed: {allowed}"
                )
                continue
            if reason not in reasons:
                problems.append(
                    f"{name}:{line}: reason: unknown code {reason!r}; allowed: {allowed}"
                )
                continue
        found.append(Decision(arxiv_id, decision, reason if decision == "exclude" else None, line))
    seen: dict[str, Decision] = {}
    for d in found:
        first = seen.setdefault(d.arxiv_id, d)
        if first is not d and (first.decision, first.reason) != (d.decision, d.reason):
            problems.append(
                f"{name}:{d.line}: id: {d.arxiv_id} decided differently on line {first.line}"
            )
    if problems:
        raise DecisionFileError(problems)
    return list(seen.values())


def _csv_items(text: str, name: str, problems: list[str]):
    header, rows = _csv_rows(text)
    if "included" in header:
        kind = "asreview"
    elif {"id", "decision"} <= set(header):
        kind = "plain"
    else:
        problems.append(
            f"{name}:1: header: expected an ASReview export (an 'included' column) or the "
            f"columns id,decision,reason; got {','.join(header) or 'nothing'}"
        )
        return
    for line, row in rows:
        arxiv_id = _id_from(row.get(c) for c in _ID_COLUMNS)
        if arxiv_id is None:
            problems.append(f"{name}:{line}: id: no arXiv id in columns {', '.join(_ID_COLUMNS)}")
            continue
        if kind == "asreview":
            value = row.get("included", "")
            decision = {"1": "include", "1.0": "include", "0": "exclude", "0.0": "exclude"}.get(
                value, "?" if value else None
            )
            if decision is None:  # not labelled yet
                continue
            if decision == "?":
                problems.append(f"{name}:{line}: included: {value!r}; allowed: 1, 0 or empty")
                continue
        else:
            decision = row.get("decision", "").lower()
            if decision not in ("include", "exclude"):
                given = row.get("decision", "")
                problems.append(f"{name}:{line}: decision: {given!r}; allowed: include, exclude")
                continue
        yield line, arxiv_id, decision, row.get("reason") or None


def _ris_items(text: str, name: str, problems: list[str]):
    import rispy

    try:
        refs = rispy.loads(text)
    except Exception as err:  # rispy raises plain exceptions on bad structure
        problems.append(f"{name}:1: ris: cannot read the RIS file ({err})")
        return
    starts = [i for i, t in enumerate(text.splitlines(), 1) if t.startswith("TY  -")]
    for ref, line in zip(refs, starts, strict=False):
        notes = [str(n).strip().lower() for n in ref.get("notes", []) or []]
        labels = [_ASREVIEW_LABELS[n] for n in notes if n in _ASREVIEW_LABELS]
        if not labels or labels[0] is None:
            continue
        arxiv_id = _id_from([ref.get("id"), *(ref.get("urls") or []), ref.get("journal_name")])
        if arxiv_id is None:
            problems.append(f"{name}:{line}: id: no arXiv id in ID, UR or JO")
            continue
        reason = next((n.split(":", 1)[1].strip() for n in notes if n.startswith("reason:")), None)
        yield line, arxiv_id, labels[0], reason


@dataclass
class DecideResult:
    round: Round
    written: list[Path]
    already: list[str]  # ids whose record existed before (a rerun, or added by hand)


def decide_round(
    rid: str,
    decisions_file: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    stage: str = "abstract_screen",
    default_reason: str | None = None,
    today: dt.date | None = None,
) -> DecideResult:
    """Turn a round's decisions into paper and exclusion records; idempotent."""
    base = find_root(root)
    rnd = load_round(base, rid)
    tax = load_taxonomy(base)
    protocol = load_protocol(base)
    reasons = tax[protocol.reason_axis].ids
    if stage not in tax[protocol.stage_axis].ids:
        allowed = ", ".join(tax[protocol.stage_axis].ids)
        raise ScreeningError(f"--stage: unknown value {stage!r}; allowed: {allowed}")
    if default_reason is not None and default_reason not in reasons:
        raise ScreeningError(
            f"--reason: unknown code {default_reason!r}; allowed: {', '.join(reasons)}"
        )
    path = Path(decisions_file)
    entries = read_entries(base, rid)
    decisions = read_decisions(path, default_reason, reasons, candidates=entries)
    problems = []
    for d in decisions:
        before = rnd.decided.get(d.arxiv_id)
        if before and (before["decision"], before.get("reason")) != (d.decision, d.reason):
            problems.append(
                f"{path.name}:{d.line}: decision: {d.arxiv_id} was already decided as "
                f"{before['decision']} ({before.get('record')}); edit that record by hand"
            )
    if problems:
        raise DecisionFileError(problems)
    today = today or dt.date.today()
    written, already = [], []
    for d in decisions:
        if d.arxiv_id in rnd.decided:
            already.append(d.arxiv_id)
            continue
        entry = entries[d.arxiv_id]
        try:
            if d.decision == "include":
                done = add_paper(d.arxiv_id, root=base, today=today, paper=entry.paper())
            else:
                label = tax[protocol.reason_axis].label_of(d.reason)
                done = exclude_record(
                    d.arxiv_id,
                    stage=stage,
                    reason=d.reason,
                    root=base,
                    source="arxiv",
                    query_family=entry.families[0] if entry.families else None,
                    note=f"Screened out in round {rid}: {label.lower()}.",
                    today=today,
                    paper=entry.paper(),
                )
        except AlreadyRecorded as err:
            already.append(d.arxiv_id)
            record = err.matches[0].split(":", 1)[1].strip().split(":")[0]
            rnd.decided[d.arxiv_id] = {"decision": d.decision, "reason": d.reason, "record": record}
            continue
        except ArxivImportError as err:
            raise ScreeningError(str(err)) from None
        written.append(done.path)
        rnd.decided[d.arxiv_id] = {
            "decision": d.decision,
            "reason": d.reason,
            "record": done.path.relative_to(base).as_posix(),
        }
    path = round_dir(base, rid) / ROUND_FILE
    replace_file(path, yaml_text(round_data(rnd)))  # unchanged text: file left alone
    return DecideResult(rnd, written, already)


__all__ = [
    "DecideResult",
    "DecisionFileError",
    "Entry",
    "Paging",
    "RunResult",
    "ScreeningError",
    "decide_round",
    "read_decisions",
    "run_round",
]
