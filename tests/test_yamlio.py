"""The line-keeping YAML loader agrees with yaml.safe_load and refuses unsafe input."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import yaml

from masrl_kb.kb.yamlio import LineDict, load_yaml_file, load_yaml_text

REPO = Path(__file__).resolve().parent.parent

SCALARS = [
    "a: yes",
    "a: No",
    "a: ~",
    "a: null",
    "a: 1.5",
    "a: .inf",
    "a: 0x1F",
    "a: 0o17",
    "a: 2026-01-01",
    "a: 2026-01-01 10:00:00",
    "a: 'yes'",
    'a: "1"',
    "a: -1",
    "a: +1",
    "a: 1_000",
    "a: 190:20:30",
    "a: Éclair",
    "a:",
    "a: [1, b, {c: d}]",
    "a: |\n  x\n  y\n",
    "x: &anchor {b: 1}\ny: *anchor",
]


@pytest.mark.parametrize("text", SCALARS)
def test_same_values_as_safe_load(text: str) -> None:
    assert load_yaml_text(text).data == yaml.safe_load(text)


def test_same_values_on_every_record() -> None:
    files = [*REPO.glob("papers/*.yaml"), *REPO.glob("exclusions/*.yaml"), REPO / "taxonomy.yaml"]
    for path in files:
        assert load_yaml_file(path).data == yaml.safe_load(path.read_text()), path


def test_lines_of_keys_and_nested_mappings() -> None:
    data = load_yaml_text("a: 1\nb:\n  - c: 2\n    d: 3\n").data
    assert isinstance(data, LineDict)
    assert data.line_of("b") == 2
    assert data["b"][0].line == 3 and data["b"][0].line_of("d") == 4


def test_duplicate_keys_are_reported_at_every_depth() -> None:
    loaded = load_yaml_text("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n")
    assert [(p.line, p.field, p.message) for p in loaded.problems] == [
        (4, "c", "key given twice (first on line 3)"),
        (5, "a", "key given twice (first on line 1)"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!python/name:os.system x", "is not allowed (safe loading only)"),
        ("a: !!python/object/new:dict {}", "is not allowed (safe loading only)"),
        ("a: !!set {x}", "is not allowed (safe loading only)"),
        ("x: &a {b: 1}\n<<: *a", "merge keys (<<) are not supported in records"),
        ("a: *missing", "found undefined alias 'missing'"),
        ("a: 1\n---\nb: 2", "expected one YAML document, found a second one"),
        ("? [1, 2]\n: x", "a mapping key must be a plain value"),
    ],
)
def test_refused_input(text: str, message: str) -> None:
    loaded = load_yaml_text(text)
    assert loaded.data is None
    assert message in loaded.problems[0].message


# ---------------------------------------------------------------- hardening (issue 8)


def test_integers_not_in_plain_decimal_keep_their_text() -> None:
    data = load_yaml_text("a: 0x7E9\nb: 2025\nc: text\nd: 2026-05-04\ne: 2_025\n").data
    assert data == {
        "a": 2025,
        "b": 2025,
        "c": "text",
        "d": __import__("datetime").date(2026, 5, 4),
        "e": 2025,
    }
    assert (data["a"].text, data["e"].text) == ("0x7E9", "2_025")
    assert type(data["b"]) is int
    assert pickle.loads(pickle.dumps(data["a"])).text == "0x7E9"  # parsed in worker processes


def test_value_errors_name_their_field() -> None:
    (problem,) = load_yaml_text("a:\n  b:\n    - 1\n    - 2026-02-30\n").problems
    assert (problem.line, problem.field) == (4, "a.b[1]")
    assert "cannot read '2026-02-30' as a timestamp" in problem.message


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.symlink_to("/etc/passwd"), "is a symbolic link"),
        (lambda p: __import__("os").mkfifo(p), "is a FIFO (named pipe), not a regular file"),
        (lambda p: p.mkdir(), "is a folder, not a regular file"),
        (lambda p: p.write_bytes(b"a: " + b"x" * 2_000_000), "is 2000003 bytes; the limit is"),
        (lambda p: None, "does not exist"),
    ],
)
def test_unsafe_files_are_problems_not_reads(tmp_path, make, message: str) -> None:
    path = tmp_path / "x.yaml"
    make(path)
    loaded = load_yaml_file(path)
    assert loaded.data is None
    (problem,) = loaded.problems
    assert problem.field == "file" and message in problem.message
    assert "root:" not in problem.message


# ---------------------------------------------------------------- bytes parsed once a process


def test_the_same_bytes_parse_once_and_each_caller_gets_its_own_copy(monkeypatch) -> None:
    from masrl_kb.kb import yamlio

    raw = b"a:\n  b: [1, 2]\n  c: &x {d: 2026-01-01}\n  e: *x\nf: g\nf: h\n"
    parsed: list[bytes] = []
    real = yamlio.parse_yaml_bytes
    monkeypatch.setattr(yamlio, "_PARSED", yamlio.OrderedDict())
    monkeypatch.setattr(yamlio, "parse_yaml_bytes", lambda r: parsed.append(r) or real(r))
    first, second = yamlio.decode_yaml_bytes(raw), yamlio.decode_yaml_bytes(bytearray(raw))
    assert parsed == [raw]
    assert first.data == second.data == yaml.safe_load(raw.replace(b"f: g\n", b""))
    assert first.problems == second.problems and first.problems[0].line == 6
    assert first.data is not second.data and first.problems[0] is not second.problems[0]
    assert second.data["a"].line_of("e") == 4 and isinstance(second.data["a"]["c"], LineDict)
    assert second.data["a"]["e"] is second.data["a"]["c"]  # an alias stays one node
    first.data["a"]["b"].append(3)
    first.data["a"]["c"]["d"] = "changed"
    third = yamlio.decode_yaml_bytes(raw)
    assert third.data == second.data and third.data["a"]["b"] == [1, 2]
    assert parsed == [raw]


def test_an_alias_bomb_is_copied_as_the_shared_nodes_it_is() -> None:
    from masrl_kb.kb import yamlio

    levels = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]".encode() for i in range(1, 9)]
    raw = b"\n".join(levels) + b"\n"  # 10**9 leaves if expanded
    for _ in range(3):
        data = yamlio.decode_yaml_bytes(raw).data
        assert data["a8"][0] is data["a8"][9] is data["a7"]


def test_what_is_kept_is_bounded(monkeypatch) -> None:
    from masrl_kb.kb import yamlio

    monkeypatch.setattr(yamlio, "_PARSED", yamlio.OrderedDict())
    monkeypatch.setattr(yamlio, "_parsed_size", 0)
    monkeypatch.setattr(yamlio, "_PARSED_ENTRIES", 3)
    for i in range(5):
        yamlio.decode_yaml_bytes(f"n: {i}\n".encode())
    assert list(yamlio._PARSED) == [b"n: 2\n", b"n: 3\n", b"n: 4\n"]
    big = b"a: " + b"x" * yamlio._PARSED_ONE + b"\n"
    assert yamlio.decode_yaml_bytes(big).data == {"a": "x" * yamlio._PARSED_ONE}
    assert big not in yamlio._PARSED and yamlio._parsed_size == 3 * len(b"n: 2\n")
