"""Small rules the whole package shares, each written once: :data:`NA` ("does not
apply"), decision statuses, which strings count as links, the survey's cross-tabs."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

NA = "NA"
# A day as records and arguments write it; anchored at both ends, so 2026-06-031 or
# 2026-06-03/2026-07-09 is refused, never read as 2026-06-03.
ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
LEARNED = "learned"
PRESENT = "present"
ABSENT = "absent"

# (rows, columns, strict) of each cross-tab; pairs put a table beside its
# strict or learned-only variant (None when it has none).
Crosstab = tuple[str, str, bool]
CROSSTAB_PAIRS: tuple[tuple[Crosstab, Crosstab | None], ...] = (
    (("reward_family", "credit_unit", False), ("reward_family", "credit_unit", True)),
    (("topology", "credit_unit", False), ("topology", "credit_unit", True)),
    (("decision", "topology", False), ("decision_learned", "topology", False)),
    (("decision", "reward_family", False), ("decision_learned", "reward_family", False)),
    (("category", "year", False), None),
)


def crosstab_list() -> list[Crosstab]:
    """Every cross-tab, broad ones first within each pair."""
    return [c for pair in CROSSTAB_PAIRS for c in pair if c is not None]


def decision_statuses(decisions: Iterable[Mapping]) -> dict[str, str]:
    """Decision id -> ``learned`` (an RL or post-training update acts on it) or ``present``."""
    return {str(d.get("id")): LEARNED if d.get("learned") is True else PRESENT for d in decisions}


# The same rule as a JSON Schema pattern (for editors validating as you type);
# it asks for the lower-case scheme every record uses.
HTTP_URL_PATTERN = r"^https?://[^\s/?#]+"


def is_http_url(value: object) -> bool:
    """Whether ``value`` is an absolute http(s) URL with a host."""
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value.strip())
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def iso_day(text: str) -> dt.date:
    """``text`` as a YYYY-MM-DD day, the whole text (ValueError otherwise: no week dates,
    no basic format, nothing after the day)."""
    if not ISO_DAY.fullmatch(text):
        raise ValueError(f"{text!r} is not a date YYYY-MM-DD")
    return dt.date.fromisoformat(text)
