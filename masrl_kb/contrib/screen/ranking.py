"""The order a round's candidates are screened in: best score first. The score is the TF-IDF
cosine similarity (scikit-learn) of a candidate's title and abstract to the closest pooled
paper's title and summary, plus ``ranking.family_weight`` per query family it matches.
"""

from __future__ import annotations

from collections.abc import Iterable

from masrl_kb.contrib.screen.entries import Entry
from masrl_kb.kb.fields import PLACEHOLDER
from masrl_kb.kb.records import RecordSet


def pool_texts(records: RecordSet) -> list[str]:
    """Each pooled paper's title and summary, from the record files (``records``, as
    :func:`~masrl_kb.kb.records.read_records` read them): papers a previous round included
    are still unfinished (TODO), so the validated pool lacks them."""
    texts = []
    for rec in records.papers:
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


def ranked(entries: Iterable[Entry], records: RecordSet, family_weight: float) -> list[Entry]:
    """The entries scored against the pool's ``records``, best score first, then by id
    (deterministic)."""
    entries = list(entries)
    score_entries(entries, pool_texts(records), family_weight)
    return sorted(entries, key=lambda e: (-(e.score or 0.0), e.id))
