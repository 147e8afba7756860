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


# The toolkit ships alone: beside the standard library it may use its own libraries and
# four leaf modules of the knowledge base (the strict JSON parser among them), nothing else of
# masrl_kb.
OWN_LIBRARIES = {"ijson", "jsonschema", "jsonschema_specifications", "referencing", "rpds"}
OWN_LIBRARIES |= {"attr", "attrs", "typing_extensions", "idna"}  # what jsonschema loads
LEAF_MODULES = {"masrl_kb", "masrl_kb.kb", "masrl_kb.kb.paths", "masrl_kb.kb.problem"}
LEAF_MODULES |= {"masrl_kb.kb.atomic", "masrl_kb.kb.strict_json"}
ALONE = """
import json, pkgutil, sys, importlib
import masrl_kb.traces
from masrl_kb.traces.__main__ import main
for module in pkgutil.iter_modules(masrl_kb.traces.__path__):
    importlib.import_module("masrl_kb.traces." + module.name)
codes = [main(argv.split("|")) for argv in sys.argv[1:]]
ours = sorted(n for n in sys.modules if n.startswith("masrl_kb") and ".traces" not in n)
others = {n.split(".")[0] for n in sys.modules if n[0] != "_"} - set(sys.stdlib_module_names)
print(json.dumps({"codes": codes, "masrl_kb": ours, "libraries": sorted(others)}))
"""
SPANS = {
    "resourceSpans": [
        {
            "scopeSpans": [
                {
                    "spans": [
                        {
                            "traceId": "0" * 31 + "1",
                            "spanId": f"{sid:016x}",
                            "parentSpanId": f"{parent:016x}" if parent else "",
                            "name": op,
                            "startTimeUnixNano": str(start),
                            "endTimeUnixNano": str(start + 10),
                            "attributes": [
                                {"key": "gen_ai.operation.name", "value": {"stringValue": op}}
                            ],
                        }
                        for sid, parent, op, start in ((1, 0, "invoke_agent", 0), (2, 1, "chat", 1))
                    ]
                }
            ]
        }
    ]
}


def test_the_toolkit_uses_nothing_else_of_the_package(tmp_path: Path) -> None:
    """Every module imported and every command run: only the leaf modules of masrl_kb load,
    and no library the toolkit does not name."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"trace_id": 3}', encoding="utf-8")
    spans = tmp_path / "spans.json"
    spans.write_text(json.dumps(SPANS), encoding="utf-8")
    example = str(find_root() / "traces" / "examples" / "swarm.json")
    commands = [
        f"trace|validate|{bad}",
        f"trace|metrics|--html|{tmp_path / 'page.html'}|{example}",
        f"trace|import|otel|{spans}|--out|{tmp_path / 'run.json'}",
        f"trace|synth|--agents|2|--steps|9|--out|{tmp_path / 'synth.json'}",
        "trace|schema",
    ]
    result = subprocess.run(
        [sys.executable, "-c", ALONE, *commands], capture_output=True, text=True, check=True
    )
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["codes"] == [1, 0, 0, 0, 0]
    assert set(report["masrl_kb"]) <= LEAF_MODULES
    assert {"ijson", "jsonschema"} <= set(report["libraries"]) <= OWN_LIBRARIES | {"masrl_kb"}
