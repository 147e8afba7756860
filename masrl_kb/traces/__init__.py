"""Orchestration traces: the schema, validation, metrics, synthetic traces and the site page."""

from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.synth import synth_trace
from masrl_kb.traces.validate import Problem, check_file, read_trace, validate_trace

__all__ = ["Problem", "check_file", "read_trace", "synth_trace", "trace_metrics", "validate_trace"]
