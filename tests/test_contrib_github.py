"""The pull-request path: workflows, pre-commit hooks, issue forms and contributor docs."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from masrl_kb.cli import build_parser
from masrl_kb.cli.contrib import register

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = REPO / ".github" / "workflows"
FORM_TYPES = {"markdown", "input", "textarea", "dropdown", "checkboxes"}


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _triggers(workflow: dict) -> dict:
    # PyYAML reads the bare key `on` as the boolean true.
    triggers = workflow.get("on", workflow.get(True))
    return triggers if isinstance(triggers, dict) else {name: None for name in triggers}


def _runs(workflow: dict) -> list[str]:
    return [
        step["run"]
        for job in workflow["jobs"].values()
        for step in job.get("steps", [])
        if "run" in step
    ]


def _uses(workflow: dict) -> list[str]:
    return [
        step["uses"]
        for job in workflow["jobs"].values()
        for step in job.get("steps", [])
        if "uses" in step
    ]


def _commands() -> set[str]:
    """Sub-commands of the real parser, with the contributor commands added."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if "add" not in sub.choices:  # until cli.py calls register itself
        register(sub)
    return set(sub.choices)


def test_ci_checks_every_pull_request() -> None:
    ci = _yaml(WORKFLOWS / "ci.yml")
    assert {"pull_request", "push"} <= set(_triggers(ci))
    runs = "\n".join(_runs(ci))
    for command in (
        "masrl-kb validate",
        "masrl-kb schema --check",
        "masrl-kb export markdown --check",
        "python -m pytest",
        "masrl-kb build",
    ):
        assert command in runs, command
    assert re.search(r"^masrl-kb claims$", runs, re.M)  # reported, not gating (no --check)
    diff = next(
        s for j in ci["jobs"].values() for s in j["steps"] if "masrl-kb diff" in s.get("run", "")
    )
    assert "GITHUB_STEP_SUMMARY" in diff["run"] and "pull_request" in diff["if"]
    checkout = next(
        s for j in ci["jobs"].values() for s in j["steps"] if "checkout" in s.get("uses", "")
    )
    assert checkout["with"]["fetch-depth"] == 0


def test_link_check_is_scheduled_and_never_gates_a_pull_request() -> None:
    links = _yaml(WORKFLOWS / "links.yml")
    triggers = set(_triggers(links))
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    assert not triggers & {"pull_request", "pull_request_target", "push"}
    assert any(run.startswith("masrl-kb check-links") for run in _runs(links))
    for name in ("ci.yml", "deploy.yml"):
        assert "check-links" not in (WORKFLOWS / name).read_text()


def test_site_deploys_from_main() -> None:
    deploy = _yaml(WORKFLOWS / "deploy.yml")
    assert _triggers(deploy)["push"]["branches"] == ["main"]
    uses = " ".join(_uses(deploy))
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    assert deploy["permissions"]["pages"] == "write"
    assert any("masrl-kb build" in run for run in _runs(deploy))


def test_workflows_call_only_existing_commands() -> None:
    commands = _commands()
    for path in WORKFLOWS.glob("*.yml"):
        for run in _runs(_yaml(path)):
            for name in re.findall(r"masrl-kb ([a-z-]+)", run):
                assert name in commands, (path.name, name)


def test_pre_commit_runs_validate() -> None:
    config = _yaml(REPO / ".pre-commit-config.yaml")
    hooks = {
        h["id"]: h for repo in config["repos"] if repo["repo"] == "local" for h in repo["hooks"]
    }
    validate = hooks["masrl-kb-validate"]
    assert validate["entry"] == "masrl-kb validate"
    assert validate["language"] == "system" and validate["pass_filenames"] is False
    assert re.search(validate["files"], "papers/puppeteer.yaml")
    assert re.search(validate["files"], "exclusions/E001.yaml")
    commands = _commands()
    for hook in hooks.values():
        assert hook["entry"].split()[1] in commands


@pytest.mark.parametrize("path", sorted((REPO / ".github" / "ISSUE_TEMPLATE").glob("*.yml")))
def test_issue_forms_are_well_formed(path: Path) -> None:
    form = _yaml(path)
    assert form["name"] and form["description"]
    ids = []
    for element in form["body"]:
        assert element["type"] in FORM_TYPES
        if element["type"] != "markdown":
            assert element["attributes"]["label"]
            ids.append(element["id"])
    assert len(ids) == len(set(ids))
    assert any(e.get("validations", {}).get("required") for e in form["body"])


def test_a_paper_suggestion_form_exists() -> None:
    forms = [_yaml(p) for p in (REPO / ".github" / "ISSUE_TEMPLATE").glob("*.yml")]
    suggest = next(f for f in forms if f["name"] == "Suggest a paper")
    labels = [e["attributes"]["label"] for e in suggest["body"] if e["type"] != "markdown"]
    assert "arXiv id or URL" in labels


def test_pull_request_template_asks_for_cells_and_evidence() -> None:
    text = (REPO / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text()
    assert "masrl-kb diff" in text and "masrl-kb validate" in text
    assert "## Evidence" in text and "## Cells and claims" in text


def test_contributor_docs_name_only_existing_commands() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text()
    named = set(re.findall(r"masrl-kb ([a-z][a-z-]*)", text))
    assert {"add", "exclude", "export", "diff", "check-links", "schema", "validate"} <= named
    assert named <= _commands()
