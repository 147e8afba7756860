"""Living-review commands: ``screen run|import|decide`` and ``import-upstream``.
A user error prints its problems and exits 2, a network failure 1."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from masrl_kb.cli.main import EXIT_FAILED, EXIT_USER_ERROR, command, err, iso_date

if TYPE_CHECKING:
    from masrl_kb.contrib.screen.rounds import RunResult

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
    """The handler running a screening step: its errors printed, a failed network call
    exiting 1 and anything else the user can fix 2."""

    @functools.wraps(run)
    def handler(args: argparse.Namespace) -> int:
        from masrl_kb.contrib.screen.decisions import DecisionFileError
        from masrl_kb.contrib.screen.import_files import ImportFileError
        from masrl_kb.contrib.screen.store import ScreeningError
        from masrl_kb.contrib.sources.arxiv import ArxivError, ArxivUnusable
        from masrl_kb.kb.protocol import ProtocolError
        from masrl_kb.kb.rounds import RoundError

        try:
            return run(args)
        except ArxivError as error:
            err(str(error))
            return EXIT_USER_ERROR if isinstance(error, ArxivUnusable) else EXIT_FAILED
        except ImportFileError as error:
            print(str(error), file=sys.stderr)
        except DecisionFileError as error:
            for line in error.problems:
                print(line, file=sys.stderr)
            err(f"{len(error.problems)} problem(s) in {args.file}: nothing written")
        except ProtocolError as error:
            err(str(error))
        except (ScreeningError, RoundError) as error:
            lines = str(error).splitlines() or [""]
            err(lines[0] + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""))
        return EXIT_USER_ERROR

    return handler


def _print_round(result: RunResult, lines: list[str], dups: list[tuple[str, str, str]]) -> int:
    print(f"round {result.round.id}")
    for line in lines:
        print(f"  {line}")
    for cid, match, of in dups:
        print(f"  duplicate {cid}: {match} of {of}")
    print(f"wrote {result.folder.name}/ (candidates.csv, candidates.ris, round.yaml)")
    return 0


@_screening
def cmd_screen_run(args: argparse.Namespace) -> int:
    """Run every query family of protocol.yaml against arXiv for papers submitted in the
    window, remove duplicates of the pool, the exclusions and earlier rounds, rank the rest
    and write screening/<round-id>/."""
    from masrl_kb.contrib.screen.rounds import run_round
    from masrl_kb.contrib.sources.arxiv import Paging

    paging = Paging.from_env(
        page_size=args.page_size, delay_seconds=args.delay, max_per_family=args.max_per_family
    )
    result = run_round(args.since, args.until, root=args.root, paging=paging)
    rnd, counts = result.round, result.round.counts
    lines = [
        f"retrieved:          {counts['retrieved']}",
        f"outside the window: {counts['outside_window']}",
        f"duplicates removed: {counts['duplicates_removed']}",
        f"to screen:          {counts['to_screen']}",
        *(f"warning: family {f} reached --max-per-family; narrow the window" for f in rnd.capped),
    ]
    dups = [(d["id"], d["match"], d["duplicate_of"]) for d in rnd.duplicates]
    return _print_round(result, lines, dups)


@_screening
def cmd_screen_import(args: argparse.Namespace) -> int:
    """Read a candidate list (RIS, BibTeX, or CSV with the columns
    id,title,authors,date,url,abstract and optionally doi,arxiv_id,openreview_id), remove
    duplicates of the pool, the exclusions, other rounds and earlier batches of the same
    round, and write or extend screening/<since>_<until>/."""
    from masrl_kb.contrib.screen.rounds import import_round

    window = (args.file, args.source, args.since, args.until)
    result = import_round(*window, query=args.query or "", root=args.root, empty_ok=args.empty_ok)
    batch = result.batch
    new = batch["identified"] - batch["duplicates_removed"] - batch["outside_window"]
    lines = [
        f"source:             {batch['name']} ({batch['file']})",
        f"identified:         {batch['identified']}",
        f"outside the window: {batch['outside_window']}",
        f"duplicates removed: {batch['duplicates_removed']}",
        f"new candidates:     {new}",
        f"to screen (round):  {result.round.counts['to_screen']}",
    ]
    dups = [(e.id, e.match, e.duplicate_of) for e in result.duplicates]
    return _print_round(result, lines, dups)


@_screening
def cmd_screen_decide(args: argparse.Namespace) -> int:
    """Read an ASReview export (CSV with an 'included' column, or RIS) or a CSV with
    id,decision and optionally reason,note,key,stage, and write a paper record per
    inclusion (judgement fields TODO) and an exclusion record per exclusion. Running it
    twice changes nothing."""
    from masrl_kb.contrib.screen.decisions import decide_round

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

    about = "add candidates exported elsewhere (RIS, BibTeX or CSV) to a round"
    p = command(steps, "import", cmd_screen_import, about)
    p.add_argument("file", help="the exported list (.ris, .bib or .csv)")
    p.add_argument("--source", required=True, help="an exclusion_source id of taxonomy.yaml")
    p.add_argument("--since", required=True, type=iso_date, help="first day of the window")
    p.add_argument("--until", required=True, type=iso_date, help="last day of the window")
    p.add_argument("--query", help="the query or export the list came from")
    p.add_argument(
        "--empty-ok",
        action="store_true",
        help="record a list with no candidate (a search that found nothing)",
    )

    about = "record a round's screening decisions as paper and exclusion records"
    p = command(steps, "decide", cmd_screen_decide, about)
    p.add_argument("round_id", help="round id, e.g. 2026-11-23_2026-11-30")
    p.add_argument("file", help="decisions file (.csv or .ris)")
    p.add_argument("--stage", default="abstract_screen", help="screening stage of exclusions")
    p.add_argument("--reason", help="reason code for exclusions whose row gives none")
    register_fetch(steps)  # screen fetch SOURCE
    about = "compare a newer release of the survey's CSV files with the records"
    p = command(sub, "import-upstream", cmd_import_upstream, about)
    p.add_argument("papers", help="the release's papers.csv")
    p.add_argument("excluded", nargs="?", help="the release's excluded.csv")
    p.add_argument("--apply", action="store_true", help="update the differing fields")
