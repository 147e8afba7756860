"""The ``trace`` command: exit codes and output of validate, metrics and synth."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from masrl_kb.kb.paths import find_root
from masrl_kb.traces.command import register
from masrl_kb.traces.trace_checks import check_file

EXAMPLES = sorted((find_root() / "traces" / "examples").glob("*.json"))


def run(argv: list[str]) -> int:
    """Parse as the main CLI does (``register`` on its sub-parsers) and run the handler."""
    parser = argparse.ArgumentParser(prog="masrl-kb")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    doc = json.loads(EXAMPLES[0].read_text(encoding="utf-8"))
    doc["events"][1]["t"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_validate_examples_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["trace", "validate", *map(str, EXAMPLES)]) == 0
    out = capsys.readouterr().out
    assert f"{EXAMPLES[0]}: ok (" in out
    assert out.count(": ok (") == 6


def test_validate_bad_file_exits_1_with_located_message(
    bad_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["trace", "validate", str(EXAMPLES[0]), str(bad_file)]) == 1
    captured = capsys.readouterr()
    assert f"{bad_file}: $.events[1].t: -1 is less than the minimum of 0" in captured.err
    assert "problem(s) in 1 of 2 file(s)" in captured.err
    assert f"{EXAMPLES[0]}: ok" in captured.out


def test_validate_malformed_json_exits_1_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"trace_id": ', encoding="utf-8")
    assert run(["trace", "validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: $: not valid JSON (line 1 column 14): Expecting value" in err
    assert "Traceback" not in err


def test_validate_missing_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["trace", "validate", str(tmp_path / "none.json")]) == 1
    assert "cannot read the file: No such file or directory" in capsys.readouterr().err


def test_metrics_json_is_keyed_by_file(capsys: pytest.CaptureFixture[str]) -> None:
    swarm = next(p for p in EXAMPLES if p.stem == "swarm")
    assert run(["trace", "metrics", "--json", str(swarm)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result) == [str(swarm)]
    assert result[str(swarm)]["parallel_speedup"] == 2.2
    assert result[str(swarm)]["decisions"] == {
        "O1": 1,
        "O2": 0,
        "O3": 0,
        "O4": 0,
        "O5": 1,
        "unlabelled": 0,
    }


def test_metrics_text(capsys: pytest.CaptureFixture[str]) -> None:
    pec = next(p for p in EXAMPLES if p.stem == "planner_executor_critic")
    assert run(["trace", "metrics", str(pec)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == str(pec)
    assert "  decisions          O2 1, O5 1" in lines
    assert "  has_stop_decision  yes" in lines
    assert "  max_fanout         0" in lines


def test_metrics_of_an_invalid_trace_exits_1(
    bad_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["trace", "metrics", "--json", str(EXAMPLES[0]), str(bad_file)]) == 1
    captured = capsys.readouterr()
    assert list(json.loads(captured.out)) == [str(EXAMPLES[0])]
    assert f"{bad_file}: $.events[1].t" in captured.err


def test_synth_to_stdout_is_a_valid_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["trace", "synth", "--agents", "4", "--steps", "30", "--seed", "3"]) == 0
    path = tmp_path / "s.json"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    doc, problems = check_file(path)
    assert problems == []
    assert len(doc["events"]) == 30
    assert doc["trace_id"] == "synth-4x30-seed3"


def test_synth_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.json"
    assert run(["trace", "synth", "--agents", "300", "--steps", "4000", "--out", str(path)]) == 0
    assert capsys.readouterr().out == ""
    assert run(["trace", "metrics", "--json", str(path)]) == 0
    metrics = json.loads(capsys.readouterr().out)[str(path)]
    assert (metrics["agents"], metrics["events"]) == (300, 4000)


def test_synth_with_too_few_steps_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["trace", "synth", "--agents", "10", "--steps", "5"]) == 2
    assert "--steps must be at least 21 for 10 agent(s)" in capsys.readouterr().err


def test_synth_to_unwritable_path_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "missing-dir" / "t.json"
    assert run(["trace", "synth", "--agents", "1", "--steps", "3", "--out", str(out)]) == 1
    assert f"error: cannot write {out}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["trace"],
        ["trace", "validate"],
        ["trace", "synth", "--agents", "0", "--steps", "5"],
        ["trace", "synth", "--agents", "two", "--steps", "5"],
        ["trace", "synth", "--steps", "5"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(argv)
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_module_entry_point(bad_file: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(find_root())}
    cmd = [sys.executable, "-m", "masrl_kb.traces", "trace", "validate", str(bad_file)]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 1
    assert "-1 is less than the minimum of 0" in result.stderr
