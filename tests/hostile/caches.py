"""Placeholder: filled in with the cache cases."""

from __future__ import annotations


def cache_cases() -> list:
    return []
