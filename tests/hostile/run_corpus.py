"""Run the whole hostile-input corpus and count the outcomes by group.

    python -m tests.hostile.run_corpus [-v]

Prints one row per group: rejected cleanly / sanitised (arXiv or index text
cleaned, then written; for sources also a 429 then a good answer) / rejected but
unclear / accepted / crashed (traceback or hang). Probes (CSV formulas, caches)
count a clean run as "rejected" (handled cleanly), a failed check as "unclear", a
crash or hang as "crashed". Exit status 1 when any case is not rejected cleanly
(the tests in tests/test_hostile.py assert the same, case by case).
"""

from __future__ import annotations

import argparse
import collections
import sys

from tests.hostile.corpus import all_cases, run_case
from tests.hostile.probes import all_probes, run_probe
from tests.hostile.running import in_scratch

KINDS = ("rejected", "sanitised", "unclear", "accepted", "crashed")
# Probes end clean, wrong, crashed or hung; counted in the same table.
PROBE_KIND = {"clean": "rejected", "wrong": "unclear", "crashed": "crashed", "hung": "crashed"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="show each case")
    args = parser.parse_args()
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    bad = []
    for case in all_cases():
        outcome = in_scratch(run_case, case)
        counts[case.group][outcome.kind] += 1
        if outcome.kind != "rejected":
            bad.append((case.id, outcome.kind, outcome.reason or outcome.output[-300:]))
        if args.verbose:
            print(f"{outcome.kind:<9} {case.id}")
    for probe in all_probes():
        outcome = in_scratch(run_probe, probe)
        counts[probe.group][PROBE_KIND[outcome.kind]] += 1
        if outcome.kind != "clean":
            bad.append((probe.id, outcome.kind, outcome.reason[-300:]))
        if args.verbose:
            print(f"{outcome.kind:<9} {probe.id}")
    try:
        from tests.hostile.arxiv_cases import arxiv_counts

        counts["arxiv"].update(arxiv_counts(bad))
    except ImportError:
        pass
    from tests.hostile.screen_cases import screen_counts
    from tests.hostile.sources_cases import source_counts

    for group, found in screen_counts(bad).items():
        counts[group].update(found)
    counts["sources"].update(source_counts(bad))
    from tests.hostile.network_cases import network_counts

    counts["network"].update(network_counts(bad))
    from tests.hostile.release_cases import release_counts

    counts["release"].update(release_counts(bad))
    print(f"{'group':<18}" + "".join(f"{k:>10}" for k in KINDS) + f"{'total':>8}")
    for group, c in counts.items():
        print(f"{group:<18}" + "".join(f"{c[k]:>10}" for k in KINDS) + f"{sum(c.values()):>8}")
    total = sum((c for c in counts.values()), collections.Counter())
    print(f"{'all':<18}" + "".join(f"{total[k]:>10}" for k in KINDS) + f"{sum(total.values()):>8}")
    for case_id, kind, reason in bad:
        print(f"{kind}: {case_id}: {reason}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
