"""The ``masrl-kb`` command line."""

from __future__ import annotations

import argparse
import os
import sys

import pandas as pd

from masrl_kb.cli.screen import iso_date
from masrl_kb.kb.protocol import ProtocolError
from masrl_kb.kb.rounds import RoundError
from masrl_kb.kb.validate import validate
from masrl_kb.query.claims import ClaimsFileError, claims_frame, evaluate_claims
from masrl_kb.query.frames import InvalidRecordsError, crosstab, load_pool

STATS_TABLES = (
    ("reward_type", "credit_unit"),
    ("topology", "credit_unit"),
    ("decision", "topology"),
)


def _print_problem_annotations(problems) -> None:
    """GitHub Actions turns these lines into inline annotations on the diff."""
    for p in problems:
        print(f"::error file={p.path},line={p.line}::{p.field}: {p.message}")


def cmd_validate(args: argparse.Namespace) -> int:
    report = validate(args.root)
    for problem in report.problems:
        print(problem)
    if os.environ.get("GITHUB_ACTIONS") and report.problems:
        _print_problem_annotations(report.problems)
    print(report.summary(), file=sys.stderr if report.problems else sys.stdout)
    return 0 if report.ok else 1


def _table(frame: pd.DataFrame) -> str:
    return frame.to_string()


def cmd_stats(args: argparse.Namespace) -> int:
    papers, exclusions = load_pool(args.root, as_of=args.as_of)
    if args.as_of:
        print(f"as of {args.as_of.isoformat()} (records added or screened by then)")
    print(f"pooled papers: {len(papers)}")
    print(f"excluded records: {len(exclusions)}")
    print(f"audited records: {len(papers) + len(exclusions)}")
    for rows, cols in STATS_TABLES:
        print(f"\n{rows} x {cols}")
        print(_table(crosstab(rows, cols, papers=papers)))
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    results = evaluate_claims(root=args.root)
    frame = claims_frame(results)
    width = max(len(c) for c in frame["id"])
    for row in frame.itertuples():
        status = "holds " if row.holds else "BROKEN"
        print(
            f"{status}  {row.id:<{width}}  value {row.value:>3}  expected {row.expected:<5}  "
            f"{row.statement}"
        )
    broken = int((~frame["holds"]).sum())
    print(f"{len(frame) - broken} of {len(frame)} claims hold")
    return 1 if args.check and broken else 0


def cmd_build(args: argparse.Namespace) -> int:
    from masrl_kb.site import build_site

    if cmd_validate(args) != 0:
        return 1
    return build_site(args.root, strict=not args.no_strict, site_dir=args.site_dir)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="masrl-kb",
        description="Knowledge base of RL for LLM-based multi-agent systems.",
    )
    parser.add_argument("--root", help="data root holding taxonomy.yaml (default: this clone)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check every record against the taxonomy")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("stats", help="headline counts and the main cross-tabs")
    p.add_argument("--as-of", type=iso_date, help="the pool as it stood on YYYY-MM-DD")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("claims", help="re-check the survey's claims on the current records")
    p.add_argument("--check", action="store_true", help="exit 1 when a claim does not hold")
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("build", help="validate, then build the site with mkdocs --strict")
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.add_argument("--no-strict", action="store_true", help="let MkDocs warnings pass")
    p.set_defaults(func=cmd_build)

    _register_optional(sub)
    return parser


def _register_optional(sub) -> None:
    """Command groups that live beside their own modules."""
    from masrl_kb.cli.contrib import register as register_contrib
    from masrl_kb.cli.screen import register as register_screen
    from masrl_kb.cli.trace import register as register_traces

    register_contrib(sub)
    register_traces(sub)
    register_screen(sub)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (InvalidRecordsError, ClaimsFileError, RoundError, ProtocolError) as err:
        print(f"masrl-kb: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
