"""``masrl-kb agreement``: how far independent readers agree."""

from __future__ import annotations

import argparse
import json
import math


def _number(value: float) -> float | None:
    """JSON has no NaN: an undefined kappa or alpha is null."""
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _fmt(value: float) -> str:
    return "  n/a" if math.isnan(value) else f"{value:5.2f}"


def cmd_agreement(args: argparse.Namespace) -> int:
    from masrl_kb.query.agreement import agreement, disagreements, readings

    coded = readings(root=args.root)  # loaded once for both tables
    table = agreement(table=coded)
    differ = disagreements(table=coded)
    if args.json:
        rows = [
            {
                "readers": row.readers.split(" / "),
                "axis": row.axis,
                "n": int(row.n),
                "agreement": _number(row.agreement),
                "kappa": _number(row.kappa),
                "alpha": _number(row.alpha),
                "disagreements": [
                    {"key": d.key, "values": [_plain(d.first), _plain(d.second)]}
                    for d in differ[
                        (differ["readers"] == row.readers) & (differ["axis"] == row.axis)
                    ].itertuples()
                ],
            }
            for row in table.itertuples()
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if table.empty:
        print("no independent readings under readings/")
        return 0
    width = max(len(r) for r in table["readers"])
    print(f"{'readers':<{width}}  {'axis':<13} {'n':>3}  agree  kappa  alpha")
    for row in table.itertuples():
        print(
            f"{row.readers:<{width}}  {row.axis:<13} {row.n:>3}  {row.agreement:5.0%}  "
            f"{_fmt(row.kappa)}  {_fmt(row.alpha)}"
        )
    print(f"\n{len(differ)} disagreement(s)")
    for d in differ.itertuples():
        print(f"  {d.key}: {d.axis}: {d.readers}: {d.first} / {d.second}")
    return 0


def _plain(value: object) -> object:
    return value if isinstance(value, bool | str) else str(value)


def register(sub) -> None:
    """Add the ``agreement`` command to the main parser."""
    p = sub.add_parser(
        "agreement", help="agreement between independent readers (kappa, alpha, disagreements)"
    )
    p.add_argument("--json", action="store_true", help="print a JSON list of objects")
    p.set_defaults(func=cmd_agreement)
