"""Benchmark: de-duplicating a screening batch of N entries (run by hand).

    python bench/bench_screening.py [--entries 40000] [--seed 1]

Builds N synthetic entries (titles of 6-14 words drawn from a fixed word list,
one in ten a look-alike of an earlier one with a one-letter slip) against the
real pool and exclusions, then times :func:`mark_duplicates` as ``screen run``
and ``screen import`` call it: first against what the knowledge base holds,
then within the batch. Issue 19 asks for 40,000 entries in seconds (the
all-pairs comparison it replaced took 152 s). The number of look-alikes found
is printed beside brute force on the first 2,000 entries, as a sanity check.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import time
from pathlib import Path

from masrl_kb.contrib.screen.dedup import Known, known_records, mark_duplicates
from masrl_kb.contrib.screen.entries import Entry
from masrl_kb.kb.protocol import load_protocol

ROOT = Path(__file__).resolve().parent.parent
WORDS = (
    "agent agents multi learning reinforcement language model models llm team teams "
    "orchestration orchestrator credit assignment message messages debate reward policy "
    "optimisation training post tool tools web coding software planner executor critic "
    "routing delegation swarm benchmark safety attack injection graph memory reasoning "
    "search verification self play game cooperative decentralised centralised value "
    "function shapley counterfactual turn level token trajectory rollout group relative"
).split()


def synthetic(n: int, seed: int) -> list[Entry]:
    rng = random.Random(seed)
    titles: list[str] = []
    for i in range(n):
        if titles and i % 10 == 9:
            base = list(rng.choice(titles))
            at = rng.randrange(len(base))
            base[at] = rng.choice("abcdefghijklmnopqrstuvwxyz")
            titles.append("".join(base))
        else:
            words = [rng.choice(WORDS) for _ in range(rng.randint(6, 14))]
            titles.append(" ".join(words).capitalize())
    day = dt.date(2026, 6, 1)
    return [Entry(f"2606.{i:05d}", t, [], day, "cs.MA", "") for i, t in enumerate(titles)]


def brute_force(entries: list[Entry], threshold: float) -> int:
    from rapidfuzz import fuzz, process

    from masrl_kb.contrib.screen.entries import title_key

    seen: list[str] = []
    found = 0
    for e in entries:
        key = title_key(e.title)
        if seen and process.extractOne(key, seen, scorer=fuzz.ratio, score_cutoff=threshold):
            found += 1
        else:
            seen.append(key)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    threshold = load_protocol(ROOT).title_similarity
    entries = synthetic(args.entries, args.seed)
    start = time.perf_counter()
    known = known_records(ROOT)
    mark_duplicates(entries, known, threshold)
    fresh = [e for e in entries if not e.duplicate_of]
    mark_duplicates(fresh, Known(), threshold, within="this batch")
    seconds = time.perf_counter() - start
    dups = sum(1 for e in entries if e.duplicate_of)
    print(f"{args.entries} entries: {dups} duplicates in {seconds:.2f} s")
    sample = synthetic(2000, args.seed)
    mark_duplicates(sample, Known(), threshold, within="this batch")
    blocked = sum(1 for e in sample if e.duplicate_of)
    print(f"first 2000: blocked {blocked}, brute force {brute_force(sample, threshold)}")


if __name__ == "__main__":
    main()
