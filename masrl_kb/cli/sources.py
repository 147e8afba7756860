"""``masrl-kb screen fetch SOURCE``: a candidate CSV from a scholarly index, and the
``screen import`` command to run. A network failure, a bad argument or an unusable
answer is one line and exit 2; no file is written."""

from __future__ import annotations

import argparse
import functools
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from masrl_kb.cli.common import EXIT_USER_ERROR, MAX_MESSAGE, command, err, iso_date


def _report(args: argparse.Namespace, source: str, fetched: Any, notes: list[str]) -> int:
    from masrl_kb.contrib.sources.rows import write_csv

    write_csv(Path(args.output), fetched.rows)
    print(f"wrote {len(fetched.rows)} rows to {args.output} ({fetched.seen} records read)")
    for note in notes:
        print(f"  note: {note}")
    print(f"query: {fetched.query}")
    window = []
    for name in ("since", "until"):
        day = getattr(args, name, None)
        window += [f"--{name}", day.isoformat() if day else "YYYY-MM-DD"]
    command = ["masrl-kb", "screen", "import", args.output, "--source", source, *window]
    print("import with: " + shlex.join([*command, "--query", fetched.query]))
    return 0


def _guarded(fetch: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """The handler running ``fetch``: a ``SourceError`` (the network's failures among
    them) is one clean line and exit 2."""

    @functools.wraps(fetch)
    def handler(args: argparse.Namespace) -> int:
        from masrl_kb.contrib.outside_text import clean_text
        from masrl_kb.contrib.sources.http import SourceError

        try:
            return fetch(args)
        except SourceError as error:
            err(clean_text(str(error), MAX_MESSAGE))
            return EXIT_USER_ERROR

    return handler


@_guarded
def cmd_openreview(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.sources import openreview

    got = openreview.fetch(
        args.venue, args.keyword, args.since, args.until, page_size=args.page_size
    )
    return _report(args, "openreview", got, [])


@_guarded
def cmd_openalex(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.sources import openalex
    from masrl_kb.contrib.sources.rows import seeds

    notes: list[str] = []
    if not openalex.auth_params().get("api_key"):
        # Said before the requests: without a key OpenAlex may refuse them (401/429).
        print(f"note: no {openalex.ENV_KEY}; OpenAlex allows only a trial amount a day")
    if args.query is not None:
        return _report(args, "openalex", openalex.search(args.query, args.since, args.until), notes)
    got = openalex.citing_pool(seeds(args.root)[0], args.since, args.until)
    if got.unresolved:
        shown = ", ".join(got.unresolved[:10])
        notes.append(f"{len(got.unresolved)} pooled papers not found in OpenAlex: {shown}")
    return _report(args, "openalex", got, notes)


@_guarded
def cmd_semantic_scholar(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.sources import semantic_scholar
    from masrl_kb.contrib.sources.rows import seeds

    pool, excluded = seeds(args.root)
    got = semantic_scholar.recommend(pool, excluded, args.since, args.until)
    notes = [f"{got.undated} recommendations had no publication date"] if got.undated else []
    return _report(args, "semantic_scholar", got, notes)


def _page_size(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 1000")
    return int(text)


def _common(p: argparse.ArgumentParser, window_required: bool) -> None:
    p.add_argument("--since", type=iso_date, required=window_required, help="first day YYYY-MM-DD")
    p.add_argument("--until", type=iso_date, required=window_required, help="last day YYYY-MM-DD")
    p.add_argument("-o", "--output", required=True, help="CSV file to write")


def register(steps: argparse._SubParsersAction) -> None:
    """Add ``screen fetch openreview|openalex|semantic-scholar`` to the ``screen`` steps."""
    fetch = steps.add_parser(
        "fetch",
        help="write a candidate CSV from OpenReview, OpenAlex or Semantic Scholar",
        description="Query one scholarly index and write a CSV for `masrl-kb screen import`.",
    )
    sources = fetch.add_subparsers(dest="source", required=True, metavar="SOURCE")

    p = command(sources, "openreview", cmd_openreview, "a venue's submissions matching keywords")
    p.add_argument("--venue", required=True, help="venue id (content.venueid) or invitation id")
    p.add_argument("--keyword", action="append", required=True, help="phrase (repeatable)")
    p.add_argument("--page-size", type=_page_size, default=1000, help="notes per request")
    _common(p, window_required=False)

    p = command(sources, "openalex", cmd_openalex, "works by search words, or citing the pool")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--query", help="search words (title, abstract, full text)")
    what.add_argument("--cites-pool", action="store_true", help="works citing pooled papers")
    _common(p, window_required=True)

    about = "recommendations: pool as positives, exclusions as negatives"
    _common(command(sources, "semantic-scholar", cmd_semantic_scholar, about), True)
