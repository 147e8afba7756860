"""The typed record models: each data file's fields and per-record rules, in one place.

:mod:`.base` holds the shared machinery (pydantic errors -> ``Problem`` with
lines), :mod:`.types` the field types every model is built from.
"""
