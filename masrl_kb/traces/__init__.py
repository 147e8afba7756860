"""Orchestration traces: the schema, validation, metrics, synthetic traces and the site page."""
