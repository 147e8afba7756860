"""Hostile inputs for the screening commands: three groups of the corpus.

- ``screen import``: malformed, truncated, mislabelled or linked candidate lists
  and bad options; the one error line must name the file, line and field;
- ``screen decide``: malformed decision files, tampered round folders, links
  and a held lock, against a round made from a good list first;
- ``screen run feeds``: hostile arXiv answers from a loopback server (not a
  feed, an error entry, bad dates, a trickle, a silent server...), run with a
  1.5 s deadline per request and no delay.

A case is rejected cleanly when the command exits non-zero within its time,
some error line holds the expected ``file:line: field:`` fragment (or message),
no line is a traceback, over 600 characters or holds a control character, and
no file of the data root changed (lock files aside: they are not data).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from masrl_kb.contrib.sources import arxiv
from tests.hostile.arxiv_cases import Stub, fail_then, gzip_bomb, silent, trickling, unbounded
from tests.hostile.running import Judged, common_reasons, environ, files, run_cli, tally
from tests.loopback import send_atom
from tests.screening_stub import copy_kb

SINCE, UNTIL = "2026-06-01", "2026-06-30"
ROUND = f"{SINCE}_{UNTIL}"
MAX_LINE = 600
HEADER = "id,title,authors,date,url,abstract,doi,arxiv_id,openreview_id\n"
GOOD_ROW = 'W1,Learning When to Stop,"Placeholder, Ada",2026-06-03,https://example.org/w1,,,,\n'
GOOD_CSV = HEADER + GOOD_ROW + 'W2,Turn Credit,"Stub, Dan",2026-06-04,,,,,AbCdEf1234\n'
GOOD_RIS = "TY  - JOUR\nTI  - A Title\nDA  - 2026/06/03\nUR  - https://e.org/a\nER  -\n"

Setup = Callable[[Path, Path], list[str]]  # (data root, scratch folder) -> argv after --root


@dataclass(frozen=True)
class ScreenCase:
    group: str
    name: str
    expect: str  # a fragment the error lines must hold
    setup: Setup
    within: float = 20.0
    env: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


# ---------------------------------------------------------------- screen import


def _import(path: Path, *options: str) -> list[str]:
    window = ["--since", SINCE, "--until", UNTIL]
    return ["screen", "import", str(path), "--source", "openalex", *window, *options]


def _import_file(name: str, data: bytes, *options: str) -> Setup:
    def setup(root: Path, tmp: Path) -> list[str]:
        path = tmp / name
        path.write_bytes(data)
        return _import(path, *options)

    return setup


def _import_special(kind: str) -> Setup:
    def setup(root: Path, tmp: Path) -> list[str]:
        path = tmp / "list.csv"
        if kind == "symlink":
            (tmp / "real.csv").write_text(GOOD_CSV)
            path.symlink_to(tmp / "real.csv")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "sparse":
            with open(path, "wb") as fh:
                fh.truncate(8 << 30)
        elif kind == "missing":
            pass
        return _import(path)

    return setup


def _import_into(kind: str) -> Setup:
    def setup(root: Path, tmp: Path) -> list[str]:
        path = tmp / "list.csv"
        path.write_text(GOOD_CSV)
        argv = _import(path)
        if kind == "screening-link":
            (tmp / "elsewhere").mkdir()
            os.symlink(tmp / "elsewhere", root / "screening")
        else:
            _made_round(root, tmp)
            folder = root / "screening" / ROUND
            if kind == "round-link":
                folder.rename(tmp / "moved")
                os.symlink(tmp / "moved", folder)
            elif kind == "round-yaml-tampered":
                text = (folder / "round.yaml").read_text()
                (folder / "round.yaml").write_text(text.replace("identified: 2", "identified: -4"))
            else:
                _tamper_round(folder, kind)
            (tmp / "other.csv").write_text(HEADER + GOOD_ROW.replace("W1", "W9"))
            argv[2] = str(tmp / "other.csv")
        return argv

    return setup


def import_cases() -> list[ScreenCase]:
    g = "screen import"
    row = "W1,A Title,,{date},{url},,{doi},{arxiv},{orid}\n"

    def csv_row(**kw: str) -> bytes:
        values = {"date": "2026-06-03", "url": "https://e.org/a", "doi": "", "arxiv": "",
                  "orid": ""} | kw  # fmt: skip
        return (HEADER + row.format(**values)).encode()

    files = [
        ("no-header", b"", ":1: header: "),
        ("only-header", HEADER.encode(), ":1: file: no candidate"),
        ("no-title-column", b"id,authors\nW1,x\n", ":1: header: "),
        ("duplicate-column", b"id,title,title\nW1,a,b\n", ":1: header: "),
        ("date-missing", csv_row(date=""), ":2: date: "),
        ("date-not-a-day", csv_row(date="2026-02-30"), ":2: date: "),
        ("date-year-only", csv_row(date="2026"), ":2: date: "),
        ("date-year-0", csv_row(date="0000-01-01"), ":2: date: "),
        ("date-ancient", csv_row(date="1066-10-14"), ":2: date: "),
        ("date-future", csv_row(date="2999-01-01"), ":2: date: "),
        ("date-huge", csv_row(date="99999-01-01"), ":2: date: "),
        ("date-text", csv_row(date="yesterday"), ":2: date: "),
        # Issue 27: no end anchor read these as 2026-06-03.
        ("date-extra-digit", csv_row(date="2026-06-031"), ":2: date: '2026-06-031' is not one"),
        ("date-range", csv_row(date="2026-06-03/2026-07-09"), ":2: date: "),
        ("url-javascript", csv_row(url="javascript:alert(1)"), ":2: url: "),
        ("url-file", csv_row(url="file:///etc/passwd"), ":2: url: "),
        ("url-control", csv_row(url='"https://e.org/\x1b[2J"'), ":2: url: "),
        ("url-missing", csv_row(url=""), ":2: url: "),
        ("doi-malformed", csv_row(doi="11.1/x"), ":2: doi: "),
        ("doi-spaces", csv_row(doi='"10.1234/a b"'), ":2: doi: "),
        ("arxiv-malformed", csv_row(arxiv="2613.00001"), ":2: arxiv_id: "),
        ("openreview-malformed", csv_row(orid='"a b"'), ":2: openreview_id: "),
        ("title-empty", HEADER.encode() + b"W1,,,2026-06-03,https://e.org/,,,,\n", ":2: title:"),
        (
            "title-controls",
            HEADER.encode() + b"W1,\x1b\x07,,2026-06-03,https://e.org/,,,,\n",
            ":2: title:",
        ),  # fmt: skip
        ("row-short", HEADER.encode() + b"W1,A Title\n", ":2: row: "),
        ("row-long", HEADER.encode() + b"W1,A,,2026-06-03,https://e.org/,,,,,,x\n", ":2: row: "),
        ("cell-over-131072", HEADER.encode() + b"W1,T,," + b"x" * 140_000 + b",,,,,\n", ": csv: "),
        ("unclosed-quote", HEADER.encode() + b'W1,"A Title,,2026-06-03,,,,,\n', ": csv: "),
        ("nul-byte", csv_row().replace(b"A Title", b"A\x00Title"), ":2: file: holds a NUL"),
        ("not-utf8", csv_row().replace(b"A Title", b"Caf\xe9"), ":2: file: not UTF-8"),
        ("cr-only-bad-date", csv_row(date="2026-13-01").replace(b"\n", b"\r"), ":2: date: "),
        ("ris-named-csv", GOOD_RIS.encode(), "list.csv:1: header: "),
        ("bibtex-named-csv", b"@article{a, title={x}}\n", "list.csv:1: header: "),
    ]
    cases = [ScreenCase(g, n, e, _import_file("list.csv", d)) for n, d, e in files]
    ris = [
        ("csv-named-ris", GOOD_CSV.encode(), "list.ris:1: header: not RIS"),
        ("truncated", GOOD_RIS.encode()[:-6], "list.ris:1: ris: truncated"),
        ("no-er-between", (GOOD_RIS.replace("ER  -\n", "") + GOOD_RIS).encode(), ":5: ris: "),
        ("stray-line", (GOOD_RIS + "garbage here\n").encode(), ":6: ris: "),
        ("er-only", b"ER  -\n", ":1: "),
        ("empty", b"\n\n", ":1: header: "),
        ("year-only", GOOD_RIS.replace("DA  - 2026/06/03", "PY  - 2026").encode(), ":1: date: "),
        ("date-range", GOOD_RIS.replace("/03", "/03/2026/07/09").encode(), ":1: date: "),
        (
            "line-over-131072",
            ("TY  - JOUR\nTI  - " + "x" * 140_000 + "\nER  -\n").encode(),
            ":2: ris: ",
        ),  # fmt: skip
    ]
    cases += [ScreenCase(g, f"ris-{n}", e, _import_file("list.ris", d)) for n, d, e in ris]
    bib = [
        ("csv-named-bib", GOOD_CSV.encode(), "list.bib:1: header: not BibTeX"),
        ("unclosed", b"@article{a,\n title={x},\n date={2026-06-03}\n", ": bibtex: "),
        ("duplicate-key", b"@misc{a, title={x}, date={2026-06-03}, url={https://e.org/}}\n"
         b"@misc{a, title={y}, date={2026-06-04}, url={https://e.org/}}\n", ": bibtex: "),
        ("no-day", b"@misc{a, title={x}, year={2026}, url={https://e.org/}}\n", ":1: date: "),
        ("date-range", b"@misc{a, title={x}, date={2026-06-03/2026-07-09}, url={https://e.org/}}\n",
         ":1: date: "),
    ]  # fmt: skip
    cases += [ScreenCase(g, f"bib-{n}", e, _import_file("list.bib", d)) for n, d, e in bib]
    options = [
        ("unknown-extension", _import_file("list.xlsx", GOOD_CSV.encode()), "unknown extension"),
        (
            "unknown-source",
            _import_file("list.csv", GOOD_CSV.encode(), "--source", "myspace"),
            "--source: unknown value",
        ),  # fmt: skip
        (
            "source-injection",
            _import_file("l.csv", GOOD_CSV.encode(), "--source", "x\x1b[2J"),
            "--source: unknown value",
        ),  # fmt: skip
        ("symlinked-file", _import_special("symlink"), "list.csv:1: file: "),
        ("fifo", _import_special("fifo"), "list.csv:1: file: "),
        ("sparse-8gb", _import_special("sparse"), "list.csv:1: file: larger than"),
        ("missing", _import_special("missing"), "list.csv:1: file: no such file"),
        ("screening-is-link", _import_into("screening-link"), "screening/:1: file: a symbolic"),
        ("round-is-link", _import_into("round-link"), f"{ROUND}/:1: file: a symbolic link"),
        ("round-yaml-tampered", _import_into("round-yaml-tampered"), "round.yaml:"),
        # issue 27: round files checked before use, names and parser warnings cleaned
        ("entries-title-number", _import_into("entries-title-number"), "entry 0: title: "),
        ("entries-authors-text", _import_into("entries-authors-text"), "entry 0: authors: "),
        ("candidates-not-utf8", _import_into("candidates-not-utf8"), "candidates.csv:4: file: "),
        ("duplicates-not-utf8", _import_into("duplicates-not-utf8"), "duplicates.csv:2: file: "),
        ("round-yaml-old-duplicates", _import_into("old-duplicates-list"), "screen migrate"),
        (
            "in-progress-ended-window",
            _import_file("list.csv", GOOD_CSV.encode(), "--in-progress"),
            "--in-progress: the window ended",
        ),  # fmt: skip
        (
            "name-escape-bidi",
            _import_file("l\x1bi\u202est.csv", HEADER.encode() + b"W1,,,2026-06-03,,,,,\n"),
            "l ist.csv:2: title: ",
        ),  # fmt: skip
        (
            "bibtex-2000-bad-blocks",
            _import_file("list.bib", b"@misc{a, title={x\x1b[2J}, date={2026-06-03},\n" * 2000),
            "list.bib:1: bibtex: ",
        ),  # fmt: skip
    ]
    cases += [ScreenCase(g, n, e, s) for n, s, e in options]
    return cases


def _tamper_round(folder: Path, kind: str) -> None:
    """Issue 27's tampered round files: entries.json fields, non-UTF-8 CSV, old shapes."""
    import json

    entries = json.loads((folder / "entries.json").read_text(encoding="utf-8"))
    other = next(e for e in entries if e["openreview_id"])  # decided second below
    if kind == "entries-title-number":
        entries[0]["title"] = 5
    elif kind == "entries-authors-text":
        entries[0]["authors"] = "abc"
    elif kind == "entries-source-unknown":
        other["source"] = "myspace"
    elif kind in ("candidates-not-utf8", "duplicates-not-utf8"):
        with open(folder / f"{kind.split('-')[0]}.csv", "ab") as fh:
            fh.write(b"caf\xe9,x,y\n")
    elif kind == "old-duplicates-list":
        text = (folder / "round.yaml").read_text(encoding="utf-8")
        head, _, tail = text.partition("duplicates:\n")
        rest = tail.split("\n", 3)[3]  # the count, listed and file lines
        (folder / "round.yaml").write_text(head + "duplicates: []\n" + rest, encoding="utf-8")
    text = json.dumps(entries)
    if kind == "entries-repeated-key":  # json would keep the later, valid title
        text = text.replace('[{"', '[{"title": 5, "', 1)
    (folder / "entries.json").write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- screen decide


def _made_round(root: Path, tmp: Path) -> None:
    from masrl_kb.contrib.screen.batches import import_round

    good = tmp / "good.csv"
    good.write_text(GOOD_CSV)
    import_round(good, "openalex", *(_day(d) for d in (SINCE, UNTIL)), root=root)


def _day(text: str):
    import datetime as dt

    return dt.date.fromisoformat(text)


_HELD: list[int] = []


def _decide(name: str, data: bytes, tamper: str = "") -> Setup:
    def setup(root: Path, tmp: Path) -> list[str]:
        _made_round(root, tmp)
        folder = root / "screening" / ROUND
        path = tmp / name
        path.write_bytes(data)
        if tamper == "round-link":
            folder.rename(tmp / "moved")
            os.symlink(tmp / "moved", folder)
        elif tamper in ("round.yaml", "entries.json"):
            (folder / tamper).rename(tmp / tamper)
            os.symlink(tmp / tamper, folder / tamper)
        elif tamper == "screening-link":
            (root / "screening").rename(tmp / "screening")
            os.symlink(tmp / "screening", root / "screening")
        elif tamper == "entries-malformed":
            (folder / "entries.json").write_text("[{]")
        elif tamper == "decided-tampered":
            with open(folder / "round.yaml", "a") as fh:
                fh.write("decided:\n  ../../etc/passwd:\n    decision: include\n")
        elif tamper == "file-link":
            (tmp / "real").write_bytes(data)
            path.unlink()
            path.symlink_to(tmp / "real")
        elif tamper.startswith(("entries-", "candidates-", "duplicates-", "old-")):
            _tamper_round(folder, tamper)
        elif tamper == "locked":
            fd = os.open(root / "screening" / f".{ROUND}.lock", os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX)
            _HELD.append(fd)
        return ["screen", "decide", ROUND, str(path)]

    return setup


def decide_cases() -> list[ScreenCase]:
    g = "screen decide"
    w1 = "title:"  # the first good row has no id but its title: filled in below
    plain = "id,decision,reason,note,key,stage\n"

    def rows(*lines: str) -> bytes:
        return (plain + "".join(lines)).encode()

    from masrl_kb.contrib.screen.entries import title_id

    w1 = title_id("Learning When to Stop")
    ok = f"{w1},exclude,out_of_scope,,,\n"
    files = [
        ("reason-unknown", rows(f"{w1},exclude,nonsense,,,\n"), "d.csv:2: reason: unknown"),
        ("reason-missing", rows(f"{w1},exclude,,,,\n"), "d.csv:2: reason: "),
        ("decision-unknown", rows(f"{w1},maybe,,,,\n"), "d.csv:2: decision: "),
        ("decision-injection", rows(f"{w1},=cmd|'/c calc'!A1,,,,\n"), "d.csv:2: decision: "),
        ("id-not-candidate", rows("2606.99999,include,,,,\n"), "d.csv:2: id: 2606.99999"),
        ("id-missing", rows(",include,,,,\n"), "d.csv:2: id: "),
        ("id-traversal", rows("../../etc/passwd,include,,,,\n"), "d.csv:2: id: "),
        ("id-escape", rows("doi:10.1234/\x1b[2Jx,include,,,,\n"), "d.csv:2: id: "),
        ("key-for-exclusion", rows(f"{w1},exclude,out_of_scope,,k2026,\n"), "d.csv:2: key: "),
        ("key-malformed", rows("openreview:AbCdEf1234,include,,,../x,\n"), "d.csv:2: key: "),
        ("key-taken", rows("openreview:AbCdEf1234,include,,,magrpo,\n"), "d.csv:2: key: "),
        (
            "key-twice",
            rows(f"openreview:AbCdEf1234,include,,,k2026,\n{w1},include,,,k2026,\n"),
            "d.csv:3: key: ",
        ),  # fmt: skip
        ("stage-unknown", rows(f"{w1},exclude,out_of_scope,,,skimmed\n"), "d.csv:2: stage: "),
        ("note-controls", rows(f'{w1},exclude,out_of_scope,"a\x1b[2Jb",,\n'), "d.csv:2: note: "),
        ("note-huge", rows(f"{w1},exclude,out_of_scope," + "n" * 5000 + ",,\n"), "d.csv:2: note:"),
        ("decided-twice-differently", rows(ok, f"{w1},include,,,,\n"), "d.csv:3: id: "),
        ("no-header", b"", "d.csv:1: header: "),
        ("wrong-header", b"paper,verdict\nx,y\n", "d.csv:1: header: "),
        ("row-short", rows(f"{w1}\n"), "d.csv:2: "),
        (
            "cell-over-131072",
            rows(f"{w1},exclude,out_of_scope," + "n" * 140_000 + ",,\n"),
            "d.csv:2: csv: ",
        ),  # fmt: skip
        ("cr-only-bad-row", rows(f"{w1},maybe,,,,\n").replace(b"\n", b"\r"), "d.csv:2: decision"),
        ("nul-byte", rows(ok).replace(b"exclude", b"exc\x00lude"), "d.csv:2: file: holds a NUL"),
        ("not-utf8", rows(ok) + b"\xff\xfe\n", "d.csv:3: file: not UTF-8"),
        ("ris-named-csv", b"TY  - JOUR\nN1  - ASReview_relevant\nER  -\n", "d.csv:1: header"),
        (
            "asreview-included-bad",
            b"record_id,id,included\n0," + w1.encode() + b",2\n",
            "d.csv:2: included: ",
        ),  # fmt: skip
    ]
    cases = [ScreenCase(g, n, e, _decide("d.csv", d)) for n, d, e in files]
    ris = [
        ("ris-truncated", b"TY  - JOUR\nID  - x\nN1  - ASReview_relevant\n", "d.ris:1: ris: "),
        ("ris-csv-inside", rows(ok), "d.ris:1: header: not RIS"),
        ("ris-no-id", b"TY  - JOUR\nN1  - ASReview_relevant\nER  -\n", "d.ris:1: id: "),
        ("ris-stray", b"TY  - JOUR\nER  -\nstray\n", "d.ris:3: ris: "),
    ]
    cases += [ScreenCase(g, n, e, _decide("d.ris", d)) for n, d, e in ris]
    cases += [ScreenCase(g, "unknown-extension", "d.txt:1: file: ", _decide("d.txt", rows(ok)))]
    tampered = [
        ("decisions-file-link", "file-link", "d.csv:1: file: no such file"),
        ("round-is-link", "round-link", "a symbolic link; refused"),
        ("round-yaml-link", "round.yaml", "a symbolic link; refused"),
        ("entries-json-link", "entries.json", "a symbolic link; refused"),
        ("screening-is-link", "screening-link", "screening/:1: file: a symbolic link"),
        ("entries-json-malformed", "entries-malformed", "entries.json: malformed"),
        ("round-yaml-decided-tampered", "decided-tampered", "round.yaml:"),
        ("round-locked", "locked", "is locked by another screening run"),
        ("entries-json-title-number", "entries-title-number", "entries.json: entry 0: title:"),
        ("entries-json-authors-text", "entries-authors-text", "entries.json: entry 0: authors:"),
        ("entries-json-repeated-key", "entries-repeated-key", 'the key "title" appears twice'),
        ("candidates-csv-not-utf8", "candidates-not-utf8", "candidates.csv:4: file: not UTF-8"),
        ("round-yaml-old-duplicates", "old-duplicates-list", "screen migrate"),
    ]
    cases += [
        ScreenCase(g, n, e, _decide("d.csv", rows(ok), t), env={"MASRL_KB_LOCK_WAIT": "0.5"})
        for n, t, e in tampered
    ]
    # issue 27: the second decision cannot be written, so neither is (all or nothing)
    both = rows(ok, "openreview:AbCdEf1234,exclude,out_of_scope,,,\n")
    midway = _decide("d.csv", both, "entries-source-unknown")
    cases += [ScreenCase(g, "all-or-nothing", "--source: unknown value 'myspace'", midway)]
    return cases


# ---------------------------------------------------------------- screen run feeds

FEED = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
    "<title>fixture</title>{entries}</feed>"
)
ENTRY = (
    "<entry><id>{id}</id><published>{published}</published><title>{title}</title>"
    "<summary>Test text.</summary><author><name>Ada Placeholder</name></author></entry>"
)


def _feed(**kw: str) -> bytes:
    values = {"id": "http://arxiv.org/abs/2606.90001v1", "published": "2026-06-03T09:00:00Z",
              "title": "A Fictional Paper"} | kw  # fmt: skip
    return FEED.format(entries=ENTRY.format(**values)).encode()


def _serve(body: bytes, status: int = 200):
    return lambda h, n: send_atom(h, status, body)


def _run_feed(behave) -> Setup:
    def setup(root: Path, tmp: Path) -> list[str]:
        stub = Stub(behave)
        _STUBS.append(stub)
        os.environ[arxiv.ENV_ARXIV_URL] = stub.url
        return ["screen", "run", "--since", SINCE, "--until", UNTIL, "--delay", "0"]

    return setup


_STUBS: list[Stub] = []


def feed_cases() -> list[ScreenCase]:
    g = "screen run feeds"
    env = {arxiv.ENV_DEADLINE: "1.5", arxiv.ENV_DELAY: "0"}
    bodies = [
        ("not-xml", b"this is not xml", "not well-formed XML"),
        ("html-page", b"<html><body>Service unavailable</body></html>", "not an Atom feed"),
        ("json", b'{"entries": []}', "not well-formed XML"),
        ("empty-body", b"", "not well-formed XML"),
        ("truncated-xml", _feed()[:-20], "not well-formed XML"),
        ("doctype", b'<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "b">]><feed/>', "document type"),
        ("error-entry", _feed(id="http://arxiv.org/api/errors#incorrect_id"), "reported an error"),
        ("entry-no-id", _feed(id="http://example.org/x"), "malformed id"),
        ("entry-no-title", _feed(title=""), "has no title"),
        ("published-malformed", _feed(published="yesterday"), "malformed <published>"),
        ("published-empty", _feed(published=""), "malformed <published>"),
        ("published-year-1", _feed(published="0001-01-01T00:00:00Z"), "impossible <published>"),
        ("published-future", _feed(published="2999-01-01T00:00:00Z"), "impossible <published>"),
        ("published-huge", _feed(published="99999-01-01T00:00:00Z"), "malformed <published>"),
    ]
    cases = [ScreenCase(g, n, e, _run_feed(_serve(b)), env=env) for n, b, e in bodies]
    behaviours = [
        # One byte a second, as issue 19 tried (arxiv_cases.trickle sends one per 0.3 s).
        ("trickle-1-byte-per-second", trickling(1.0, 60), "no complete answer within 1.5 s", 6.0),
        ("silent", silent, "no complete answer within 1.5 s", 6.0),
        ("gzip-bomb", gzip_bomb, "expands to more than", 20.0),
        # Over the 20 MB cap of a screening answer.
        ("oversized", unbounded(21), "larger than", 20.0),
        ("always-503", fail_then(503, 99, _serve(_feed())), "answered HTTP 503", 20.0),
        ("http-404", _serve(b"not found", 404), "answered HTTP 404", 20.0),
    ]
    cases += [ScreenCase(g, n, e, _run_feed(b), w, env) for n, b, e, w in behaviours]
    return cases


def screen_cases() -> list[ScreenCase]:
    return import_cases() + decide_cases() + feed_cases()


# ---------------------------------------------------------------- running


def _files(root: Path) -> dict[str, bytes]:
    """The data root's files; lock files are not data."""
    return {rel: data for rel, data in files(root).items() if not rel.endswith(".lock")}


def run_screen_case(case: ScreenCase, tmp: Path) -> Judged:
    """Set the case up in a copy of the records, run its command, judge the outcome."""
    root = copy_kb(tmp / "kb")
    try:
        # A feed case's setup points the arXiv URL at its stub; no other case uses one.
        with environ({**case.env, arxiv.ENV_ARXIV_URL: None}):
            argv = case.setup(root, tmp)
            before = _files(root)
            run = run_cli(["--root", str(root), *argv])
    finally:
        for fd in _HELD:
            os.close(fd)
        _HELD.clear()
        for stub in _STUBS:
            stub.close()
        _STUBS.clear()
    if run.crash:
        return Judged("crashed", run.text + run.crash)
    if run.code == 0:
        return Judged("accepted", run.text)
    reasons = common_reasons(run, case.within) + _judge(case, run.text, run.err)
    after = _files(root)
    if before != after:
        changed = set(before) ^ set(after) | {k for k in before if before[k] != after.get(k)}
        reasons.append(f"files changed: {sorted(changed)[:3]}")
    return Judged("unclear" if reasons else "rejected", run.text, reasons)


def _judge(case: ScreenCase, text: str, errors: str) -> list[str]:
    reasons = []
    if max((len(line) for line in text.splitlines()), default=0) > MAX_LINE:
        reasons.append("an overlong line")
    if not any(case.expect in line for line in errors.splitlines()):
        reasons.append(f"no error line holds {case.expect!r}")
    return reasons


def _verdict(case: ScreenCase, outcome: Judged) -> tuple[str, tuple | None]:
    failure = (case.id, outcome.kind, "; ".join(outcome.reasons) or outcome.output[-300:])
    return outcome.kind, None if outcome.kind == "rejected" else failure


def screen_counts(bad: list) -> dict[str, dict[str, int]]:
    """Counts by group and outcome for tests/hostile/run_corpus.py; failures appended."""
    groups: dict[str, list[ScreenCase]] = {}
    for case in screen_cases():
        groups.setdefault(case.group, []).append(case)
    return {group: tally(cases, run_screen_case, _verdict, bad) for group, cases in groups.items()}
