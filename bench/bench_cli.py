"""Benchmark: command-line start-up as a ratio to a bare Python start (run by hand).

    python bench/bench_cli.py                 # this checkout
    python bench/bench_cli.py --src OLD_TREE  # another source tree, e.g. an older commit:
    git archive <commit> | tar -x -C /tmp/old && python bench/bench_cli.py --src /tmp/old

Each command runs ``--runs`` times in a fresh interpreter; the figure is the
median CPU time (user + system, the child's own) and its ratio to the median
of ``python -c pass`` measured in the same run. The records and the trace
come from this checkout in both cases, so only the code differs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

CLONE = Path(__file__).resolve().parents[1]
EXAMPLE = CLONE / "traces" / "examples" / "debate.json"


def _cpu_seconds(command: list[str], env: dict[str, str]) -> float:
    # ``python -m`` puts the working folder first on sys.path: run from the tree measured.
    cwd = env.get("PYTHONPATH", str(CLONE))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(command: list[str], env: dict[str, str], runs: int) -> float:
    _cpu_seconds(command, env)  # warm the file cache
    return statistics.median(_cpu_seconds(command, env) for _ in range(runs))


def commands() -> dict[str, list[str]]:
    """Label -> argv; the first is the floor the others are divided by."""
    cli = [sys.executable, "-m", "masrl_kb.cli"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "masrl-kb --help": [*cli, "--help"],
        "masrl-kb validate": [*cli, "--root", str(CLONE), "validate"],
        "masrl-kb trace validate": [*cli, "trace", "validate", str(EXAMPLE)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command (median)")
    parser.add_argument("--src", help="source tree holding masrl_kb/ to measure instead")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if args.src:
        env["PYTHONPATH"] = str(Path(args.src).resolve())
    floor = None
    print(f"{'command':<26} {'CPU s':>7} {'x python -c pass':>17}")
    for label, command in commands().items():
        seconds = _median(command, env, args.runs)
        floor = floor or seconds
        print(f"{label:<26} {seconds:7.3f} {seconds / floor:16.1f}x")


if __name__ == "__main__":
    main()
