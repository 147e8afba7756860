"""The span attributes the importer reads, under OpenTelemetry GenAI or OpenInference names,
into one shape: the mapping and the decision rules never see a convention's own names."""

from __future__ import annotations

import re
from typing import Any

# OpenTelemetry GenAI semantic conventions.
OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
TOOL_NAME = "gen_ai.tool.name"
INVOKE_AGENT = "invoke_agent"
# A workflow runs agents as an orchestrator does: read as the agent that starts them.
INVOKE_WORKFLOW = "invoke_workflow"
CREATE_AGENT = "create_agent"
EXECUTE_TOOL = "execute_tool"
MODEL_CALLS = frozenset({"chat", "text_completion", "generate_content"})
# OpenInference semantic conventions.
OI_SPAN_KIND = "openinference.span.kind"
OI_AGENT_NAME = "agent.name"
OI_TOOL_NAME = "tool.name"
OI_NODE_NAME = "graph.node.name"
OI_NODE_ID = "graph.node.id"
OI_OPERATIONS = {"AGENT": INVOKE_AGENT, "TOOL": EXECUTE_TOOL, "LLM": "chat"}
# Token counts, newest name first: the first one present counts (never two of a kind).
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
TOTAL_TOKENS = ("llm.token_count.total",)
USAGE = (*INPUT_TOKENS, *OUTPUT_TOKENS, *TOTAL_TOKENS)
MAX_TOKENS = 10**12
READ_ATTRIBUTES = frozenset(
    {OPERATION, AGENT_NAME, AGENT_ID, TOOL_NAME, OI_SPAN_KIND, OI_AGENT_NAME, OI_TOOL_NAME}
    | {OI_NODE_NAME, OI_NODE_ID, *USAGE}
)
# Tool names that end the run (O5) and that hand the task to another agent (O2, the agent
# named after ``transfer_to_`` and the like).
STOP_TOOLS = frozenset({"stop", "finish", "final_answer", "terminate", "end_run", "done"})
HANDOFF_TOOL = re.compile(r"(?:transfer|handoff|hand_off|delegate)_to_(.+)", re.IGNORECASE)


def operation(attrs: dict[str, Any]) -> str | None:
    """``gen_ai.operation.name`` (``invoke_workflow`` read as ``invoke_agent``), else the GenAI
    operation of an OpenInference span kind."""
    op = attrs.get(OPERATION)
    if isinstance(op, str) and op:
        return INVOKE_AGENT if op == INVOKE_WORKFLOW else op
    kind = attrs.get(OI_SPAN_KIND)
    if isinstance(kind, str):
        return OI_OPERATIONS.get(kind.upper())
    return None


def _first_text(attrs: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def agent_label(attrs: dict[str, Any], span_name: str, span_id: str) -> str:
    """The agent a span names: GenAI name or id, OpenInference agent or graph node, span name."""
    found = _first_text(attrs, (AGENT_NAME, AGENT_ID, OI_AGENT_NAME, OI_NODE_NAME, OI_NODE_ID))
    return found or span_name or f"agent-{span_id}"


def tool_label(attrs: dict[str, Any], span_name: str) -> str:
    return _first_text(attrs, (TOOL_NAME, OI_TOOL_NAME)) or span_name or "tool"


def _count(attrs: dict[str, Any], keys: tuple[str, ...], bad: list[str]) -> int | None:
    for key in keys:
        if key not in attrs:
            continue
        value = attrs[key]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
            return value
        bad.append(key)
    return None


def token_counts(attrs: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
    """``input_tokens`` / ``output_tokens`` (or ``total_tokens`` when only a total is
    given) and the attributes that are not token counts."""
    bad: list[str] = []
    found = {}
    for name, keys in (("input_tokens", INPUT_TOKENS), ("output_tokens", OUTPUT_TOKENS)):
        value = _count(attrs, keys, bad)
        if value is not None:
            found[name] = value
    if not found:
        total = _count(attrs, TOTAL_TOKENS, bad)
        if total is not None:
            found["total_tokens"] = total
    return found, bad


_USAGE_KEYS = frozenset(USAGE)


def reports_usage(attrs: dict[str, Any]) -> bool:
    return not _USAGE_KEYS.isdisjoint(attrs)
