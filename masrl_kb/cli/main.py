"""The ``masrl-kb`` command line, and its one error path.

Every command group (this module's, :mod:`masrl_kb.cli.contrib`,
:mod:`masrl_kb.cli.trace`) registers its sub-commands on the parser built
here, and every command runs through :func:`main`, which turns an error into
one line on standard error:

- a user error (bad arguments, a missing or mistyped ``--root``, a file that
  cannot be read or written, a broken taxonomy, invalid records, a bad query,
  or any other error class this package defines) exits 2;
- anything else is a bug: one line saying so, exit 70 (``EX_SOFTWARE``), and
  the traceback only with ``--debug``.

Each command imports what it needs when it runs, so ``--help`` and
``validate`` start without pandas, jsonschema or the network libraries.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path

EXIT_USER_ERROR = 2
EXIT_BUG = 70  # EX_SOFTWARE from sysexits.h
EXIT_INTERRUPTED = 130
MAX_MESSAGE = 400  # characters of one error line; hostile input can make messages huge
PROG = "masrl-kb"
# Commands that need no knowledge-base data root.
ROOTLESS = frozenset({"trace"})
CLAIM_KEYS_SHOWN = 10  # list the papers behind a claim up to this many (always in a group)
STATS_TABLES = (
    ("reward_type", "credit_unit"),
    ("topology", "credit_unit"),
    ("decision", "topology"),
)


class UsageError(Exception):
    """A problem with what the user asked for; the message says what and where."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line (with the usage folded in), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        usage = " ".join(self.format_usage().split())
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message} ({usage})\n")


# ---------------------------------------------------------------- commands


def _print_problem_annotations(problems) -> None:
    """GitHub Actions turns these lines into inline annotations on the diff."""
    for p in problems:
        print(f"::error file={p.path},line={p.line}::{p.field}: {p.message}")


def cmd_validate(args: argparse.Namespace) -> int:
    from masrl_kb.kb.validate import validate

    report = validate(args.root)
    for problem in report.problems:
        print(problem)
    if os.environ.get("GITHUB_ACTIONS") and report.problems:
        _print_problem_annotations(report.problems)
    print(report.summary(), file=sys.stderr if report.problems else sys.stdout)
    return 0 if report.ok else 1


def cmd_stats(args: argparse.Namespace) -> int:
    from masrl_kb.query.frames import crosstab, load_pool

    papers, exclusions = load_pool(args.root, as_of=args.as_of)
    if args.as_of:
        print(f"as of {args.as_of.isoformat()} (records added or screened by then)")
    print(f"pooled papers: {len(papers)}")
    print(f"excluded records: {len(exclusions)}")
    print(f"audited records: {len(papers) + len(exclusions)}")
    for rows, cols in STATS_TABLES:
        print(f"\n{rows} x {cols}")
        print(crosstab(rows, cols, papers=papers).to_string())
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from masrl_kb.query.claims import claims_frame, evaluate_claims

    results = evaluate_claims(root=args.root)
    frame = claims_frame(results)
    width = max(len(c) for c in frame["id"])
    for row, result in zip(frame.itertuples(), results, strict=True):
        status = "holds " if row.holds else "BROKEN"
        print(
            f"{status}  {row.id:<{width}}  value {row.value:>3}  expected {row.expected:<5}  "
            f"{row.statement}"
        )
        if result.keys and (result.claim.group or len(result.keys) <= CLAIM_KEYS_SHOWN):
            print(f"{'':8}{'':<{width}}  papers: {', '.join(result.keys)}")
    broken = int((~frame["holds"]).sum())
    print(f"{len(frame) - broken} of {len(frame)} claims hold")
    return 1 if args.check and broken else 0


def cmd_build(args: argparse.Namespace) -> int:
    from masrl_kb.site import build_site

    if cmd_validate(args) != 0:
        return 1
    return build_site(args.root, strict=not args.no_strict, site_dir=args.site_dir)


# ---------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Knowledge base of RL for LLM-based multi-agent systems.",
    )
    parser.add_argument("--root", help="data root holding taxonomy.yaml (default: this clone)")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected error"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check every record against the taxonomy")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("stats", help="headline counts and the main cross-tabs")
    from masrl_kb.cli.screen import iso_date  # light: argparse and datetime only

    p.add_argument("--as-of", type=iso_date, help="the pool as it stood on YYYY-MM-DD")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("claims", help="re-check the survey's claims on the current records")
    p.add_argument("--check", action="store_true", help="exit 1 when a claim does not hold")
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("build", help="validate, then build the site with mkdocs --strict")
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.add_argument("--no-strict", action="store_true", help="let MkDocs warnings pass")
    p.set_defaults(func=cmd_build)

    _register_groups(sub)
    return parser


def _register_groups(sub) -> None:
    """Command groups that live beside their own modules, run through the same path."""
    from masrl_kb.cli.contrib import register as register_contrib
    from masrl_kb.cli.judgements import register as register_judgements
    from masrl_kb.cli.screen import register as register_screen
    from masrl_kb.cli.sources import register as register_sources
    from masrl_kb.cli.trace import register as register_traces

    register_contrib(sub)
    register_judgements(sub)
    register_traces(sub)
    register_screen(sub)
    register_sources(sub)  # adds `screen fetch` under the screen command


# ---------------------------------------------------------------- the error path


def _check_root(args: argparse.Namespace) -> None:
    """A usable data root: an existing folder with a readable taxonomy."""
    if args.command in ROOTLESS:
        return
    from masrl_kb.kb.paths import ENV_ROOT as ENV
    from masrl_kb.kb.paths import find_root
    from masrl_kb.kb.taxonomy import TAXONOMY_FILE, load_taxonomy

    if args.root is not None:
        given = Path(args.root)
        if not given.is_dir():
            raise UsageError(f"--root {args.root}: no such folder")
        if not (given / TAXONOMY_FILE).is_file():
            raise UsageError(f"--root {args.root}: no {TAXONOMY_FILE} in this folder")
    try:
        root = find_root(args.root)
    except FileNotFoundError:
        message = f"no {TAXONOMY_FILE} here or in a parent folder: pass --root DIR or set {ENV}"
        raise UsageError(message) from None
    try:
        load_taxonomy(root)
    except Exception as err:  # noqa: BLE001 - any failure here is the file's fault
        if _is_ours(err):
            raise
        message = f"{TAXONOMY_FILE}: cannot be read as a taxonomy: {_describe(err)}"
        raise UsageError(message) from err


def _is_ours(err: BaseException) -> bool:
    """Errors this package defines are deliberate reports about the user's input."""
    return type(err).__module__.split(".")[0] == "masrl_kb"


def _is_user_error(err: BaseException) -> bool:
    return isinstance(err, UsageError | OSError) or _is_ours(err)


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


def _fail(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure ends as one line on standard error and an exit code."""
    args = build_parser().parse_args(argv)
    try:
        _check_root(args)
        return args.func(args)
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``| head``): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as err:  # noqa: BLE001 - the one place errors become exit codes
        if args.debug:
            traceback.print_exc()
        if _is_user_error(err):
            _fail(_one_line(err))
            return EXIT_USER_ERROR
        hint = "" if args.debug else f"; rerun with {PROG} --debug ... for the traceback"
        _fail(f"unexpected error (a bug): {type(err).__name__}: {_one_line(err)}{hint}")
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main())
