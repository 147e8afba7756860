"""Living-review commands: ``screen run|import|decide`` and ``import-upstream``.
A user error or a network failure prints its problems and exits 2; only
``screen migrate --check`` finding a round to migrate exits 1."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from masrl_kb.cli.common import EXIT_FAILED, EXIT_USER_ERROR, command, err, iso_date

if TYPE_CHECKING:
    from masrl_kb.contrib.screen.batches import RunResult

Handler = Callable[[argparse.Namespace], int]


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 600")
    return value


def _screening(run: Handler) -> Handler:
    """The handler running a screening step: its errors printed, exit 2 (a failed network
    call as anything else the user can fix)."""

    @functools.wraps(run)
    def handler(args: argparse.Namespace) -> int:
        from masrl_kb.contrib.screen.decide import DecisionFileError
        from masrl_kb.contrib.screen.import_files import ImportFileError
        from masrl_kb.contrib.screen.store import ScreeningError
        from masrl_kb.contrib.sources.arxiv import ArxivError
        from masrl_kb.kb.protocol import ProtocolError
        from masrl_kb.kb.rounds import RoundError

        try:
            return run(args)
        except ImportFileError as error:
            print(str(error), file=sys.stderr)
        except DecisionFileError as error:
            for line in error.problems:
                print(line, file=sys.stderr)
            from masrl_kb.contrib.screen.import_files import shown_name

            name = shown_name(args.file)
            err(f"{len(error.problems)} problem(s) in {name}: nothing written")
        except (ArxivError, ProtocolError) as error:
            err(str(error))
        except (ScreeningError, RoundError) as error:
            lines = str(error).splitlines() or [""]
            err(lines[0] + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""))
        return EXIT_USER_ERROR

    return handler


MAX_SHOWN = 20  # duplicates printed; the rest are in the round's duplicates.csv


def _print_round(result: RunResult, lines: list[str]) -> int:
    print(f"round {result.round.id}")
    for line in lines:
        print(f"  {line}")
    for e in result.duplicates[:MAX_SHOWN]:
        print(f"  duplicate {e.id}: {e.match} of {e.duplicate_of}")
    if len(result.duplicates) > MAX_SHOWN:
        more = len(result.duplicates) - MAX_SHOWN
        print(f"  ... and {more} more duplicate(s), listed in {result.folder.name}/duplicates.csv")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    files = "candidates.csv, candidates.ris, duplicates.csv, round.yaml"
    print(f"wrote {result.folder.name}/ ({files})")
    return 0


@_screening
def cmd_screen_run(args: argparse.Namespace) -> int:
    """Run every query family of protocol.yaml against arXiv for papers submitted in the
    window, remove duplicates of the pool, the exclusions and earlier rounds, rank the rest
    and write screening/<round-id>/."""
    from masrl_kb.contrib.screen.batches import run_round
    from masrl_kb.contrib.sources.arxiv import Paging

    paging = Paging.from_env(
        page_size=args.page_size, delay_seconds=args.delay, max_per_family=args.max_per_family
    )
    result = run_round(
        args.since, args.until, root=args.root, paging=paging, strategy=args.strategy or ""
    )
    rnd, counts = result.round, result.round.counts
    lines = [
        f"retrieved:          {counts['retrieved']}",
        f"outside the window: {counts['outside_window']}",
        f"duplicates removed: {counts['duplicates_removed']}",
        f"to screen:          {counts['to_screen']}",
        *(f"warning: family {f} reached --max-per-family; narrow the window" for f in rnd.capped),
    ]
    return _print_round(result, lines)


@_screening
def cmd_screen_import(args: argparse.Namespace) -> int:
    """Read a candidate list (RIS, BibTeX, or CSV with the columns
    id,title,authors,date,url,abstract and optionally doi,arxiv_id,openreview_id), remove
    duplicates of the pool, the exclusions, other rounds and earlier batches of the same
    round, and write or extend screening/<since>_<until>/."""
    from masrl_kb.contrib.screen.batches import import_round

    window = (args.file, args.source, args.since, args.until)
    result = import_round(
        *window,
        query=args.query or "",
        root=args.root,
        empty_ok=args.empty_ok,
        reached=args.reached,
        strategy=args.strategy or "",
        in_progress=args.in_progress,
    )
    batch = result.batch
    new = batch["identified"] - batch["duplicates_removed"] - batch["outside_window"]
    lines = [
        f"source:             {batch['name']} ({batch['file']})",
        f"identified:         {batch['identified']}",
        f"outside the window: {batch['outside_window']}",
        f"duplicates removed: {batch['duplicates_removed']}",
        f"new candidates:     {new}",
        f"to screen (round):  {result.round.counts['to_screen']}",
        *(["in progress:        the window has not ended"] if result.round.in_progress else []),
    ]
    return _print_round(result, lines)


@_screening
def cmd_screen_decide(args: argparse.Namespace) -> int:
    """Read an ASReview export (CSV with an 'included' column, or RIS) or a CSV with
    id,decision and optionally reason,note,key,stage, and write a paper record per
    inclusion (judgement fields TODO) and an exclusion record per exclusion. Running it
    twice changes nothing."""
    from masrl_kb.contrib.screen.decide import decide_round

    result = decide_round(
        args.round_id, args.file, root=args.root, stage=args.stage, default_reason=args.reason
    )
    rnd = result.round
    for path in result.written:
        print(f"wrote {path.parent.name}/{path.name}")
    print(
        f"round {rnd.id}: {rnd.included} included, {rnd.excluded} excluded, "
        f"{rnd.awaiting} awaiting a decision; {len(result.written)} record(s) written, "
        f"{len(result.already)} already recorded"
    )
    return 0


@_screening
def cmd_screen_rank(args: argparse.Namespace) -> int:
    """Order a round's candidates by a model trained on the past decisions (the pool as
    included, the exclusion log as excluded; TF-IDF over titles with logistic regression)
    and rewrite its candidates.csv best first, the score column holding the model's
    probability. --simulate instead replays the past decisions in the model's order and
    prints recall at 10/25/50% screened and the work saved at 95% recall (WSS@95)."""
    from masrl_kb.contrib.screen import learned_rank
    from masrl_kb.kb.paths import find_root

    root = find_root(args.root)
    if args.simulate:
        sim = learned_rank.simulate(learned_rank.past_decisions(root), runs=args.runs)
        for line in learned_rank.simulation_lines(sim):
            print(line)
        return 0
    if not args.round_id:
        err("screen rank needs a ROUND id (e.g. 2026-11-01_2026-11-30) or --simulate")
        return EXIT_USER_ERROR
    ranked = learned_rank.rank_round(args.round_id, root)
    print(f"round {args.round_id}: {len(ranked)} candidate(s) ranked; wrote candidates.csv")
    for entry in ranked[:10]:
        print(f"  {entry.score:.4f}  {entry.id}  {entry.title[:80]}")
    return 0


@_screening
def cmd_screen_migrate(args: argparse.Namespace) -> int:
    """Bring every round under screening/ to the current shape: duplicates counted in
    round.yaml and listed in duplicates.csv. Every round is checked before any is written;
    --check writes nothing and exits 1 when a round needs migrating."""
    from masrl_kb.contrib.screen.migrate import migrate_rounds

    found = migrate_rounds(args.root, check=args.check)
    verb = "need migrating" if args.check else "migrated"
    for rid in found:
        print(f"{verb}: {rid}")
    print(f"{len(found)} round(s) {verb}" if found else "every round is in the current shape")
    return EXIT_FAILED if args.check and found else 0


def cmd_import_upstream(args: argparse.Namespace) -> int:
    """Print every difference in facts and survey tags between the survey's papers.csv
    (and excluded.csv) and the records; --apply writes those fields only."""
    from masrl_kb.contrib.upstream import UpstreamError, compare_upstream

    try:
        report = compare_upstream(args.papers, args.excluded, root=args.root, apply=args.apply)
    except UpstreamError as error:
        for line in error.problems:
            print(line, file=sys.stderr)
        err(str(error))
        return EXIT_USER_ERROR
    for line in report.lines():
        print(line)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the living-review commands to the main parser's sub-parsers."""
    from masrl_kb.cli.sources import register as register_fetch

    screen = sub.add_parser("screen", help="living-review screening rounds against arXiv")
    steps = screen.add_subparsers(dest="step", required=True, metavar="STEP")
    about = "search arXiv with the protocol's query families and write a round"
    p = command(steps, "run", cmd_screen_run, about)
    p.add_argument("--since", required=True, type=iso_date, help="first submission day")
    p.add_argument("--until", type=iso_date, help="last submission day (default: today)")
    p.add_argument("--delay", type=seconds, help="seconds between API requests (default 3)")
    p.add_argument("--page-size", type=positive_int, help="results per API request (100)")
    p.add_argument("--max-per-family", type=positive_int, help="results per family at most (2000)")
    p.add_argument("--strategy", help="the independent search strategy (e.g. A or B)")

    about = "add candidates exported elsewhere (RIS, BibTeX or CSV) to a round"
    p = command(steps, "import", cmd_screen_import, about)
    p.add_argument("file", help="the exported list (.ris, .bib or .csv)")
    p.add_argument(
        "--source",
        required=True,
        help="the public source: an exclusion_source id of taxonomy.yaml, optionally ':' and "
        "which one (github:owner/list, openreview:VENUE, snowball:ARXIV-ID)",
    )
    p.add_argument(
        "--reached", type=iso_date, help="the last day the source reached, if before --until"
    )
    p.add_argument("--strategy", help="the independent search strategy (e.g. A or B)")
    p.add_argument("--since", required=True, type=iso_date, help="first day of the window")
    p.add_argument("--until", required=True, type=iso_date, help="last day of the window")
    p.add_argument("--query", help="the query or export the list came from")
    p.add_argument(
        "--empty-ok",
        action="store_true",
        help="record a list with no candidate (a search that found nothing)",
    )
    p.add_argument(
        "--in-progress",
        action="store_true",
        help="screen a window that has not ended (e.g. this month); round.yaml says so "
        "until a batch is added after the window's end",
    )

    about = "record a round's screening decisions as paper and exclusion records"
    p = command(steps, "decide", cmd_screen_decide, about)
    p.add_argument("round_id", help="round id, e.g. 2026-11-23_2026-11-30")
    p.add_argument("file", help="decisions file (.csv or .ris)")
    p.add_argument("--stage", default="abstract_screen", help="screening stage of exclusions")
    p.add_argument("--reason", help="reason code for exclusions whose row gives none")
    about = "order a round's candidates by a model trained on past decisions"
    p = command(steps, "rank", cmd_screen_rank, about)
    p.add_argument("round_id", nargs="?", help="round id, e.g. 2026-11-01_2026-11-30")
    p.add_argument(
        "--simulate", action="store_true", help="replay the past decisions and print recall"
    )
    p.add_argument("--runs", type=positive_int, default=5, help="replays to average (5)")
    about = "bring rounds written in an older shape to the current one"
    p = command(steps, "migrate", cmd_screen_migrate, about)
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if needed")
    register_fetch(steps)  # screen fetch SOURCE
    about = "compare a newer release of the survey's CSV files with the records"
    p = command(sub, "import-upstream", cmd_import_upstream, about)
    p.add_argument("papers", help="the release's papers.csv")
    p.add_argument("excluded", nargs="?", help="the release's excluded.csv")
    p.add_argument("--apply", action="store_true", help="update the differing fields")
