"""``masrl-kb screen migrate``: rounds written in an older shape brought to the current one.

Rounds once listed every removed duplicate in ``round.yaml``; a batch removing ~12,000 made
it larger than validate's 1 MiB limit. The current shape counts them in ``round.yaml``
and lists them in the bounded side file ``duplicates.csv``
(:func:`masrl_kb.contrib.screen.round_files.duplicates_csv`). Every round is checked
before any is written, and a round already in the current shape is left as it is.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.screen.round_files import dump_round, duplicates_csv
from masrl_kb.contrib.screen.store import ScreeningError, replace_file, round_lock
from masrl_kb.kb.model.base import validate_file
from masrl_kb.kb.model.rounds_model import DUPLICATES_CSV, ROUND_ID, RoundFile
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.rounds import ROUND_FILE, SCREENING_DIR, screening_root
from masrl_kb.kb.yamlio import LineDict, UnsafeFileError, load_yaml_file

# An old round.yaml may be over validate's limit: that is what migrating fixes.
MAX_OLD_ROUND_BYTES = 64 * 1024 * 1024
_FIELDS = ("id", "duplicate_of", "match")


@dataclass
class Migrated:
    """One round brought to the current shape: its folder and its new files."""

    rid: str
    files: dict[str, str]


def _plain(value: Any) -> Any:
    """A loaded YAML value as plain dicts and lists (the dumper knows no LineDict)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _old_rows(rel: str, listed: list[Any]) -> list[dict[str, str]]:
    rows = []
    for n, item in enumerate(listed):
        ok = isinstance(item, dict) and all(isinstance(item.get(f), str) for f in _FIELDS)
        if not ok:
            raise ScreeningError(
                f"{rel}: duplicates[{n}]: expected a mapping of text {', '.join(_FIELDS)}"
            )
        rows.append({f: clean_text(item[f], 2000) for f in _FIELDS})
    return rows


def _migrated(base: Path, rid: str) -> Migrated | None:
    """The new files of round ``rid``, checked against the model; None when current."""
    rel = f"{SCREENING_DIR}/{rid}/{ROUND_FILE}"
    path = base / SCREENING_DIR / rid / ROUND_FILE
    try:
        loaded = load_yaml_file(path, MAX_OLD_ROUND_BYTES)
    except (UnsafeFileError, OSError) as err:
        raise ScreeningError(f"{rel}: cannot read ({err})") from None
    if loaded.problems or not isinstance(loaded.data, LineDict):
        first = loaded.problems[0] if loaded.problems else None
        where = f"{first.line}: {first.field}: {first.message}" if first else "1: not a mapping"
        raise ScreeningError(f"{rel}:{where}")
    data = _plain(loaded.data)
    if not isinstance(data.get("duplicates"), list):
        return None
    counts = data.get("counts") if isinstance(data.get("counts"), dict) else {}
    text, listed = duplicates_csv(_old_rows(rel, data["duplicates"]))
    summary = {"count": counts.get("duplicates_removed"), "listed": listed, "file": DUPLICATES_CSV}
    data["duplicates"] = summary
    new = {DUPLICATES_CSV: text, ROUND_FILE: dump_round(data)}
    _check(rid, new[ROUND_FILE])
    return Migrated(rid, new)


def _check(rid: str, text: str) -> None:
    """Refuse a migrated round.yaml the model does not accept (nothing is written)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ROUND_FILE
        path.write_text(text, encoding="utf-8")
        rel = f"{SCREENING_DIR}/{rid}/{ROUND_FILE}"
        model, problems = validate_file(RoundFile, path, rel, {"folder": rid}, top="round")
    if model is None:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ScreeningError(f"cannot migrate: {problems[0]}{more}; fix it by hand first")


def migrate_rounds(root: str | os.PathLike[str] | None = None, check: bool = False) -> list[str]:
    """Bring every round under ``screening/`` to the current shape (``check``: write
    nothing); the ids of the rounds that needed it. All are checked before any is written."""
    base = find_root(root)
    folder = screening_root(base)
    if not folder.is_dir():
        return []
    ids = sorted(
        f.name for f in folder.iterdir() if ROUND_ID.match(f.name) and (f / ROUND_FILE).exists()
    )
    found = [m for m in (_migrated(base, rid) for rid in ids) if m is not None]
    if check:
        return [m.rid for m in found]
    for m in found:
        with round_lock(base, m.rid):
            # the side file first: a round.yaml naming it is never left without it
            for name in (DUPLICATES_CSV, ROUND_FILE):
                replace_file(folder / m.rid / name, m.files[name])
    return [m.rid for m in found]
