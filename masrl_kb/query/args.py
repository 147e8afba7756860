"""The argument checks of the public pandas API (``masrl_kb.load_papers()`` and its
siblings): a bad argument is one :class:`~masrl_kb.query.lang.QueryError` line naming the
argument, raised before any work, never a pandas or Python error from deep inside.

Each public function is wrapped by :func:`checked`, which checks its arguments by *name*
(``root``, ``papers``, ``as_of``...), so that one name means one rule everywhere; the
columns a function needs of a frame it is given are declared at the decorator.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from masrl_kb.kb.paths import TAXONOMY_FILE, RootNotFoundError, find_root
from masrl_kb.kb.text import shorten, strip_controls
from masrl_kb.query.lang import QueryError, unknown_name

if TYPE_CHECKING:
    import pandas as pd

F = TypeVar("F", bound=Callable[..., Any])
# The whole text must be the day: "2026-06-031" or "2026-06-03/2026-07-09" is no date.
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
FRAMES = ("papers", "exclusions", "table")
DAYS = ("as_of", "baseline")


def as_day(value: object, name: str) -> dt.date:
    """``value`` as a day: a ``datetime.date`` (a datetime or pandas Timestamp gives its
    day) or ``YYYY-MM-DD`` text naming a real day; otherwise :class:`QueryError`."""
    if isinstance(value, dt.datetime):
        if value != value:  # pandas' NaT is a datetime that equals nothing
            raise QueryError(f"{name}: not a date (NaT)")
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        raise QueryError(f"{name}: expected a date or 'YYYY-MM-DD' text, got {_kind(value)}")
    try:
        if _DAY.fullmatch(value):
            return dt.date.fromisoformat(value)
    except ValueError:
        raise QueryError(f"{name}: {shorten(value)} is not a day of the calendar") from None
    raise QueryError(f"{name}: {shorten(value)} is not a date YYYY-MM-DD")


def _kind(value: object) -> str:
    """What was given, for a message: a scalar's type and value, else its type alone (the
    repr of a frame or a list spans lines and screens)."""
    if value is None or isinstance(value, str | bytes | int | float):
        return f"{type(value).__name__} {shorten(value, 40)}"
    return type(value).__name__


def check_root(value: object) -> None:
    """A ``root=`` argument names a data root: text or a path to a folder with a taxonomy."""
    base = find_root(value)  # type: ignore[arg-type]  # find_root refuses a non-path itself
    if not (base / TAXONOMY_FILE).is_file():
        shown = strip_controls(os.fspath(base))
        raise RootNotFoundError(f"root {shown}: no {TAXONOMY_FILE} in this folder (no data root)")


def check_frame(value: object, name: str, columns: Iterable[str], who: str) -> None:
    """A frame argument is a DataFrame holding the ``columns`` the function reads."""
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        source = "load_exclusions()" if name == "exclusions" else "load_papers()"
        if name == "table":
            source = "the function named in the docstring"
        raise QueryError(f"{name}: expected a DataFrame (from {source}), got {_kind(value)}")
    require(value, columns, who)


def require(frame: pd.DataFrame, names: Iterable[str], who: str) -> None:
    """Each of ``names`` is a column of ``frame`` (the first missing one is named)."""
    missing = [n for n in names if n not in frame.columns]
    if missing:
        columns = [str(c) for c in frame.columns]
        raise unknown_name(f"{who} needs the column {missing[0]!r}", missing[0], columns, "columns")


def _check_bool(value: object, name: str) -> None:
    import numpy as np

    if not isinstance(value, bool | np.bool_):
        raise QueryError(f"{name}: expected True or False, got {_kind(value)}")


def _check_text(value: object, name: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise QueryError(f"{name}: expected a non-empty text, got {_kind(value)}")


def _check_count(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise QueryError(f"{name}: expected a whole number of 0 or more, got {_kind(value)}")


def _check_claims(value: object, name: str) -> None:
    from masrl_kb.query.claim_model import Claim

    if not isinstance(value, list | tuple) or not all(isinstance(c, Claim) for c in value):
        raise QueryError(
            f"{name}: expected a list of claims (from load_claims()), got {_kind(value)}"
        )


def _check_crosstabs(value: object, name: str) -> None:
    def triple(item: object) -> bool:
        return (
            isinstance(item, tuple | list)
            and len(item) == 3
            and all(isinstance(a, str) for a in item[:2])
            and isinstance(item[2], bool)
        )

    if not isinstance(value, list | tuple) or not all(triple(i) for i in value):
        want = "a list of (rows axis, cols axis, strict) tuples"
        raise QueryError(f"{name}: expected {want}, got {_kind(value)}")


def _check_drafts(value: object, name: str) -> None:
    from masrl_kb.kb.drafts import check_mode

    try:
        check_mode(value)  # type: ignore[arg-type]  # the check is for any value
    except ValueError as err:
        raise QueryError(str(err)) from None


def _check_pairs(value: object, name: str) -> None:
    def pair(item: object) -> bool:
        return (
            isinstance(item, frozenset) and len(item) == 2 and all(isinstance(a, str) for a in item)
        )

    if not isinstance(value, set | frozenset) or not all(pair(i) for i in value):
        want = "a set of frozensets of two reader ids (from declared_pairs())"
        raise QueryError(f"{name}: expected {want}, got {_kind(value)}")


# argument name -> its check (None values are the defaults: each function's own meaning)
_SIMPLE: dict[str, Callable[[object, str], None]] = {
    "strict": _check_bool,
    "author": _check_text,
    "outside": _check_count,
    "claims": _check_claims,
    "crosstabs": _check_crosstabs,
    "drafts": _check_drafts,
    "pairs": _check_pairs,
}


def checked(**columns: tuple[str, ...]) -> Callable[[F], F]:
    """Check the wrapped function's arguments by name before it runs (dates given as text
    become ``datetime.date``); ``columns``: frame argument -> the columns it must hold."""

    def wrap(func: F) -> F:
        signature = inspect.signature(func)
        who = f"{func.__name__}()"

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as err:
                raise QueryError(f"{who}: {err}") from None
            given = bound.arguments
            for name, value in given.items():
                if value is None and signature.parameters[name].default is None:
                    continue  # the default: the function's own meaning (load, find the root)
                if name == "root":
                    check_root(value)
                elif name in FRAMES:
                    check_frame(value, name, columns.get(name, ()), who)
                elif name in DAYS:
                    given[name] = as_day(value, name)
                elif name in _SIMPLE:
                    _SIMPLE[name](value, name)
            return func(*bound.args, **bound.kwargs)

        return run  # type: ignore[return-value]

    return wrap
