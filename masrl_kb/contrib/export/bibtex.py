"""``masrl-kb export bibtex``: one BibTeX entry per pooled paper (bibtexparser 2).

Type and key come from the record's ``citation`` block. Prose fields are
LaTeX-encoded (pylatexenc, rules below) so a brace or backslash prints as itself
and cannot close the field, and title capitals are protected; URLs are
percent-encoded. :func:`read_bibtex` reverses the encoding.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import quote

import bibtexparser
import pandas as pd
from bibtexparser import Library
from bibtexparser.middlewares import SeparateCoAuthors
from bibtexparser.model import Block, Entry, Field
from bibtexparser.writer import BibtexFormat

_CITATION_FIELDS = ("volume", "number", "pages", "publisher")
# Fields that are identifiers, not prose: never LaTeX-encoded (biblatex reads
# url verbatim; eprint and year are validated patterns).
_VERBATIM = frozenset({"url", "eprint", "archivePrefix", "year", "author", "howpublished"})

# What LaTeX (and BibTeX's brace counting) would read as markup, spelled so that
# it prints as itself: with these, braces and backslashes cannot end a field
# or start a command, and pylatexenc's decoder gives the same text back.
_SPECIALS = {
    ord("\\"): r"\textbackslash{}",
    ord("{"): r"\{",
    ord("}"): r"\}",
    ord("$"): r"\$",
    ord("&"): r"\&",
    ord("%"): r"\%",
    ord("#"): r"\#",
    ord("_"): r"\_",
    ord("~"): r"\textasciitilde{}",
    ord("^"): r"\string^",
    ord('"'): '{"}',
}
# Pairs TeX fonts turn into one glyph (-- en dash, `` and '' quotes, !` and ?`
# inverted marks, << and >> guillemets, ,, low quote): a {} between keeps both.
_LIGATURES = {"-": "-", "'": "'", "`": "`", "<": "<", ">": ">", ",": ",", "!": "`", "?": "`"}


def _break_ligature(text: str, pos: int):
    follower = _LIGATURES.get(text[pos])
    if follower is not None and text[pos + 1 : pos + 2] == follower:
        return 1, text[pos] + "{}"
    return None


@functools.cache
def _encoder(ligatures: bool = True):
    from pylatexenc.latexencode import (
        RULE_CALLABLE,
        RULE_DICT,
        UnicodeToLatexConversionRule,
        UnicodeToLatexEncoder,
    )

    return UnicodeToLatexEncoder(
        conversion_rules=[
            *([UnicodeToLatexConversionRule(RULE_CALLABLE, _break_ligature)] if ligatures else []),
            UnicodeToLatexConversionRule(RULE_DICT, _SPECIALS),
        ],
        # Other characters stay as UTF-8: biber and modern BibTeX read them.
        unknown_char_policy="keep",
        unknown_char_warning=False,
        replacement_latex_protection="braces-after-macro",
    )


@functools.cache
def _decoder():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)


_EDGE = re.compile(r"^(?P<lead>[(\[\"']*)(?P<core>.*?)(?P<trail>[)\]\"':;,.?!]*)$")


def _needs_protection(word: str) -> bool:
    if len(word) == 1:
        return word.isupper() and word != "A"
    upper = [c.isupper() for c in word]
    return any(upper[1:]) or (any(upper) and any(c.isdigit() for c in word))


def protect_capitals(encoded: str) -> str:
    """An encoded title with a word braced (so styles do not lower-case it) when it has a
    later capital (LLM, DeepSeek), a capital and a digit (R1) or is one capital but 'A';
    punctuation stays outside the braces, words holding encoded specials are left alone."""
    words = []
    for word in encoded.split(" "):
        parts = _EDGE.match(word)
        core = parts.group("core") if parts else ""
        if parts and core and not set("{}\\") & set(word) and _needs_protection(core):
            word = f"{parts.group('lead')}{{{core}}}{parts.group('trail')}"
        words.append(word)
    return " ".join(words)


def protect_title(title: str) -> str:
    """A title as the export writes it: LaTeX-encoded, capitals protected."""
    return protect_capitals(_encoder().unicode_to_latex(title))


def unprotect_title(value: str) -> str:
    """The title text back from :func:`protect_title` (LaTeX decoded, braces dropped)."""
    return _decoder().latex_to_text(value)


def format_author(name: str) -> str:
    """One author for BibTeX: 'Family, Given' as is; other names braced (encoded)."""
    encoded = _encoder().unicode_to_latex(name)
    if "," in name and not re.search(r"\sand\s", name, re.IGNORECASE):
        return encoded
    return f"{{{encoded}}}"


def author_field(authors: list[str], truncated: bool) -> str:
    names = [format_author(a) for a in authors]
    if truncated:
        names.append("others")
    return " and ".join(names)


def safe_url(url: str) -> str:
    """A URL that cannot close a BibTeX field: braces, backslashes, spaces percent-encoded."""
    return quote(url.strip(), safe="!#$&'()*+,/:;=?@[]~%-._")


def _text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    text = str(value).strip()
    return text or None


def paper_entry(key: str, row: pd.Series | dict) -> Entry:
    """The BibTeX entry of one papers-frame row, in plain text (:func:`to_bibtex` encodes)."""
    citation = row["citation"]
    entry_type = str(citation["entry_type"])
    url = safe_url(str(row["url"]))
    fields = {
        "title": str(row["title"]),
        "author": author_field(list(row["authors"]), bool(row["authors_truncated"])),
    }
    venue = _text(row["venue"])
    if entry_type == "article" and citation.get("journal"):
        fields["journal"] = str(citation["journal"])
    elif entry_type == "inproceedings" and citation.get("booktitle"):
        fields["booktitle"] = str(citation["booktitle"])
    elif entry_type == "techreport":
        institution = citation.get("publisher") or _text(row["affiliation"])
        if institution:
            fields["institution"] = str(institution)
    elif entry_type == "misc":
        fields["howpublished"] = f"\\url{{{url}}}"
        if venue:
            fields["note"] = venue
    skip = "publisher" if entry_type == "techreport" else ""  # given as the institution
    for name in _CITATION_FIELDS:
        if name != skip and citation.get(name) is not None:
            fields[name] = str(citation[name])
    fields.update(year=str(int(row["year"])), url=url)
    arxiv_id = _text(row.get("arxiv_id"))
    if arxiv_id:
        fields.update(eprint=arxiv_id, archivePrefix="arXiv")
    return Entry(entry_type, str(citation["bibtex_key"]), [Field(k, v) for k, v in fields.items()])


# Fields where TeX's ligatures are meant: in a range (819--840, 2--3) -- is an en dash.
_RANGES = frozenset({"pages", "number", "volume"})


def _encoded(entry: Entry) -> Entry:
    """The entry with every prose field LaTeX-encoded and the title's capitals protected;
    ranges keep TeX's ligatures (``819--840``: ``--`` is an en dash)."""
    fields = []
    for f in entry.fields:
        value = f.value
        if f.key not in _VERBATIM:
            value = _encoder(ligatures=f.key not in _RANGES).unicode_to_latex(value)
        if f.key == "title":
            value = protect_capitals(value)
        fields.append(Field(f.key, value))
    return Entry(entry.entry_type, entry.key, fields)


def to_bibtex(papers: pd.DataFrame) -> str:
    """BibTeX text for every row of a papers frame, in citation-key order."""
    rows = papers.to_dict("index")  # plain dicts: iterrows() builds a Series per row
    entries = [_encoded(paper_entry(str(key), row)) for key, row in rows.items()]
    entries.sort(key=lambda e: e.key.lower())
    blocks: list[Block] = [*entries]
    fmt = BibtexFormat()
    fmt.indent = "  "
    fmt.block_separator = "\n"
    text = bibtexparser.write_string(Library(blocks), bibtex_format=fmt)
    return text.strip() + "\n"


def read_bibtex(text: str) -> list[dict[str, object]]:
    """The reverse of :func:`to_bibtex`: each entry's fields as plain text (authors as a
    list, LaTeX decoded, protecting braces dropped), in file order."""
    # Split co-authors on the encoded text (a braced " and " stays inside a name),
    # then decode every value with the decoder the decoding middleware uses.
    library = bibtexparser.parse_string(text, append_middleware=[SeparateCoAuthors()])
    if library.failed_blocks:
        raise ValueError(f"{len(library.failed_blocks)} BibTeX block(s) could not be read")
    decode = _decoder().latex_to_text
    out = []
    for entry in library.entries:
        row: dict[str, object] = {"ID": entry.key, "ENTRYTYPE": entry.entry_type}
        for f in entry.fields:
            if f.key in ("url", "eprint", "year", *_RANGES):
                row[f.key] = f.value
            elif isinstance(f.value, list):
                row[f.key] = [decode(v) for v in f.value]
            else:
                row[f.key] = decode(f.value)
        out.append(row)
    return out
