"""The ``masrl-kb`` command line and its one error path (:func:`main`): a user error (an
error class of this package, a network failure among them, an OSError, bad arguments or
``--root``) is one line and exit 2, anything else a bug, exit 70; exit 1 is only for a
check that found something. Commands import what they need when they run."""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import traceback
from pathlib import Path

from masrl_kb.cli.common import (
    EXIT_BUG,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USER_ERROR,
    MAX_MESSAGE,
    PROG,
    OneLineParser,
    UsageError,
    command,
    err,
    iso_date,
)

# Commands that need no knowledge-base data root.
ROOTLESS = frozenset({"trace"})
CLAIM_KEYS_SHOWN = 10  # list the papers behind a claim up to this many (always in a group)
STATS_TABLES = (
    ("reward_type", "credit_unit"),
    ("topology", "credit_unit"),
    ("decision", "topology"),
)


# ---------------------------------------------------------------- commands


def cmd_validate(args: argparse.Namespace) -> int:
    from masrl_kb.query.datafiles import validate

    # _check_root already read the kept report of this pool: not a second fingerprint.
    kept = getattr(args, "kept", None)
    report = kept if kept is not None else validate(args.root)
    for problem in report.problems:
        print(problem)
    if os.environ.get("GITHUB_ACTIONS"):  # inline annotations on the pull request's diff
        for p in report.problems:
            print(f"::error file={p.path},line={p.line}::{p.field}: {p.message}")
    # The root checked is named: with several clones, an "ok" must say which one it read.
    print(
        report.summary(os.path.abspath(args.root)),
        file=sys.stderr if report.problems else sys.stdout,
    )
    if report.problems:
        _print_unfinished(args.root)
    return 0 if report.ok else EXIT_USER_ERROR


def _print_unfinished(root) -> None:
    """Name the drafts among the problems: what the preview build would leave out."""
    from masrl_kb.kb.drafts import split_drafts
    from masrl_kb.kb.records import read_records

    _, drafts = split_drafts(read_records(root))
    if drafts:
        from masrl_kb.kb.text import strip_controls

        names = strip_controls(", ".join(d.path for d in drafts))
        print(f"unfinished drafts ({len(drafts)}): {names}", file=sys.stderr)


def _print_drafts(drafts) -> None:
    """Name the drafts a command left out (records still holding TODO fields)."""
    if not len(drafts):
        return
    print(f"\ndrafts left out ({len(drafts)}): records with TODO fields, see `{PROG} validate`")
    from masrl_kb.kb.text import strip_controls

    for row in drafts.itertuples():
        title = f" {row.title}" if row.title else ""
        line = strip_controls(f"{row.path}:{title} (unfinished: {', '.join(row.unfinished)})")
        # record text is a stranger's: no terminal escapes, no screenful from one record
        print(f"  {line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + '...'}")


def cmd_stats(args: argparse.Namespace) -> int:
    from masrl_kb.query.axes import crosstab
    from masrl_kb.query.pool import load_drafts, load_pool
    from masrl_kb.query.views import pool_coverage, pool_searched, survey_baseline

    papers, exclusions = load_pool(args.root, as_of=args.as_of, drafts="exclude")
    if args.as_of:
        print(f"as of {args.as_of.isoformat()} (records added or screened by then)")
    elif (covers := pool_coverage(args.root)) is None:
        print("the whole pool (no protocol.yaml baseline, no screening round)")
    else:
        baseline = survey_baseline(args.root)
        print(f"today's pool, covering papers up to {covers} (the survey's pool: as of {baseline})")
        if (searched := pool_searched(args.root)) and searched > covers:
            print(
                f"searched up to {searched}; candidates found after {covers} still await a decision"
            )
    print(f"pooled papers: {len(papers)}")
    print(f"excluded records: {len(exclusions)}")
    print(f"audited records: {len(papers) + len(exclusions)}")
    for rows, cols in STATS_TABLES:
        print(f"\n{rows} x {cols}")
        print(crosstab(rows, cols, papers=papers).to_string())
    _print_drafts(load_drafts(args.root))
    return 0


def _print_claim(view, width: int) -> None:
    """One claim: its survey's-view line, its papers, and today's value when it differs."""
    claim, survey = view.claim, view.survey
    status = "holds " if survey.holds else "BROKEN"
    expected = f"{claim.op} {survey.expected_value}"
    print(
        f"{status}  {claim.id:<{width}}  value {survey.shown_value:>3}  expected {expected:<5}  "
        f"{claim.statement}"
    )
    if survey.keys and (claim.group or len(survey.keys) <= CLAIM_KEYS_SHOWN):
        print(f"{'':8}{'':<{width}}  papers: {', '.join(survey.keys)}")
    if view.moved:
        today = "holds" if view.today.holds else "BROKEN"
        movers = ", ".join(view.papers + view.exclusions) or "none"
        print(f"{'':8}{'':<{width}}  today {view.today.shown_value} ({today}); moved by: {movers}")


def cmd_claims(args: argparse.Namespace) -> int:
    from masrl_kb.query.pool import load_drafts, load_pool
    from masrl_kb.query.views import claim_views, pool_coverage, survey_baseline

    papers, exclusions = load_pool(args.root, drafts="exclude")
    views = claim_views(papers=papers, exclusions=exclusions, root=args.root)
    baseline = survey_baseline(args.root)
    if baseline is None:
        print("claims checked on the whole pool (no protocol.yaml baseline)")
    else:
        print(
            f"claims checked in the survey's pool (as of {baseline}); where today's pool "
            f"(covering papers up to {pool_coverage(args.root)}) gives another value, it follows"
        )
    width = max((len(v.claim.id) for v in views), default=0)
    for view in views:
        _print_claim(view, width)
    broken = sum(not v.survey.holds for v in views)
    moved = sum(v.moved for v in views)
    print(f"{len(views) - broken} of {len(views)} claims hold in the survey's pool", end="")
    print(f"; {moved} value(s) differ today" if moved else "")
    _print_drafts(load_drafts(args.root))
    return EXIT_FAILED if args.check and broken else 0


def cmd_build(args: argparse.Namespace) -> int:
    from masrl_kb.query.datafiles import validate
    from masrl_kb.site import build_site

    if args.preview:
        from masrl_kb.query.pool import load_drafts, load_pool

        load_pool(args.root, drafts="exclude")  # the finished records must be valid
        drafts = load_drafts(args.root)
        print(f"preview: {len(drafts)} draft(s) left out; the release build refuses them")
        _print_drafts(drafts)
    else:
        # Every data file the pages read is checked first, so a data error is one
        # line here rather than a traceback from inside MkDocs.
        report = validate(args.root)
        if not report.ok:
            more = len(report.problems) - 1
            tail = f" (and {more} more)" if more else ""
            raise UsageError(f"{report.problems[0]}{tail}; run `{PROG} validate` for the list")
        from masrl_kb.query.claims import CLAIMS_FILE, evaluate_claims

        # Claims name columns and values only a table can check (validate has none):
        # evaluated here, a bad one is one line rather than a traceback from the page hooks.
        if (args.root / CLAIMS_FILE).is_file():
            evaluate_claims(root=args.root)
    strict = not args.no_strict
    return build_site(args.root, strict=strict, site_dir=args.site_dir, preview=args.preview)


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Knowledge base of RL for LLM-based multi-agent systems.",
    )
    parser.add_argument(
        "--root",
        help="data root holding taxonomy.yaml and papers/ (default: $MASRL_KB_ROOT, else the "
        "clone the current folder is in)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected error"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    command(sub, "validate", cmd_validate, "check every record against the taxonomy")
    p = command(sub, "stats", cmd_stats, "headline counts and the main cross-tabs")
    p.add_argument("--as-of", type=iso_date, help="the pool as it stood on YYYY-MM-DD")
    about = "re-check the survey's claims in the survey's pool, today's value beside"
    p = command(sub, "claims", cmd_claims, about)
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a claim does not hold in the survey's pool (its baseline)",
    )
    p = command(sub, "build", cmd_build, "validate, then build the site with mkdocs --strict")
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.add_argument("--no-strict", action="store_true", help="let MkDocs warnings pass")
    p.add_argument(
        "--preview",
        action="store_true",
        help="build on the finished records, drafts (TODO fields) left out under a banner",
    )
    # Command groups that live beside their own modules, run through the same path.
    from masrl_kb.cli import contrib, judgements, screen
    from masrl_kb.traces import command as traces

    for group in (contrib, judgements, traces, screen):
        group.register(sub)
    return parser


# ---------------------------------------------------------------- the error path


def _named_root(given: str, where: str) -> None:
    """A root named by ``--root`` or the environment must be a folder with a taxonomy."""
    from masrl_kb.kb.paths import TAXONOMY_FILE
    from masrl_kb.kb.text import strip_controls

    shown = strip_controls(given)
    if not Path(given).is_dir():
        raise UsageError(f"{where}{shown}: no such folder")
    if not (Path(given) / TAXONOMY_FILE).is_file():
        raise UsageError(f"{where}{shown}: no {TAXONOMY_FILE} in this folder")


def _check_root(args: argparse.Namespace) -> None:
    """Resolve the data root once for the command (``args.root`` becomes that folder):
    ``--root``, else ``$MASRL_KB_ROOT``, else the clone the command runs in; an existing
    folder with a readable taxonomy."""
    if args.command in ROOTLESS:
        return
    from masrl_kb.kb.paths import ENV_ROOT, TAXONOMY_FILE, RootNotFoundError, find_root

    if args.root is not None:
        _named_root(args.root, "--root ")
    elif os.environ.get(ENV_ROOT):
        _named_root(os.environ[ENV_ROOT], f"{ENV_ROOT}=")
    try:
        root = find_root(args.root)
    except RootNotFoundError as error:
        raise UsageError(str(error)) from None
    if args.command == "validate":
        from masrl_kb.query.datafiles import kept_report

        args.kept = kept_report(root)
        if args.kept is not None and args.kept.ok:
            args.root = root
            return  # this very pool passed validate, taxonomy included: skip loading the models
    try:
        from masrl_kb.kb.taxonomy import load_taxonomy

        load_taxonomy(root)
    except Exception as err:  # noqa: BLE001 - any failure here is the file's fault
        if _is_ours(err):
            raise
        message = f"{TAXONOMY_FILE}: cannot be read as a taxonomy: {_describe(err)}"
        raise UsageError(message) from err
    args.root = root


def _is_ours(err: BaseException) -> bool:
    """Errors this package defines are deliberate reports about the user's input."""
    return type(err).__module__.split(".")[0] == "masrl_kb"


def _describe(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    if isinstance(err, KeyError):
        text = f"missing {text}"
    return text


def _one_line(err: BaseException) -> str:
    """The error as one readable line: first problem of a list, no control characters."""
    problems = getattr(err, "problems", None)
    if isinstance(problems, list) and problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        text = f"invalid records: {problems[0]}{more} (run `{PROG} validate` for the list)"
    elif isinstance(err, OSError) and err.filename is not None:
        text = f"{err.filename}: {err.strerror or _describe(err)}"
    else:
        lines = [line for line in _describe(err).splitlines() if line.strip()] or [""]
        text = lines[0] + (f" (and {len(lines) - 1} more line(s))" if len(lines) > 1 else "")
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]", "?", text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


@functools.lru_cache(maxsize=4)
def _parser_for(help_key: str) -> argparse.ArgumentParser:
    """:func:`build_parser` once a process for the help texts ``help_key`` stands for: a
    process running many commands (a test session, a script) spent more building the forty
    sub-parsers than running most commands. Parsing leaves the parser as it was."""
    return build_parser()


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure ends as one line on standard error and an exit code."""
    from masrl_kb.cli.contrib import help_key

    args = _parser_for(help_key()).parse_args(argv)
    try:
        _check_root(args)
        return args.func(args)
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``| head``): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:  # noqa: BLE001 - the one place errors become exit codes
        if args.debug:
            traceback.print_exc()
        if isinstance(error, UsageError | OSError) or _is_ours(error):
            err(_one_line(error))
            return EXIT_USER_ERROR
        hint = "" if args.debug else f"; rerun with {PROG} --debug ... for the traceback"
        err(f"unexpected error (a bug): {type(error).__name__}: {_one_line(error)}{hint}")
        return EXIT_BUG
