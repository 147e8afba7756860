"""Contributor commands: add, exclude, export, schema, check-links, diff.

``register(sub)`` adds them to the main parser's sub-commands; every leaf
parser sets ``func`` to a handler that takes the parsed arguments and returns
the exit code. ``args.root`` (``--root`` of the main parser, None for the
default data root) says which knowledge base they act on.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from masrl_kb.cli.screen import iso_date  # light: argparse and datetime only
from masrl_kb.kb.paths import find_root

if TYPE_CHECKING:
    import pandas as pd

    from masrl_kb.contrib.arxiv_import import Written

# Exit codes: 0 done, 1 a check failed or nothing was written, 2 bad usage.
EXIT_FAILED = 1


def _err(message: str) -> None:
    print(f"masrl-kb: {message}", file=sys.stderr)


def _root(args: argparse.Namespace) -> Path:
    """The data root: :func:`masrl_kb.cli.main.main` resolved it once for the command."""
    return find_root(args.root)


@functools.cache
def _default_axis_ids() -> dict[str, list[str]]:
    """Each axis's ids in the default root's taxonomy, read once for the options' help.

    Every command builds the whole parser, so this is a plain safe read of the YAML,
    not the checked model: pydantic would cost each command's start more than the
    command itself. The command's own run checks the taxonomy (``_check_root``).
    """
    from masrl_kb.kb.yamlio import load_yaml_file

    try:
        axes = load_yaml_file(find_root() / "taxonomy.yaml").data["axes"]
        return {
            name: [
                v["id"]
                for v in axis["values"]
                if isinstance(v, dict) and isinstance(v.get("id"), str)
            ]
            for name, axis in axes.items()
        }
    except Exception:  # noqa: BLE001 - help text must never break the parser
        return {}


def _axis_help(axis: str, what: str) -> str:
    """Help text listing an axis's ids from the default taxonomy, when readable."""
    ids = _default_axis_ids().get(axis)
    return f"{what}: {', '.join(ids)}" if ids else _no_ids(axis, what)


def _no_ids(axis: str, what: str) -> str:
    return f"{what} (an id of {axis} in taxonomy.yaml)"


# ---------------------------------------------------------------- add / exclude


def _write_record(root: Path, write: Callable[[], Written]) -> int:
    """Run ``write``; report a duplicate or a failure the same way for add and exclude."""
    from masrl_kb.contrib.arxiv_import import AlreadyRecorded, ArxivImportError, describe_written
    from masrl_kb.contrib.sources.arxiv import ArxivError

    try:
        written = write()
    except AlreadyRecorded as err:
        for line in err.matches:
            print(line)
        print("nothing written")
        return EXIT_FAILED
    except (ArxivImportError, ArxivError, OSError) as err:
        _err(str(err))
        return EXIT_FAILED
    describe_written(written, root)
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.arxiv_import import add_paper

    root = _root(args)
    return _write_record(root, lambda: add_paper(args.arxiv_id, root=root, key=args.key))


def cmd_exclude(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.arxiv_import import exclude_record

    root = _root(args)
    return _write_record(
        root,
        lambda: exclude_record(
            args.reference,
            stage=args.stage,
            reason=args.reason,
            root=root,
            source=args.source,
            query_family=args.query_family,
            note=args.note,
            title=args.title,
            identifier=args.identifier,
        ),
    )


# ---------------------------------------------------------------- export


class QueryError(ValueError):
    """A ``--where`` expression outside the query language (masrl_kb.query.lang)."""


def _selected(args: argparse.Namespace) -> pd.DataFrame:
    from masrl_kb.query.frames import load_papers, select
    from masrl_kb.query.lang import QueryError as LanguageError

    papers = load_papers(_root(args))
    try:
        return select(args.where, papers=papers)
    except LanguageError as err:
        shown = repr(args.where)
        shown = shown if len(shown) <= 80 else shown[:76] + "...'"
        raise QueryError(f"--where {shown}: {err}") from None


def _export(render: str) -> Callable[[argparse.Namespace], int]:
    """The handler of ``export <format>``: ``render`` names the exporter, imported when run."""

    def handler(args: argparse.Namespace) -> int:
        import importlib

        module, name = render.rsplit(".", 1)
        try:
            papers = _selected(args)
        except QueryError as err:
            _err(str(err))
            return 2
        text = getattr(importlib.import_module(f"masrl_kb.contrib.export.{module}"), name)(papers)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0

    return handler


def cmd_export_markdown(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.export.markdown import (
        DEFAULT_FILE,
        AwesomeBlockError,
        render_block,
        update_file,
    )
    from masrl_kb.kb.taxonomy import load_taxonomy

    try:
        papers = _selected(args)
    except QueryError as err:
        _err(str(err))
        return 2
    root = _root(args)
    path = Path(args.file) if args.file else root / DEFAULT_FILE
    block = render_block(papers, load_taxonomy(root), where=args.where)
    try:
        changed = update_file(path, block, check=args.check)
    except AwesomeBlockError as err:
        _err(str(err))
        return EXIT_FAILED
    shown = _relative(path, root)
    if args.check:
        if changed:
            _err(f"{shown} is stale: run `masrl-kb export markdown` and commit the result")
            return EXIT_FAILED
        print(f"{shown} is current")
        return 0
    print(f"{'updated' if changed else 'unchanged'}: {shown}")
    return 0


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- schema


def cmd_schema(args: argparse.Namespace) -> int:
    from masrl_kb.kb.schema import stale_schema_files, write_schemas

    root = _root(args)
    if args.check:
        stale = stale_schema_files(root)
        for path in stale:
            _err(f"{_relative(path, root)} is stale: run `masrl-kb schema` and commit the result")
        if not stale:
            print("schema files are current")
        return EXIT_FAILED if stale else 0
    changed = write_schemas(root)
    for path in changed:
        print(f"wrote {_relative(path, root)}")
    if not changed:
        print("schema files are current")
    return 0


# ---------------------------------------------------------------- release


def cmd_release(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.release import ReleaseError, release

    root = _root(args)
    try:
        written = release(args.version, args.date or dt.date.today(), root)
    except ReleaseError as err:
        _err(str(err))
        return 2
    for path in written:
        print(f"wrote {_relative(path, root)}")
    return 0


# ---------------------------------------------------------------- check-links


def cmd_check_links(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.links import check_links, format_problem

    report = check_links(_root(args), timeout=args.timeout, workers=args.workers)
    for link, result in report.broken:
        print(format_problem(link, result))
    for link, result in report.blocked:
        print(f"{format_problem(link, result)} (blocked for robots; not counted as broken)")
    for link, result in report.moved:
        print(f"{link.path}:{link.line}: {link.field}: moved to {result.final_url} (update it)")
    urls = len({link.url for link, _ in report.links})
    broken = len(report.broken)
    summary = f"{broken} broken link(s) of {len(report.links)} in the records ({urls} distinct)"
    print(summary, file=sys.stderr if broken else sys.stdout)
    return EXIT_FAILED if broken else 0


# ---------------------------------------------------------------- diff


def cmd_diff(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.diff import DiffError, diff_against

    try:
        result = diff_against(args.ref, root=_root(args))
    except DiffError as err:
        _err(str(err))
        return 2
    sys.stdout.write(result.markdown)
    if result.new.problems:
        _err("the working tree fails validation: run `masrl-kb validate`")
        return EXIT_FAILED
    return 0


# ---------------------------------------------------------------- parser


def register(sub: argparse._SubParsersAction) -> None:
    """Add the contributor sub-commands to the main parser's sub-parsers."""
    _register_records(sub)
    _register_export(sub)
    _register_upkeep(sub)


def _register_records(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "add",
        help="start a paper record from its arXiv id",
        description="Fetch a paper's facts from arXiv and write papers/<key>.yaml with every "
        "judgement field set to TODO. Prints the abstract to help tagging.",
    )
    p.add_argument("arxiv_id", help="arXiv id (2505.19591), arXiv:... id or arxiv.org URL")
    p.add_argument("--key", help="record key (default: derived from title and year)")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser(
        "exclude",
        help="log a screened-out record in exclusions/",
        description="Write the next exclusions/E<nnn>.yaml. arXiv titles are fetched; other "
        "URLs need --title.",
    )
    p.add_argument("reference", help="arXiv id or URL, or the http(s) URL of the record")
    p.add_argument("--stage", required=True, help=_axis_help("exclusion_stage", "screening stage"))
    p.add_argument("--reason", required=True, help=_axis_help("exclusion_reason", "reason code"))
    p.add_argument(
        "--source",
        help=_axis_help("exclusion_source", "where it was found (default: from the URL)"),
    )
    p.add_argument(
        "--query-family",
        dest="query_family",
        help=_axis_help("query_family", "query family (default: TODO)"),
    )
    p.add_argument("--note", help="why it is excluded, in your own words (default: TODO)")
    p.add_argument("--title", help="title (required for non-arXiv URLs)")
    p.add_argument("--identifier", help="identifier such as OpenReview:abc (default: derived)")
    p.set_defaults(func=cmd_exclude)


def _register_export(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="the pool as BibTeX, CSV, JSON or awesome-list Markdown")
    formats = export.add_subparsers(dest="format", required=True, metavar="FORMAT")
    where_help = (
        "only papers matching this query: comparisons, in [...], and/or/not over columns, "
        "e.g. 'credit_unit == \"message\" and credit_strict'"
    )
    for name, render, what in (
        ("bibtex", "bibtex.to_bibtex", "BibTeX entries (bibtexparser)"),
        ("csv", "tables.to_csv", "CSV, one row per paper, every field"),
        ("json", "tables.to_json", "JSON list of records, every field"),
    ):
        p = formats.add_parser(name, help=what)
        p.add_argument("--where", help=where_help)
        p.add_argument("-o", "--output", help="write to this file instead of standard output")
        p.set_defaults(func=_export(render))
    p = formats.add_parser("markdown", help="the awesome list, into the marked block of a file")
    p.add_argument("--where", help=where_help)
    p.add_argument("--file", help="Markdown file holding the marked block (default: AWESOME.md)")
    p.add_argument("--check", action="store_true", help="exit 1 when the block is stale")
    p.set_defaults(func=cmd_export_markdown)


def _register_upkeep(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="write the JSON Schemas under schema/ (editor support)")
    p.add_argument("--check", action="store_true", help="exit 1 when a schema file is stale")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser(
        "release",
        help="stamp a citable version into CITATION.cff and write .zenodo.json",
        description="Set CITATION.cff's version and date-released and write .zenodo.json "
        "(Zenodo's metadata, counts computed from the records). The release workflow runs "
        "it, then tags vVERSION; Zenodo archives the tagged release and mints its DOI.",
    )
    p.add_argument("version", help="MAJOR.MINOR.PATCH, not older than the current one")
    p.add_argument("--date", type=iso_date, help="release date YYYY-MM-DD (default: today)")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("check-links", help="request every record's links (needs the network)")
    p.add_argument("--timeout", type=float, default=15.0, help="seconds per request (15)")
    p.add_argument("--workers", type=int, default=8, help="requests in parallel (8)")
    p.set_defaults(func=cmd_check_links)

    p = sub.add_parser(
        "diff",
        help="what the working tree changes against a git ref (Markdown)",
        description="Papers added, removed or retagged, cross-tab cells and claims whose "
        "value changes, between a git ref and the working tree.",
    )
    p.add_argument("ref", help="git ref to compare with, e.g. origin/main or HEAD~1")
    p.set_defaults(func=cmd_diff)
