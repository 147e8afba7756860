"""``masrl-kb export bibtex``: one BibTeX entry per pooled paper (bibtexparser 2).

Each entry takes its type and key from the record's ``citation`` block and
carries: ``title`` (capitals protected, see :func:`protect_title`),
``author`` (``and others`` when the list is truncated; one-word and group
names braced so BibTeX does not split them), the venue field of its type
(``journal``, ``booktitle``; ``howpublished`` plus a ``note`` naming the
venue for ``misc``; ``institution`` for ``techreport``), ``volume``,
``number``, ``pages``, ``publisher`` when given, ``year``, ``url`` and, for
papers with an arXiv id, ``eprint`` and ``archivePrefix``.
"""

from __future__ import annotations

import re

import bibtexparser
import pandas as pd
from bibtexparser import Library
from bibtexparser.model import Entry, Field
from bibtexparser.writer import BibtexFormat

# Characters LaTeX treats as commands in running text. `$` and `\` are left
# alone: titles use them for inline math.
_LATEX_SPECIALS = re.compile(r"(?<!\\)([&%#_])")
_CITATION_FIELDS = ("volume", "number", "pages", "publisher")


_EDGE = re.compile(r"^(?P<lead>[(\[\"']*)(?P<core>.*?)(?P<trail>[)\]\"':;,.?!]*)$")


def _needs_protection(word: str) -> bool:
    if len(word) == 1:
        return word.isupper() and word != "A"
    upper = [c.isupper() for c in word]
    return any(upper[1:]) or (any(upper) and any(c.isdigit() for c in word))


def protect_title(title: str) -> str:
    """The title with LaTeX specials escaped and capitals protected.

    A word is braced, so bibliography styles do not lower-case it, when it
    has a capital after its first character (acronyms such as LLM, GRPO,
    MARFT; camel case such as DeepSeek; hyphenated names such as M-GRPO), a
    capital and a digit (K2.5, R1) or is a single capital letter other than
    'A' (C). Surrounding punctuation stays outside the braces. Words that only
    start with a capital are left alone, and so are words already holding
    braces or math.
    """
    words = []
    for word in title.split(" "):
        word = _LATEX_SPECIALS.sub(r"\\\1", word)
        parts = _EDGE.match(word)
        core = parts.group("core")
        if core and "{" not in word and "$" not in word and _needs_protection(core):
            word = f"{parts.group('lead')}{{{core}}}{parts.group('trail')}"
        words.append(word)
    return " ".join(words)


def unprotect_title(value: str) -> str:
    """Undo :func:`protect_title` (for comparisons in tests and tools)."""
    return re.sub(r"\\([&%#_])", r"\1", value.replace("{", "").replace("}", ""))


def format_author(name: str) -> str:
    """One author for BibTeX: 'Family, Given' as is; other names braced."""
    return name if "," in name else f"{{{name}}}"


def author_field(authors: list[str], truncated: bool) -> str:
    names = [format_author(a) for a in authors]
    if truncated:
        names.append("others")
    return " and ".join(names)


def _text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    text = str(value).strip()
    return text or None


def paper_entry(key: str, row: pd.Series) -> Entry:
    """The BibTeX entry of one row of :func:`masrl_kb.query.frames.load_papers`."""
    citation = row["citation"]
    entry_type = str(citation["entry_type"])
    fields = [
        Field("title", protect_title(str(row["title"]))),
        Field("author", author_field(list(row["authors"]), bool(row["authors_truncated"]))),
    ]
    venue = _text(row["venue"])
    if entry_type == "article" and citation.get("journal"):
        fields.append(Field("journal", str(citation["journal"])))
    elif entry_type == "inproceedings" and citation.get("booktitle"):
        fields.append(Field("booktitle", str(citation["booktitle"])))
    elif entry_type == "techreport":
        institution = citation.get("publisher") or _text(row["affiliation"])
        if institution:
            fields.append(Field("institution", str(institution)))
    elif entry_type == "misc":
        fields.append(Field("howpublished", f"\\url{{{row['url']}}}"))
        if venue:
            fields.append(Field("note", venue))
    for name in _CITATION_FIELDS:
        if entry_type == "techreport" and name == "publisher":
            continue
        if citation.get(name) is not None:
            fields.append(Field(name, str(citation[name])))
    fields.append(Field("year", str(int(row["year"]))))
    fields.append(Field("url", str(row["url"])))
    arxiv_id = _text(row.get("arxiv_id"))
    if arxiv_id:
        fields.append(Field("eprint", arxiv_id))
        fields.append(Field("archivePrefix", "arXiv"))
    return Entry(entry_type, str(citation["bibtex_key"]), fields)


def to_bibtex(papers: pd.DataFrame) -> str:
    """BibTeX text for every row of a papers frame, in citation-key order."""
    entries = [paper_entry(str(key), row) for key, row in papers.iterrows()]
    entries.sort(key=lambda e: e.key.lower())
    fmt = BibtexFormat()
    fmt.indent = "  "
    fmt.block_separator = "\n"
    text = bibtexparser.write_string(Library(entries), bibtex_format=fmt)
    return text.strip() + "\n"
