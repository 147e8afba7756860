"""Living-review screening rounds: ``masrl-kb screen run``, ``screen import`` and
``screen decide``.

A round is a window of first-publication dates, ``screening/<since>_<until>/``.
It holds one or more source batches: ``screen run`` runs every query family
of ``protocol.yaml`` against arXiv (source ``arxiv``); ``screen import`` reads
a candidate list exported elsewhere (RIS, BibTeX or CSV: OpenReview,
OpenAlex, Semantic Scholar, a curated list...) into the same window. Each
batch removes what the knowledge base already holds (pool, exclusions, other
rounds, earlier batches of the same round), keeps what falls in the window,
and the round's candidates are ranked again together. The folder holds:

- ``candidates.csv``: id, title, authors, submitted, families, score,
  duplicate_of, source, url (candidates first, best score first; removed
  duplicates last, each naming the record it duplicates);
- ``candidates.ris``: the candidates for ASReview or Zotero (written with rispy);
- ``entries.json``: the candidates' metadata, so ``decide`` needs no network;
- ``round.yaml``: window, source batches and counts; ``decide`` adds decisions.

Duplicates: :mod:`masrl_kb.contrib.screen_dedup`. The score is the TF-IDF
cosine similarity (scikit-learn) of a candidate's title and abstract to the
most similar pooled paper's title and summary, plus ``ranking.family_weight``
per query family whose terms it matches.

Outside text is hostile: control characters are dropped, whitespace
collapsed, lengths bounded, ids checked, API answers capped in size and
time (one overall deadline per request, a non-feed answer is an error),
and CSV cells that a spreadsheet would run as a formula are quoted.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from masrl_kb.contrib.arxiv_client import (
    ENV_DEADLINE,
    AtomEntry,
    FetchError,
    HttpStatusError,
    Limits,
    http_get,
    parse_feed,
)
from masrl_kb.contrib.arxiv_import import arxiv_endpoint, parse_arxiv_id
from masrl_kb.contrib.export.csv_io import guard_cell
from masrl_kb.contrib.screen_decide import DecideResult, DecisionFileError, decide_round
from masrl_kb.contrib.screen_dedup import Known, add_round, known_records, mark_duplicates
from masrl_kb.contrib.screen_entries import (
    CANDIDATES_CSV,
    CANDIDATES_RIS,
    ENTRIES_JSON,
    MAX_ABSTRACT,
    MAX_AUTHOR,
    MAX_AUTHORS,
    MAX_CATEGORY,
    MAX_TITLE,
    Entry,
    clean_text,
    entries_json,
    match_families,
    query_families,
    read_entries,
)
from masrl_kb.contrib.screen_files import ImportFileError, read_candidates
from masrl_kb.contrib.screen_store import (
    ScreeningError,
    round_data,
    round_lock,
    write_round_folder,
    yaml_text,
)
from masrl_kb.kb.fields import PLACEHOLDER
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.protocol import Protocol, QueryFamily, load_protocol
from masrl_kb.kb.records import read_records
from masrl_kb.kb.rounds import (
    ROUND_FILE,
    SCREENING_DIR,
    Round,
    RoundError,
    load_round,
    load_rounds,
    round_dir,
    round_id,
)
from masrl_kb.kb.taxonomy import load_taxonomy

CSV_COLUMNS = (
    "id",
    "title",
    "authors",
    "submitted",
    "families",
    "score",
    "duplicate_of",
    "source",
    "url",
)
ENV_DELAY = "MASRL_KB_ARXIV_DELAY"
MAX_RESPONSE_BYTES = 20 * 1024 * 1024
MAX_QUERY = 2000
# arXiv opened in August 1991; an earlier window is a typing slip.
EARLIEST_RUN = dt.date(1991, 8, 1)


class ArxivAnswerError(ScreeningError):
    """The arXiv API failed or answered something that is not a usable feed."""


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class Paging:
    """How politely to page through the API (arXiv asks for one request per 3 s).

    ``timeout`` is one overall deadline per request: connecting, retries and
    every byte of the answer (``MASRL_KB_ARXIV_DEADLINE`` sets it).
    """

    page_size: int = 100
    delay_seconds: float = 3.0
    num_retries: int = 3
    max_per_family: int = 2000
    timeout: float = 60.0

    @classmethod
    def from_env(cls, **overrides) -> Paging:
        """Defaults, ``MASRL_KB_ARXIV_DELAY``/``_DEADLINE`` (seconds), then overrides."""
        values = {k: v for k, v in overrides.items() if v is not None}
        for env, name in ((ENV_DELAY, "delay_seconds"), (ENV_DEADLINE, "timeout")):
            if os.environ.get(env) and name not in values:
                try:
                    value = float(os.environ[env])
                except ValueError:
                    raise ScreeningError(f"{env} must be a number of seconds") from None
                if not 0 <= value <= 3600:
                    raise ScreeningError(f"{env} must be between 0 and 3600 seconds")
                values[name] = value
        return cls(**values)

    def limits(self) -> Limits:
        return Limits(
            deadline=self.timeout,
            delay=self.delay_seconds,
            attempts=self.num_retries + 1,
            max_body=MAX_RESPONSE_BYTES,
            max_expanded=MAX_RESPONSE_BYTES,
        )


# ---------------------------------------------------------------- arXiv


def entry_from_atom(atom: AtomEntry) -> Entry:
    """A sanitised entry; :class:`ArxivAnswerError` when the entry is malformed."""
    raw_id = clean_text(atom.id, 200)
    if "/api/errors" in raw_id:  # arXiv reports a bad query as a feed with one error entry
        reason = clean_text(atom.summary, 200) or "an error entry"
        raise ArxivAnswerError(f"arXiv reported an error: {reason}")
    try:
        arxiv_id = parse_arxiv_id(raw_id)
    except Exception:  # noqa: BLE001 - parse_arxiv_id's own error type
        raise ArxivAnswerError(f"an entry with a malformed id {raw_id[:80]!r}") from None
    title = clean_text(atom.title, MAX_TITLE)
    if not title:
        raise ArxivAnswerError(f"entry {arxiv_id} has no title")
    try:
        published = dt.datetime.fromisoformat(atom.published.strip()).date()
    except ValueError:
        raise ArxivAnswerError(
            f"entry {arxiv_id} has a malformed <published> date {clean_text(atom.published, 40)!r}"
        ) from None
    if not EARLIEST_RUN <= published <= dt.date.today() + dt.timedelta(days=2):
        raise ArxivAnswerError(f"entry {arxiv_id} has an impossible <published> date {published}")
    authors = [clean_text(a, MAX_AUTHOR).replace(";", ",") for a in atom.authors]
    return Entry(
        arxiv_id=arxiv_id,
        title=title,
        authors=[a for a in authors if a][:MAX_AUTHORS],
        submitted=published,
        primary_category=clean_text(atom.primary_category, MAX_CATEGORY),
        abstract=clean_text(atom.summary, MAX_ABSTRACT),
    )


def family_query(family: QueryFamily, since: dt.date, until: dt.date) -> str:
    """The arXiv query of one family: any term in title or abstract, submitted in the window."""
    terms = " OR ".join(f'ti:"{t}" OR abs:"{t}"' for t in family.terms)
    window = f"submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"
    return f"({terms}) AND {window}"


def _page_url(endpoint: str, query: str, start: int, size: int) -> str:
    params = urlencode(
        {
            "search_query": query,
            "start": start,
            "max_results": size,
            "sortBy": "submittedDate",
            "sortOrder": "descending",
        }
    )
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{params}"


def search_family(
    endpoint: str, family: QueryFamily, since: dt.date, until: dt.date, paging: Paging
) -> tuple[list[Entry], bool]:
    """Every sanitised entry the API returns for one family (in the window or not).

    Pages until a short page or ``paging.max_per_family`` entries; the flag
    says whether that many came (the family's results may be cut short).
    """
    query, entries, start = family_query(family, since, until), [], 0
    while start < paging.max_per_family:
        size = min(paging.page_size, paging.max_per_family - start)
        if start:
            time.sleep(paging.delay_seconds)
        try:
            body = http_get(_page_url(endpoint, query, start, size), paging.limits())
        except HttpStatusError as err:
            raise ArxivAnswerError(
                f"the arXiv API at {endpoint} answered HTTP {err.status} for family "
                f"{family.id}; try again later"
            ) from None
        except FetchError as err:
            raise ArxivAnswerError(
                f"cannot reach the arXiv API at {endpoint} for family {family.id} ({err})"
            ) from None
        try:
            atoms = parse_feed(body)
        except FetchError as err:
            raise ArxivAnswerError(
                f"the arXiv API at {endpoint} answered a malformed feed for family "
                f"{family.id}: {err}"
            ) from None
        try:
            page = [entry_from_atom(a) for a in atoms[:size]]
        except ArxivAnswerError as err:
            raise ArxivAnswerError(
                f"the arXiv API at {endpoint} answered a malformed feed for family "
                f"{family.id}: {err}"
            ) from None
        entries += page
        start += len(page)
        if len(page) < size:
            break
    return entries, start >= paging.max_per_family


def retrieve(
    protocol: Protocol,
    since: dt.date,
    until: dt.date,
    paging: Paging,
    endpoint: str | None = None,
) -> tuple[dict[str, Entry], dict[str, int], list[str]]:
    """Unique entries by arXiv id (families merged), the number each family returned,
    and the families whose results reached ``paging.max_per_family``."""
    url = arxiv_endpoint(endpoint)
    found: dict[str, Entry] = {}
    per_family: dict[str, int] = {}
    capped: list[str] = []
    for n, family in enumerate(protocol.families):
        if n:
            time.sleep(paging.delay_seconds)
        entries, full = search_family(url, family, since, until, paging)
        per_family[family.id] = len({e.arxiv_id for e in entries})
        if full:
            capped.append(family.id)
        for entry in entries:
            kept = found.setdefault(entry.arxiv_id, entry)
            if family.id not in kept.families:
                kept.families.append(family.id)
    return dict(sorted(found.items())), per_family, capped


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
    return sorted(entries, key=lambda e: (-(e.score or 0.0), e.id))


# ---------------------------------------------------------------- writing


def csv_cell(text: str) -> str:
    """A cell no spreadsheet runs as a formula (the export layer's one guard)."""
    return guard_cell(text)


def candidates_csv(entries: list[Entry], kept: list[list[str]] = ()) -> str:
    """The candidates, then removed duplicates; ``kept``: earlier batches' duplicate rows."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for e in entries:
        writer.writerow(
            [
                csv_cell(e.id),
                csv_cell(e.title),
                csv_cell("; ".join(e.authors)),
                e.submitted.isoformat(),
                ";".join(e.families),
                "" if e.score is None else f"{e.score:.4f}",
                csv_cell(e.duplicate_of),
                e.source,
                csv_cell(e.link),
            ]
        )
    writer.writerows(kept)
    return out.getvalue()


def _ris_ref(e: Entry, source_label: str) -> dict:
    ref = {
        "type_of_reference": "JOUR",
        "id": e.id,
        "title": e.title,
        "authors": e.authors,
        "year": str(e.submitted.year),
        "date": e.submitted.strftime("%Y/%m/%d"),
        "abstract": e.abstract,
        "urls": [e.link] if e.link else [],
        "keywords": list(e.families),
        "name_of_database": source_label,
    }
    if e.arxiv_id:
        ref["journal_name"] = f"arXiv preprint arXiv:{e.arxiv_id}"
    if e.doi:
        ref["doi"] = e.doi
    return ref


def candidates_ris(entries: list[Entry], labels: dict[str, str] | None = None) -> str:
    """RIS for ASReview LAB or Zotero: the candidate id in ID, its address in UR."""
    import rispy

    labels = labels or {}
    return rispy.dumps([_ris_ref(e, labels.get(e.source, e.source)) for e in entries])


def round_files(
    rnd: Round,
    candidates: list[Entry],
    duplicates: list[Entry],
    labels: dict[str, str],
    kept: list[list[str]] = (),
) -> dict[str, str]:
    """The four files of a round folder (``kept``: earlier batches' duplicate rows)."""
    return {
        CANDIDATES_CSV: candidates_csv(candidates + duplicates, kept),
        CANDIDATES_RIS: candidates_ris(candidates, labels),
        ENTRIES_JSON: entries_json(candidates),
        ROUND_FILE: yaml_text(round_data(rnd)),
    }


# ---------------------------------------------------------------- a batch


@dataclass
class RunResult:
    round: Round
    folder: Path
    candidates: list[Entry]
    duplicates: list[Entry]  # removed by this batch

    @property
    def batch(self) -> dict:
        return self.round.batches[-1]


def check_window(since: dt.date, until: dt.date, today: dt.date, earliest: dt.date) -> None:
    if until < since:
        raise ScreeningError(f"--until {until} is before --since {since}")
    if until > today:
        raise ScreeningError(f"--until {until} is after today ({today}): the window is not over")
    if since < earliest:
        raise ScreeningError(f"--since {since} is before {earliest}")


def _screen_batch(
    entries: list[Entry], known: Known, since: dt.date, until: dt.date, threshold: float
) -> tuple[list[Entry], list[Entry], int]:
    """(new candidates, duplicates, number outside the window) of one batch.

    Duplicates first (a pooled paper's new version keeps its first date), then
    the window, then look-alikes among the batch's own entries.
    """
    mark_duplicates(entries, known, threshold)
    fresh = [e for e in entries if not e.duplicate_of]
    in_window = [e for e in fresh if since <= e.submitted <= until]
    mark_duplicates(in_window, Known(), threshold, within="this batch")
    candidates = [e for e in in_window if not e.duplicate_of]
    duplicates = [e for e in entries if e.duplicate_of]
    return candidates, duplicates, len(fresh) - len(in_window)


def _duplicate_rows(entries: list[Entry]) -> list[dict]:
    return [{"id": e.id, "duplicate_of": e.duplicate_of, "match": e.match} for e in entries]


def _old_duplicate_rows(folder: Path) -> list[list[str]]:
    """The duplicates rows of a round's ``candidates.csv``, as written (kept when a
    batch is added: their entries are not stored anywhere else)."""
    path = folder / CANDIDATES_CSV
    if path.is_symlink():
        raise ScreeningError(f"{path}: a symbolic link; refused")
    if not path.is_file():
        return []
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))[1:]
    width, dup = len(CSV_COLUMNS), CSV_COLUMNS.index("duplicate_of")
    # rounds written before source batches had no source and url columns
    return [(r + ["arxiv", ""])[:width] for r in rows if len(r) > dup and r[dup]]


# ---------------------------------------------------------------- screen run


def run_round(
    since: dt.date,
    until: dt.date | None = None,
    root: str | os.PathLike[str] | None = None,
    paging: Paging | None = None,
    endpoint: str | None = None,
    today: dt.date | None = None,
) -> RunResult:
    """Search arXiv, deduplicate, rank and write one round; nothing is written on failure."""
    base = find_root(root)
    today = today or dt.date.today()
    until = until or today
    check_window(since, until, today, EARLIEST_RUN)
    protocol = load_protocol(base)
    rid = round_id(since, until)
    folder = _round_folder(base, rid)
    if folder.exists():
        raise ScreeningError(f"round {rid} already exists in {SCREENING_DIR}/{rid}")
    pool = pool_texts(base)
    found, per_family, capped = retrieve(protocol, since, until, paging or Paging(), endpoint)
    with round_lock(base, rid):
        if folder.exists():
            raise ScreeningError(f"round {rid} already exists in {SCREENING_DIR}/{rid}")
        known = known_records(base, load_rounds(base))
        entries = list(found.values())
        candidates, duplicates, outside = _screen_batch(
            entries, known, since, until, protocol.title_similarity
        )
        score_entries(candidates, pool, protocol.family_weight)
        candidates = ranked(candidates)
        batch = {
            "name": "arxiv",
            "query": "\n".join(family_query(f, since, until) for f in protocol.families),
            "file": "",
            "imported_on": today,
            "identified": len(found),
            "duplicates_removed": len(duplicates),
            "outside_window": outside,
        }
        rnd = Round(
            id=rid,
            since=since,
            until=until,
            run_on=today,
            families=[f.id for f in protocol.families],
            counts={
                "retrieved": len(found),
                "outside_window": outside,
                "duplicates_removed": len(duplicates),
                "to_screen": len(candidates),
            },
            duplicates=_duplicate_rows(duplicates),
            per_family=per_family,
            capped=capped,
            sources=[batch],
        )
        write_round_folder(folder, round_files(rnd, candidates, duplicates, _labels(base)))
    return RunResult(rnd, folder, candidates, duplicates)


def _round_folder(base: Path, rid: str) -> Path:
    try:
        return round_dir(base, rid)
    except RoundError as err:
        raise ScreeningError(str(err)) from None


def _labels(base: Path) -> dict[str, str]:
    axis = load_taxonomy(base)["exclusion_source"]
    return {v: axis.label_of(v) for v in axis.ids}


# ---------------------------------------------------------------- screen import


def import_round(
    path: str | os.PathLike[str],
    source: str,
    since: dt.date,
    until: dt.date,
    query: str = "",
    root: str | os.PathLike[str] | None = None,
    today: dt.date | None = None,
    empty_ok: bool = False,
) -> RunResult:
    """Add a batch read from an exported list to the window's round (made if new).

    The whole file is read and checked first; a malformed file writes nothing. A
    candidate whose own title and abstract match no query family takes the first
    family the batch's ``query`` matches (the search that surfaced it), so its
    exclusion record can name one. ``empty_ok`` records a file with no candidate.
    """
    base = find_root(root)
    today = today or dt.date.today()
    check_window(since, until, today, dt.date(1950, 1, 1))
    sources = load_taxonomy(base)["exclusion_source"].ids
    if source not in sources:
        raise ScreeningError(
            f"--source: unknown value {source!r}; allowed (exclusion_source in taxonomy.yaml): "
            + ", ".join(sources)
        )
    query = clean_text(query, MAX_QUERY)
    protocol = load_protocol(base)
    path = Path(path)
    entries = read_candidates(path, source, today, empty_ok)
    searched = query_families(query, protocol.families)[:1]
    for entry in entries:
        match_families(entry, protocol.families)
        entry.families = entry.families or list(searched)
    rid = round_id(since, until)
    folder = _round_folder(base, rid)
    with round_lock(base, rid):
        return _import_locked(base, folder, rid, path.name, source, entries, protocol, query, today)


def _import_locked(
    base: Path,
    folder: Path,
    rid: str,
    file_name: str,
    source: str,
    entries: list[Entry],
    protocol: Protocol,
    query: str,
    today: dt.date,
) -> RunResult:
    since, until = (dt.date.fromisoformat(d) for d in rid.split("_"))
    existing = load_round(base, rid) if folder.exists() else None
    if existing and any((b["name"], b["file"]) == (source, file_name) for b in existing.batches):
        raise ScreeningError(
            f"round {rid} already has a batch from {file_name} (source {source}); nothing written"
        )
    others = [r for r in load_rounds(base) if r.id != rid]
    known = known_records(base, others)
    old = list(read_entries(base, rid).values()) if existing else []
    add_round(known, base, rid) if existing else None
    candidates, duplicates, outside = _screen_batch(
        entries, known, since, until, protocol.title_similarity
    )
    merged = old + candidates
    score_entries(merged, pool_texts(base), protocol.family_weight)
    merged = ranked(merged)
    batch = {
        "name": source,
        "query": query,
        "file": file_name,
        "imported_on": today,
        "identified": len(entries),
        "duplicates_removed": len(duplicates),
        "outside_window": outside,
    }
    rnd = _merged_round(existing, rid, since, until, today, batch, len(merged), duplicates)
    kept = _old_duplicate_rows(folder) if existing else []
    files = round_files(rnd, merged, duplicates, _labels(base), kept)
    write_round_folder(folder, files, replace=existing is not None)
    return RunResult(rnd, folder, merged, duplicates)


def _merged_round(
    existing: Round | None,
    rid: str,
    since: dt.date,
    until: dt.date,
    today: dt.date,
    batch: dict,
    to_screen: int,
    duplicates: list[Entry],
) -> Round:
    new = existing is None
    if existing is None:
        existing = Round(
            id=rid,
            since=since,
            until=until,
            run_on=today,
            families=[],
            counts={"retrieved": 0, "outside_window": 0, "duplicates_removed": 0, "to_screen": 0},
        )
    batches = [batch] if new else [*existing.batches, batch]
    counts = {
        "retrieved": sum(b["identified"] for b in batches),
        "outside_window": sum(b["outside_window"] for b in batches),
        "duplicates_removed": sum(b["duplicates_removed"] for b in batches),
        "to_screen": to_screen,
    }
    return Round(
        id=rid,
        since=since,
        until=until,
        run_on=existing.run_on,
        families=existing.families,
        counts=counts,
        duplicates=existing.duplicates + _duplicate_rows(duplicates),
        per_family=existing.per_family,
        capped=existing.capped,
        decided=existing.decided,
        sources=batches,
    )


__all__ = [
    "ArxivAnswerError",
    "DecideResult",
    "DecisionFileError",
    "Entry",
    "ImportFileError",
    "Paging",
    "RunResult",
    "ScreeningError",
    "clean_text",
    "decide_round",
    "import_round",
    "read_entries",
    "run_round",
]
