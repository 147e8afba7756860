"""JSON Schemas for paper and exclusion records, generated from the field lists.

The schemas under ``schema/`` are built from the same two sources the
validator reads: the record field lists in :mod:`masrl_kb.kb.fields` and the
controlled vocabularies in ``taxonomy.yaml``. They are committed so editors
can use them (every record starts with a ``yaml-language-server`` comment
pointing at its schema) and ``masrl-kb schema --check`` fails when they are
stale.

The schema mirrors the validator's per-field rules; rules that need more than
one field or more than one record (file name equals key, no duplicates,
``credit_strict`` needs a credit unit) stay in the validator alone. Two
choices keep the output deterministic: keys are sorted, and the upper bound
of ``year`` (next year, in the validator) is left out because it moves.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from masrl_kb.kb.fields import (
    ARXIV_ID_PATTERN,
    CITATION_FIELDS,
    DECISION_FIELDS,
    EXCLUSION_FIELDS,
    PAPER_FIELDS,
    PLACEHOLDER,
    Field,
)
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.rules import HTTP_URL_PATTERN
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.validate import MIN_YEAR

SCHEMA_DIR = "schema"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILES = {"paper": "paper.schema.json", "exclusion": "exclusion.schema.json"}
_NOT_PLACEHOLDER = {"not": {"const": PLACEHOLDER}}
_NON_BLANK = r"\S"
_URL = HTTP_URL_PATTERN


def schema_comment(kind: str) -> str:
    """The first line of a record file of this kind (``paper`` or ``exclusion``)."""
    return f"# yaml-language-server: $schema=../{SCHEMA_DIR}/{SCHEMA_FILES[kind]}"


def _text() -> dict:
    return {"type": "string", "minLength": 1, "pattern": _NON_BLANK, **_NOT_PLACEHOLDER}


def _url() -> dict:
    return {"type": "string", "format": "uri", "pattern": _URL}


def _axis(f: Field, tax: Taxonomy) -> dict:
    axis = tax[f.axis]
    return {
        "type": "string",
        "enum": list(axis.ids),
        # Read by VS Code's YAML extension to explain each value while completing.
        "enumDescriptions": [f"{v.label}: {v.definition}" for v in axis.values],
    }


def _field_schema(f: Field, tax: Taxonomy) -> dict:
    kind = f.kind
    if kind == "text":
        schema = _text()
    elif kind == "url":
        schema = _url()
    elif kind == "urls":
        schema = {"type": "array", "items": _url()}
    elif kind == "strings":
        schema = {"type": "array", "minItems": 1, "items": _text()}
    elif kind == "axis":
        schema = _axis(f, tax)
    elif kind in ("pattern", "arxiv_id"):
        schema = {"type": "string", "pattern": f.pattern or ARXIV_ID_PATTERN}
    elif kind == "int":
        schema = {"type": "integer"}
        if f.name == "year":
            schema["minimum"] = MIN_YEAR
    elif kind == "bool":
        schema = {"type": "boolean"}
    elif kind == "date":
        schema = {"type": "string", "format": "date"}
    elif kind == "decisions":
        item = _object(DECISION_FIELDS, tax, "One orchestration decision the work touches.")
        schema = {"type": "array", "items": item}
    elif kind == "citation":
        schema = _object(CITATION_FIELDS, tax, f.doc)
    elif kind == "object":
        schema = _object(f.sub, tax, f.doc)
    elif kind == "objects":
        schema = {"type": "array", "items": _object(f.sub, tax, f.doc)}
    elif kind == "artifact":
        none = {
            "type": "object",
            "properties": {"none": {"type": "string", "format": "date"}},
            "required": ["none"],
            "additionalProperties": False,
        }
        schema = {"oneOf": [_url(), none]}
    else:  # pragma: no cover - a new kind must be added here and in the validator
        raise ValueError(f"no JSON Schema rule for field kind {kind!r}")
    schema["description"] = _describe(f, tax)
    return schema


def _describe(f: Field, tax: Taxonomy) -> str:
    if f.axis:
        axis = tax[f.axis]
        return f"{f.doc} {axis.label}: {axis.description}".strip()
    return f.doc


def _object(fields: tuple[Field, ...], tax: Taxonomy, description: str) -> dict:
    return {
        "type": "object",
        "description": description,
        "properties": {f.name: _field_schema(f, tax) for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }


def build_schemas(tax: Taxonomy) -> dict[str, dict]:
    """Both schemas, keyed by record kind."""
    out = {}
    for kind, fields, title, description in (
        ("paper", PAPER_FIELDS, "masrl-kb paper record", "One pooled paper: papers/<key>.yaml."),
        (
            "exclusion",
            EXCLUSION_FIELDS,
            "masrl-kb exclusion record",
            "One screened-out record: exclusions/E<nnn>.yaml.",
        ),
    ):
        schema = _object(fields, tax, description)
        out[kind] = {
            "$schema": DRAFT,
            "$comment": "Generated by `masrl-kb schema` from masrl_kb/fields.py and "
            "taxonomy.yaml; do not edit by hand.",
            "title": title,
            **schema,
        }
    return out


def render_schema(schema: dict) -> str:
    """Deterministic JSON text: sorted keys, indent 2, trailing newline."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_texts(root: str | os.PathLike[str] | None = None) -> dict[Path, str]:
    """The schema files a data root should hold, path -> text."""
    base = find_root(root)
    schemas = build_schemas(load_taxonomy(base))
    return {
        base / SCHEMA_DIR / SCHEMA_FILES[kind]: render_schema(schema)
        for kind, schema in schemas.items()
    }


def stale_schema_files(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Schema files that are missing or differ from what would be generated."""
    stale = []
    for path, text in schema_texts(root).items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(path)
    return stale


def write_schemas(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """(Re)write the schema files; returns the ones whose content changed."""
    changed = []
    for path, text in schema_texts(root).items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        changed.append(path)
    return changed


def to_json_compatible(value: object) -> object:
    """A loaded record as JSON data (YAML dates become ISO strings)."""
    if isinstance(value, dict):
        return {str(k): to_json_compatible(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json_compatible(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value
