"""``trace validate`` stays light: it imports neither pandas nor the network clients."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from masrl_kb.kb.paths import find_root

HEAVY = ("pandas", "numpy", "arxiv", "requests", "jsonschema", "yaml", "opentelemetry")
PROBE = f"""
import json, sys
from masrl_kb.traces.__main__ import main
code = main(sys.argv[1:])
loaded = sorted({{name.split(".")[0] for name in sys.modules}} & {set(HEAVY)!r})
print(json.dumps({{"exit": code, "loaded": loaded}}))
"""


def _loaded_by(*argv: str) -> dict:
    """Run a trace command in a fresh interpreter; its exit code and the heavy modules loaded."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        cwd=find_root(),
        check=True,
    )
    return json.loads(result.stdout.splitlines()[-1])


def test_trace_validate_loads_no_heavy_module() -> None:
    examples = sorted(str(p) for p in (find_root() / "traces" / "examples").glob("*.json"))
    assert _loaded_by("trace", "validate", *examples) == {"exit": 0, "loaded": []}


def test_trace_metrics_loads_no_heavy_module() -> None:
    example = str(find_root() / "traces" / "examples" / "swarm.json")
    assert _loaded_by("trace", "metrics", "--json", example) == {"exit": 0, "loaded": []}


def test_an_invalid_trace_loads_jsonschema_only_to_explain(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"trace_id": 3}', encoding="utf-8")
    assert _loaded_by("trace", "validate", str(path)) == {"exit": 1, "loaded": ["jsonschema"]}
