"""Look-alike de-duplication blocks titles (near-linear) and still finds what
comparing every pair finds; speed is measured by hand in bench/bench_screening.py."""

from __future__ import annotations

import datetime as dt
import random

from rapidfuzz import fuzz, process

from masrl_kb.contrib.screen.dedup import Known, TitleIndex, mark_duplicates
from masrl_kb.contrib.screen.entries import Entry, title_key

WORDS = (
    "agent agents multi learning reinforcement language model team orchestration credit "
    "assignment message debate reward policy training tool web coding planner critic routing "
    "delegation swarm benchmark safety attack graph memory reasoning search verification game "
    "value shapley counterfactual turn token trajectory rollout group relative"
).split()


def _entries(n: int, seed: int = 7) -> tuple[list[Entry], set[int]]:
    """n entries; one in ten a one-character slip of an earlier original."""
    rng = random.Random(seed)
    titles, variants = [], set()
    for i in range(n):
        if i % 10 == 9:
            base = list(titles[rng.choice([j for j in range(i) if j not in variants])])
            at = rng.randrange(len(base))
            base[at] = rng.choice("abcdefghijklmnopqrstuvwxyz ")
            titles.append("".join(base))
            variants.add(i)
        else:
            titles.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12))))
    day = dt.date(2026, 6, 1)
    return [Entry(f"2606.{i:05d}", t, [], day, "", "") for i, t in enumerate(titles)], variants


def _brute_force(entries: list[Entry], threshold: float) -> set[str]:
    seen: list[str] = []
    found = set()
    for e in entries:
        key = title_key(e.title)
        if seen and process.extractOne(key, seen, scorer=fuzz.ratio, score_cutoff=threshold):
            found.add(e.arxiv_id)
        else:
            seen.append(key)
    return found


def test_blocked_search_finds_what_all_pairs_find_on_2000_entries() -> None:
    entries, variants = _entries(2000)
    expected = _brute_force(entries, 92)
    mark_duplicates(entries, Known(), 92, within="this batch")
    found = {e.arxiv_id for e in entries if e.duplicate_of}
    assert found == expected
    assert {f"2606.{i:05d}" for i in variants} <= found  # every slip is caught
    assert all(e.match.startswith("look-alike title") for e in entries if e.duplicate_of)


def test_a_slip_at_either_end_is_found() -> None:
    index = TitleIndex()
    index.add(title_key("Learning to Orchestrate Agent Teams with Reinforcement Learning"), "p")
    for title in (
        "Lerning to Orchestrate Agent Teams with Reinforcement Learning",
        "Learning to Orchestrate Agent Teams with Reinforcement Learnin",
        "Learning to Orchestrate Agent Teams with Reinforcement Learning!",
    ):
        assert index.find(title_key(title), 92) is not None, title
    assert index.find(title_key("Learning to Route Queries Between Models"), 92) is None
