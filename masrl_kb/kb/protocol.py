"""The survey's search and screening protocol, read from ``protocol.yaml``
(the rules: :mod:`masrl_kb.kb.model.protocol_model`)."""

from __future__ import annotations

import datetime as dt

from masrl_kb.kb.model.base import context, validate_file
from masrl_kb.kb.model.protocol_model import Protocol, QueryFamily
from masrl_kb.kb.paths import Root, find_root
from masrl_kb.kb.problem import DataFileError, Problem
from masrl_kb.kb.taxonomy import load_taxonomy

__all__ = [
    "PROTOCOL_FILE",
    "Protocol",
    "ProtocolError",
    "QueryFamily",
    "load_protocol",
    "protocol_baseline",
]
PROTOCOL_FILE = "protocol.yaml"


class ProtocolError(DataFileError):
    """``protocol.yaml`` is missing or malformed; ``problems`` lists every problem found."""


def load_protocol(root: Root = None) -> Protocol:
    """Read and check ``protocol.yaml``; raise :class:`ProtocolError` listing every problem."""
    base = find_root(root)
    path = base / PROTOCOL_FILE
    if not path.is_file():
        raise ProtocolError([Problem(PROTOCOL_FILE, 1, "file", f"no {PROTOCOL_FILE} in {base}")])
    protocol, problems = validate_file(Protocol, path, PROTOCOL_FILE, context(load_taxonomy(base)))
    if protocol is None:
        raise ProtocolError(sorted(problems), f"problem(s) in {PROTOCOL_FILE}")
    return protocol


def protocol_baseline(root: Root = None) -> dt.date | None:
    """The survey's cut-off (``protocol.yaml`` ``survey.baseline``); None for a data root
    without a protocol (a bare root has no survey to compare with)."""
    base = find_root(root)
    return load_protocol(base).baseline if (base / PROTOCOL_FILE).is_file() else None
