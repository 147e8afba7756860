"""``masrl-kb agreement``: how far independent readers agree."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from masrl_kb.cli.common import command, iso_date


def _number(value: float) -> float | None:
    """JSON has no NaN: an undefined kappa or alpha is null."""
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _fmt(value: float) -> str:
    return "  n/a" if math.isnan(value) else f"{value:5.2f}"


def _json_rows(table: list[dict], differ: list[dict]) -> list[dict[str, Any]]:
    from masrl_kb.contrib.export.tables import json_value

    return [
        {
            "readers": row["readers"].split(" / "),
            "axis": row["axis"],
            "n": int(row["n"]),
            **{name: _number(row[name]) for name in ("agreement", "kappa", "alpha")},
            "disagreements": [
                {"key": d["key"], "values": [json_value(d["first"]), json_value(d["second"])]}
                for d in differ
                if (d["readers"], d["axis"]) == (row["readers"], row["axis"])
            ],
        }
        for row in table
    ]


def cmd_snapshot(args: argparse.Namespace) -> int:
    from masrl_kb.cli.common import EXIT_USER_ERROR, err
    from masrl_kb.contrib.reading_snapshot import SnapshotError, write_snapshot
    from masrl_kb.kb.paths import find_root

    keys = [k for k in (args.keys or "").split(",") if k]
    try:
        path = write_snapshot(
            find_root(args.root),
            args.snapshot,
            args.name or f"The records' own reading ({args.snapshot})",
            args.method or "The codings the records held when the snapshot was written.",
            added_on=args.added_on,
            keys=keys,
        )
    except SnapshotError as error:
        err(str(error))
        return EXIT_USER_ERROR
    print(f"wrote {path.parent.name}/{path.name}")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from masrl_kb.query import agreement as q
    from masrl_kb.query.pool import load_papers

    if args.snapshot:
        return cmd_snapshot(args)

    readers = q.reader_list(args.root)  # each file read and checked once, for both uses
    coded = q.readers_table(load_papers(args.root), readers)  # once for both tables
    pairs = q.declared_pairs(readers) if args.declared else None
    if args.not_cited:
        coded = q.without_papers(coded, q.codebook_examples(args.root))
    table = q.agreement(table=coded, pairs=pairs).to_dict("records")
    differ = q.disagreements(table=coded, pairs=pairs).to_dict("records")
    if args.json:
        print(json.dumps(_json_rows(table, differ), indent=2, ensure_ascii=False))
        return 0
    if not table:
        print("no independent readings under readings/")
        return 0
    width = max(len(r["readers"]) for r in table)
    axis_width = max(13, *(len(r["axis"]) for r in table))
    print(f"{'readers':<{width}}  {'axis':<{axis_width}} {'n':>3}  agree  kappa  alpha")
    for row in table:
        print(
            f"{row['readers']:<{width}}  {row['axis']:<{axis_width}} {row['n']:>3}  "
            f"{row['agreement']:5.0%}  "
            f"{_fmt(row['kappa'])}  {_fmt(row['alpha'])}"
        )
    print(f"\n{len(differ)} disagreement(s)")
    for d in differ:
        print(f"  {d['key']}: {d['axis']}: {d['readers']}: {d['first']} / {d['second']}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``agreement`` command to the main parser."""
    about = "agreement between independent readers (kappa, alpha, disagreements)"
    p = command(sub, "agreement", cmd_agreement, about)
    p.add_argument("--json", action="store_true", help="print a JSON list of objects")
    p.add_argument(
        "--declared",
        action="store_true",
        help="only the pairs the readings declare (a reader and its compare_with)",
    )
    p.add_argument(
        "--not-cited",
        action="store_true",
        help="leave out the papers docs/codebook.md cites as worked examples",
    )
    p.add_argument(
        "--snapshot",
        metavar="READER",
        help="instead, write readings/READER.yaml with the records' own codings",
    )
    p.add_argument("--added-on", type=iso_date, help="with --snapshot: the papers added that day")
    p.add_argument("--keys", help="with --snapshot: comma-separated paper keys")
    p.add_argument("--name", help="with --snapshot: who the reader is")
    p.add_argument("--method", help="with --snapshot: how the codings were made")
