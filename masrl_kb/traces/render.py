"""The site page "Orchestration traces": the template ``data/trace_page.md`` filled with
tables computed from the schema and the example traces, naming reward families and
decisions as the caller's taxonomy does (:class:`Vocabulary`; the toolkit reads none)."""

from __future__ import annotations

import html
import os
from pathlib import Path
from string import Template
from typing import Any, Protocol

from masrl_kb.kb.paths import find_root
from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.trace_checks import check_file
from masrl_kb.traces.trace_schema import SCHEMA_PATH, load_schema, topology_ids

EXAMPLES_DIR = Path("traces") / "examples"
DIAGRAM_EXAMPLE = "hierarchical"
# Trace reward channels that are named after a reward type of the taxonomy under another name.
CHANNEL_ALIASES = {"team": "shared"}
CHANNEL_EXAMPLES = ("team", "role", "process", "tool", "debate", "orchestration")
PAGE_TEMPLATE = Path(__file__).parent / "data" / "trace_page.md"


class Vocabulary(Protocol):
    """What the page reads of the taxonomy (``masrl_kb.kb.taxonomy.Taxonomy`` has it)."""

    def __getitem__(self, axis: str) -> Any: ...

    def family_of(self, reward_type: str) -> str: ...


def cell(text: object) -> str:
    """Free text made safe for a Markdown table cell."""
    return html.escape(str(text), quote=False).replace("|", "&#124;").replace("\n", " ")


def table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; every cell is escaped."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def load_examples(root: str | os.PathLike[str] | None = None) -> dict[str, dict]:
    """The example traces by file stem, in topology order; invalid examples raise."""
    folder = find_root(root) / EXAMPLES_DIR
    examples: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")):
        doc, problems = check_file(path)
        if doc is None or problems:
            raise ValueError("invalid example trace:\n" + "\n".join(map(str, problems)))
        examples[path.stem] = doc
    order = {topology: i for i, topology in enumerate(topology_ids())}
    return dict(sorted(examples.items(), key=lambda kv: order.get(str(kv[1].get("topology")), 99)))


# ------------------------------------------------------------------ format


def _kind(prop: dict) -> str:
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1].replace("_", " ") + " (below)"
    if "enum" in prop:
        return "one of " + ", ".join(map(str, prop["enum"]))
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return "object: name -> " + prop["additionalProperties"].get("type", "value")
    kind = str(prop.get("type", "any"))
    if "minimum" in prop:
        kind += f" >= {prop['minimum']}"
    return kind


def _description(prop: dict, defs: dict) -> str:
    if "$ref" in prop:
        return defs[prop["$ref"].rsplit("/", 1)[-1]].get("description", "")
    return prop.get("description", "")


def fields_table(schema: dict, defs: dict) -> str:
    """Field, type, required and description of an object schema's properties."""
    required = set(schema.get("required", []))
    rows = [
        [name, _kind(prop), "yes" if name in required else "no", _description(prop, defs)]
        for name, prop in schema["properties"].items()
    ]
    return table(["Field", "Type", "Required", "Description"], rows)


def fields_by_type(schema: dict, event_type: str) -> list[str]:
    """The fields an event of this type names: the required ones plus those its type expects."""
    defs = schema["$defs"]
    kinds = defs["event_type"]
    expected = dict(zip(kinds["enum"], kinds.get("enumFields", []), strict=True))
    return list(defs["event"]["required"]) + list(expected.get(event_type, []))


def _enum_rows(definition: dict) -> list[list[str]]:
    return list(map(list, zip(definition["enum"], definition["enumDescriptions"], strict=True)))


def _format_fields(schema: dict) -> dict[str, str]:
    """The format's tables and descriptions: trace, event and edge fields and types, costs."""
    defs = schema["$defs"]
    event_rows = [
        [kind, ", ".join(fields_by_type(schema, kind)), meaning]
        for kind, meaning in _enum_rows(defs["event_type"])
    ]
    fields = {
        "schema_path": SCHEMA_PATH.as_posix(),
        "schema_description": schema["description"],
        "trace_fields": fields_table(schema, defs),
        "event_types": table(["Type", "Fields", "Meaning"], event_rows),
        "edge_types": table(["Type", "Meaning"], _enum_rows(defs["edge_type"])),
    }
    for part in ("event", "edge", "costs"):
        fields[f"{part}_description"] = defs[part]["description"]
        fields[f"{part}_fields"] = fields_table(defs[part], defs)
    return fields


# ----------------------------------------------------------------- diagram


def mermaid_text(text: object) -> str:
    """Text made safe inside a quoted Mermaid label (Mermaid's own entity codes)."""
    replacements = {"&": "#amp;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "#": "#35;"}
    return "".join(replacements.get(ch, ch) for ch in str(text))


def _event_label(event: dict) -> str:
    detail = event.get("decision") or event.get("tool") or event.get("to")
    head = f"{event['id']} {event['type']}" + (f" {detail}" if detail else "")
    end = event.get("t_end", event["t"])
    return mermaid_text(head) + "<br/>" + mermaid_text(f"{event['t']:g}-{end:g} s")


def trace_mermaid(doc: dict) -> str:
    """A Mermaid flowchart of a trace: one box per agent, temporal edges dotted."""
    node = {event["id"]: f"n{i}" for i, event in enumerate(doc["events"])}
    lanes: dict[str, list[dict]] = {}
    for event in doc["events"]:
        lanes.setdefault(event["agent"], []).append(event)
    lines = ["flowchart TB"]
    for i, (agent, events) in enumerate(lanes.items()):
        lines.append(f'  subgraph lane{i}["{mermaid_text(agent)}"]')
        lines += [f'    {node[e["id"]]}["{_event_label(e)}"]' for e in events]
        lines.append("  end")
    for edge in doc["edges"]:
        arrow = "-.->" if edge["type"] == "temporal" else "-->"
        label = mermaid_text(edge["type"])
        lines.append(f"  {node[edge['src']]} {arrow}|{label}| {node[edge['dst']]}")
    return "```mermaid\n" + "\n".join(lines) + "\n```"


# ----------------------------------------------------------------- metrics


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def metrics_section(examples: dict[str, dict]) -> str:
    """The table of the metrics of every example, computed now."""
    header = ["Example", "Events", "Agents", "Max fan-out", "Spawn depth", "Work (s)"]
    header += ["Critical path (s)", "Speed-up", "Decisions", "Stop", "Tokens", "Wall clock (s)"]
    rows = []
    for name, doc in examples.items():
        m = trace_metrics(doc)
        decisions = ", ".join(f"{d} {n}" for d, n in m["decisions"].items() if n) or "none"
        rows.append(
            [name, m["events"], m["agents"], m["max_fanout"], m["spawn_depth"]]
            + [_number(m["total_work_s"]), _number(m["critical_path_s"])]
            + [_number(m["parallel_speedup"]), decisions, "yes" if m["has_stop_decision"] else "no"]
            + [m["tokens"], _number(m["wall_clock_s"])]
        )
    return table(header, rows)


def _channel_table(vocabulary: Vocabulary, names: dict[str, str]) -> str:
    """Each example reward channel, the reward type it is named after and its family."""
    rows = []
    for channel in CHANNEL_EXAMPLES:
        reward_type = CHANNEL_ALIASES.get(channel, channel)
        rows.append([channel, reward_type, names[vocabulary.family_of(reward_type)]])
    return table(["Channel", "Reward type", "Reward family"], rows)


def trace_page_markdown(vocabulary: Vocabulary, root: str | os.PathLike[str] | None = None) -> str:
    """The Markdown of the site page "Orchestration traces" for a data root (default: found),
    naming reward families and decisions as ``vocabulary`` (the taxonomy) does."""
    examples = load_examples(root)
    name = DIAGRAM_EXAMPLE if DIAGRAM_EXAMPLE in examples else next(iter(examples))
    doc = examples[name]
    axes = (vocabulary["reward_family"], vocabulary["decision"])
    names = {v: f"{v} {axis.label_of(v)}" for axis in axes for v in axis.ids}
    fields = {key: cell(value) for key, value in names.items()} | _format_fields(load_schema())
    fields |= {
        "example_path": (EXAMPLES_DIR / (name + ".json")).as_posix(),
        "example_topology": cell(doc.get("topology", "unknown")),
        "example_task": cell(doc["task_id"]),
        "example_diagram": trace_mermaid(doc),
        "metrics_table": metrics_section(examples),
        "r7_definition": cell(vocabulary["reward_family"].value("R7").definition),
        "channel_table": _channel_table(vocabulary, names),
    }
    return Template(PAGE_TEMPLATE.read_text(encoding="utf-8")).substitute(fields)
