"""The site page "Orchestration traces", generated from the schema and the example traces.

The names of the survey's reward families and decisions come from the knowledge base's
taxonomy, which the caller passes in (:class:`Vocabulary`): the toolkit reads no taxonomy.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any, Protocol

from masrl_kb.kb.paths import find_root
from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.schema import SCHEMA_PATH, load_schema, topology_ids
from masrl_kb.traces.validate import check_file

EXAMPLES_DIR = Path("traces") / "examples"
DIAGRAM_EXAMPLE = "hierarchical"
# Trace reward channels that are named after a reward type of the taxonomy under another name.
CHANNEL_ALIASES = {"team": "shared"}
CHANNEL_EXAMPLES = ("team", "role", "process", "tool", "debate", "orchestration")
# Metric, definition, and the reward family or decision it informs ({R7}: that id and label).
METRIC_ROWS = (
    ("events, events_by_type", "events, in all and per type", "{R4}: steps"),
    ("agents", "distinct acting and spawned agents", "{R2}: who gets credit"),
    (
        "decisions",
        "orchestrator_decision events per decision O1-O5, and those without one (unlabelled)",
        "O1-O5",
    ),
    ("has_stop_decision", "whether the run logged an O5 decision", "{O5}"),
    ("max_fanout", "most spawn events issued by one agent", "{O1}: breadth"),
    ("spawn_depth", "depth of the agent -> spawned-agent tree", "{O1}: depth"),
    ("total_work_s", "sum of event durations (t_end - t)", "{R7}: cost"),
    ("critical_path_s", "heaviest path of non-temporal edges", "{R7}: latency"),
    ("parallel_speedup", "total_work_s / critical_path_s", "{R7}"),
    ("tokens, wall_clock_s", "copied from costs", "cost terms of any reward"),
    ("critical_path", "the events of that heaviest path", "{R7}: latency"),
    (
        "agent_time",
        "per agent: busy (union of its events) and idle time within its span",
        "{R2}: who gets credit",
    ),
    ("communication", "events aimed at another agent, per sender and recipient", "{O3}"),
    ("reported", "the trace's own metrics object, as written", "as the run defines"),
)


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
    return [
        list(row) for row in zip(definition["enum"], definition["enumDescriptions"], strict=True)
    ]


def format_section(schema: dict) -> str:
    """The format: trace, event and edge fields and the event and edge types."""
    defs = schema["$defs"]
    event_rows = [
        [kind, ", ".join(fields_by_type(schema, kind)), meaning]
        for kind, meaning in _enum_rows(defs["event_type"])
    ]
    return "\n\n".join(
        [
            "## The format",
            f"The format is a JSON Schema (draft 2020-12), `{SCHEMA_PATH.as_posix()}` "
            "(`masrl-kb trace schema` prints it). " + schema["description"],
            "### A trace",
            fields_table(schema, defs),
            "### Events",
            defs["event"]["description"],
            fields_table(defs["event"], defs),
            "Event types and the fields each one names (id, t, type and agent are required; "
            "the others are expected, and the tools skip an event that lacks them):",
            table(["Type", "Fields", "Meaning"], event_rows),
            "### Edges",
            defs["edge"]["description"],
            fields_table(defs["edge"], defs),
            "Edge types:",
            table(["Type", "Meaning"], _enum_rows(defs["edge_type"])),
            "### Costs",
            defs["costs"]["description"],
            fields_table(defs["costs"], defs),
        ]
    )


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


def example_section(name: str, doc: dict) -> str:
    """One example trace drawn as a diagram."""
    return "\n\n".join(
        [
            "## An example",
            f"`{(EXAMPLES_DIR / (name + '.json')).as_posix()}` "
            f"({cell(doc.get('topology', 'unknown'))} topology, task "
            f"`{cell(doc['task_id'])}`), drawn from the file: one box per agent, "
            "solid arrows for dependencies, dotted arrows for temporal order.",
            trace_mermaid(doc),
        ]
    )


# ----------------------------------------------------------------- metrics


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def metrics_section(examples: dict[str, dict]) -> str:
    """The metrics of every example, computed now."""
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
    return "\n\n".join(
        [
            "## Metrics of the examples",
            "Computed by `masrl-kb trace metrics` when this page was built.",
            table(header, rows),
        ]
    )


def mapping_section(vocabulary: Vocabulary) -> str:
    """How the metrics and reward channels map to reward families and decisions."""
    axes = (vocabulary["reward_family"], vocabulary["decision"])
    names = {v: f"{v} {axis.label_of(v)}" for axis in axes for v in axis.ids}
    metric_rows = [[metric, meaning, use.format_map(names)] for metric, meaning, use in METRIC_ROWS]
    channel_rows = []
    for channel in CHANNEL_EXAMPLES:
        reward_type = CHANNEL_ALIASES.get(channel, channel)
        channel_rows.append([channel, reward_type, names[vocabulary.family_of(reward_type)]])
    r7 = vocabulary["reward_family"].value("R7")
    return "\n\n".join(
        [
            "## From traces to rewards and decisions",
            f"The survey's orchestration reward family, {cell(names['R7'])}, is defined "
            f"as: {cell(r7.definition)} A trace makes it measurable. `parallel_speedup` is the "
            "parallelism speed-up: the work done divided by the time the longest chain of "
            "dependencies needs. A team that runs independent work side by side scores above "
            "1; a pipeline scores 1. Rewarding it (net of the token and time costs) credits "
            f"the orchestrator's {cell(names['O1'])} and {cell(names['O4'])} decisions that "
            "made the parallelism.",
            f"Every orchestrator decision is an event, so credit can reach it: {cell(names['O3'])} "
            "decisions show up as message events, and a stop is an `orchestrator_decision` "
            f"event with decision O5 ({cell(names['O5'])}), not the mere end of the log, so "
            "stopping early or late can be rewarded or penalised like any other decision.",
            table(["Metric", "Definition", "Reward family or decision"], metric_rows),
            "A trace's `rewards` holds one number per channel. Naming channels after the "
            "survey's reward types keeps them comparable across systems:",
            table(["Channel", "Reward type", "Reward family"], channel_rows),
        ]
    )


def tools_section() -> str:
    """The commands."""
    return "\n\n".join(
        [
            "## Tools",
            "```bash\n"
            "masrl-kb trace validate FILE...          # schema + graph rules, exit 1 on error\n"
            "masrl-kb trace metrics FILE... [--json] [--html OUT]  # the metrics above\n"
            "masrl-kb trace import otel SPANS.json --out run.json  # OpenTelemetry GenAI spans\n"
            "masrl-kb trace synth --agents 300 --steps 4000 --out big.json\n"
            "```",
            "Validation reports every problem as `file: JSON path or event: message`. "
            "A synthetic trace has exactly the requested number of agents and of events "
            "(one step is one event).",
        ]
    )


def trace_page_markdown(vocabulary: Vocabulary, root: str | os.PathLike[str] | None = None) -> str:
    """The Markdown of the site page "Orchestration traces" for a data root (default: found),
    naming reward families and decisions as ``vocabulary`` (the taxonomy) does."""
    examples = load_examples(root)
    name = DIAGRAM_EXAMPLE if DIAGRAM_EXAMPLE in examples else next(iter(examples))
    intro = (
        "The survey's unit of analysis is the orchestration trace: a time-ordered event "
        "graph of one team run. Its advice to harness builders is to log every orchestration "
        "event in a schema now, so the logs can become reward and credit signals later. This "
        "page gives that schema, one example per topology, and the metrics the tools compute."
    )
    sections = [
        "# Orchestration traces",
        intro,
        format_section(load_schema()),
        example_section(name, examples[name]),
        metrics_section(examples),
        mapping_section(vocabulary),
        tools_section(),
    ]
    return "\n\n".join(sections) + "\n"
