"""Contributor commands: add, exclude, export, schema, release, check-links, diff; each
handler returns the exit code (an error this package defines ends in ``main``, exit 2)."""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from masrl_kb.cli.common import EXIT_FAILED, EXIT_USER_ERROR, command, err, iso_date
from masrl_kb.kb.paths import find_root

if TYPE_CHECKING:
    import pandas as pd

    from masrl_kb.contrib.new_record import Written


@functools.cache
def _default_axis_ids() -> dict[str, list[str]]:
    """Each axis's ids in the default root's taxonomy, for the options' help: a plain YAML
    read, as the checked model would cost every command's start."""
    from masrl_kb.kb.yamlio import load_yaml_file

    try:
        axes = load_yaml_file(find_root() / "taxonomy.yaml").data["axes"]
        return {name: [str(v["id"]) for v in axis["values"]] for name, axis in axes.items()}
    except Exception:  # noqa: BLE001 - help text must never break the parser
        return {}


def help_key() -> str:
    """What this group's help texts read from the data root (the default taxonomy's ids):
    the command line builds its parser again only when it changes."""
    return repr(sorted(_default_axis_ids().items()))


def _axis_help(axis: str, what: str) -> str:
    """Help text listing an axis's ids from the default taxonomy, when readable."""
    ids = _default_axis_ids().get(axis)
    return f"{what}: {', '.join(ids)}" if ids else f"{what} (an id of {axis} in taxonomy.yaml)"


def _write_record(root: Path, write: Callable[[], Written]) -> int:
    """Run ``write``; a paper already recorded is the one finding that exits 1 (the check
    ``add`` and ``exclude`` make). Any other failure, arXiv unreachable or unreadable
    included, is an error of this package or an OSError: one line in ``main``, exit 2."""
    from masrl_kb.contrib.new_record import AlreadyRecorded, describe_written

    try:
        written = write()
    except AlreadyRecorded as found:
        for line in found.matches:
            print(line)
        print("nothing written")
        return EXIT_FAILED
    describe_written(written, root)
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    """Fetch a paper's facts from arXiv and write papers/<key>.yaml with every judgement
    field set to TODO. Prints the abstract to help tagging."""
    from masrl_kb.contrib.arxiv_import import add_paper

    return _write_record(args.root, lambda: add_paper(args.arxiv_id, root=args.root, key=args.key))


def cmd_exclude(args: argparse.Namespace) -> int:
    """Write the next exclusions/E<nnn>.yaml. arXiv titles are fetched; other URLs need
    --title."""
    from masrl_kb.contrib.new_exclusion import exclude_record

    fields = ("stage", "reason", "source", "query_family", "note", "title", "identifier")
    options = {name: getattr(args, name) for name in fields}
    return _write_record(
        args.root, lambda: exclude_record(args.reference, root=args.root, **options)
    )


# ---------------------------------------------------------------- export


def _selected(args: argparse.Namespace) -> pd.DataFrame | None:
    """The papers ``--where`` selects, or None once a bad query is reported (in full: the
    allowed names can be more than the main error line holds)."""
    from masrl_kb.query.axes import select
    from masrl_kb.query.lang import QueryError
    from masrl_kb.query.pool import load_papers

    papers = load_papers(args.root)
    try:
        return select(args.where, papers=papers)
    except QueryError as error:
        shown = repr(args.where)
        shown = shown if len(shown) <= 80 else shown[:76] + "...'"
        err(f"--where {shown}: {error}")
        return None


def _export(render: str) -> Callable[[argparse.Namespace], int]:
    """The handler of ``export <format>``: ``render`` names the exporter, imported when run."""

    def handler(args: argparse.Namespace) -> int:
        import importlib

        module, name = render.rsplit(".", 1)
        papers = _selected(args)
        if papers is None:
            return EXIT_USER_ERROR
        text = getattr(importlib.import_module(f"masrl_kb.contrib.export.{module}"), name)(papers)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0

    return handler


def cmd_export_markdown(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.export import markdown
    from masrl_kb.kb.taxonomy import load_taxonomy

    papers = _selected(args)
    if papers is None:
        return EXIT_USER_ERROR
    root = args.root
    path = Path(args.file) if args.file else root / markdown.DEFAULT_FILE
    block = markdown.render_block(papers, load_taxonomy(root), where=args.where)
    try:
        changed = markdown.update_file(path, block, check=args.check)
    except markdown.AwesomeBlockError as error:
        err(str(error))
        return EXIT_FAILED
    shown = _relative(path, root)
    if args.check and changed:
        err(f"{shown} is stale: run `masrl-kb export markdown` and commit the result")
        return EXIT_FAILED
    state = "updated" if changed else "unchanged"
    print(f"{shown} is current" if args.check else f"{state}: {shown}")
    return 0


def _relative(path: Path, root: Path) -> str:
    full, base = path.resolve(), root.resolve()
    return full.relative_to(base).as_posix() if full.is_relative_to(base) else str(path)


def cmd_export_survey_csv(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.export.survey_csv import write_survey_csv

    for path in write_survey_csv(Path(args.output), root=args.root, as_of=args.as_of):
        print(f"wrote {path}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from masrl_kb.kb.editor_schema import stale_schema_files

    root = args.root
    changed = stale_schema_files(root, write=not args.check)
    for path in changed:
        if args.check:
            err(f"{_relative(path, root)} is stale: run `masrl-kb schema` and commit the result")
        else:
            print(f"wrote {_relative(path, root)}")
    if not changed:
        print("schema files are current")
    return EXIT_FAILED if args.check and changed else 0


def cmd_release(args: argparse.Namespace) -> int:
    """Set CITATION.cff's version and date-released and the package version
    (pyproject.toml, masrl_kb/__init__.py) and write .zenodo.json (Zenodo's metadata,
    counts computed from the records). The release workflow runs it, then tags
    vVERSION; Zenodo archives the tagged release and mints its DOI."""
    from masrl_kb.contrib.release import release

    root = args.root
    for path in release(args.version, args.date or dt.date.today(), root):
        print(f"wrote {_relative(path, root)}")
    return 0


def cmd_check_links(args: argparse.Namespace) -> int:
    from masrl_kb.contrib.links import check_links, format_problem

    checked = check_links(args.root, timeout=args.timeout, workers=args.workers)
    for link, result in (c for c in checked if c[1].broken):
        print(format_problem(link, result))
    for link, result in (c for c in checked if c[1].blocked):
        print(f"{format_problem(link, result)} (blocked for robots; not counted as broken)")
    for link, result in (c for c in checked if c[1].moved):
        print(f"{link.path}:{link.line}: {link.field}: moved to {result.final_url} (update it)")
    urls = len({link.url for link, _ in checked})
    broken = sum(result.broken for _, result in checked)
    summary = f"{broken} broken link(s) of {len(checked)} in the records ({urls} distinct)"
    print(summary, file=sys.stderr if broken else sys.stdout)
    return EXIT_FAILED if broken else 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Papers added, removed or retagged, cross-tab cells and claims whose value changes,
    between a git ref and the working tree."""
    from masrl_kb.contrib.diff import diff_against

    result = diff_against(args.ref, root=args.root)
    sys.stdout.write(result.markdown)
    if result.new.problems:
        err("the working tree fails validation: run `masrl-kb validate`")
        return EXIT_FAILED
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the contributor sub-commands to the main parser's sub-parsers."""
    p = command(sub, "add", cmd_add, "start a paper record from its arXiv id")
    p.add_argument("arxiv_id", help="arXiv id (2505.19591), arXiv:... id or arxiv.org URL")
    p.add_argument("--key", help="record key (default: derived from title and year)")

    p = command(sub, "exclude", cmd_exclude, "log a screened-out record in exclusions/")
    p.add_argument("reference", help="arXiv id or URL, or the http(s) URL of the record")
    p.add_argument("--stage", required=True, help=_axis_help("exclusion_stage", "screening stage"))
    p.add_argument("--reason", required=True, help=_axis_help("exclusion_reason", "reason code"))
    p.add_argument(
        "--source",
        help=_axis_help("exclusion_source", "where it was found (default: from the URL)"),
    )
    p.add_argument(
        "--query-family", help=_axis_help("query_family", "query family (default: TODO)")
    )
    p.add_argument("--note", help="why it is excluded, in your own words (default: TODO)")
    p.add_argument("--title", help="title (required for non-arXiv URLs)")
    p.add_argument("--identifier", help="identifier such as OpenReview:abc (default: derived)")
    _register_export(sub)

    p = command(sub, "schema", cmd_schema, "write the JSON Schemas under schema/ (editor support)")
    p.add_argument("--check", action="store_true", help="exit 1 when a schema file is stale")

    about = "stamp a citable version into CITATION.cff and write .zenodo.json"
    p = command(sub, "release", cmd_release, about)
    p.add_argument("version", help="MAJOR.MINOR.PATCH, not older than the current one")
    p.add_argument("--date", type=iso_date, help="release date YYYY-MM-DD (default: today)")

    about = "request every record's links (needs the network)"
    p = command(sub, "check-links", cmd_check_links, about)
    p.add_argument("--timeout", type=float, default=15.0, help="seconds per request (15)")
    p.add_argument("--workers", type=int, default=8, help="requests in parallel (8)")

    about = "what the working tree changes against a git ref (Markdown)"
    p = command(sub, "diff", cmd_diff, about)
    p.add_argument("ref", help="git ref to compare with, e.g. origin/main or HEAD~1")


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
        p = command(formats, name, _export(render), what)
        p.add_argument("--where", help=where_help)
        p.add_argument("-o", "--output", help="write to this file instead of standard output")
    about = "the awesome list, into the marked block of a file"
    p = command(formats, "markdown", cmd_export_markdown, about)
    p.add_argument("--where", help=where_help)
    p.add_argument("--file", help="Markdown file holding the marked block (default: AWESOME.md)")
    p.add_argument("--check", action="store_true", help="exit 1 when the block is stale")
    about = "papers.csv and excluded.csv in the survey's format"
    p = command(formats, "survey-csv", cmd_export_survey_csv, about)
    p.add_argument("-o", "--output", required=True, help="folder to write the two files to")
    p.add_argument("--as-of", type=iso_date, help="the pool as it stood on YYYY-MM-DD")
