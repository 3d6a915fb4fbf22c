"""The Claude Code plugin in plugin/: its manifest against the documented schema (tests/data/plugin), the paths it
names inside the plugin, its hooks in Claude Code's shape and running commands `playbook` has, its MCP server
`playbook mcp`, and its `/playbook` command's frontmatter."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from flows.cli import app

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "plugin"
EVENTS = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "SessionEnd"}


def test_the_manifest_is_what_the_reference_documents() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    schema = json.loads((ROOT / "tests" / "data" / "plugin" / "manifest.schema.json").read_text())
    jsonschema.validate(manifest, schema)
    for key in ("hooks", "mcpServers"):
        target = (PLUGIN / manifest[key]).resolve()
        assert PLUGIN.resolve() in target.parents and target.is_file(), key
    bad = manifest | {"name": "Playbook Plugin", "hooks": "../hooks.json"}
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the schema admits a name with spaces and a path out of the plugin")


def test_the_hooks_run_playbook_s_own_hook_commands() -> None:
    config = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(config) == {"SessionStart", "UserPromptSubmit", "PreToolUse"} <= EVENTS
    assert config["PreToolUse"][0]["matcher"] == "Bash"
    for groups in config.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command" and 0 < hook["timeout"] <= 60
                program, *args = shlex.split(hook["command"])
                assert program == "playbook"
                assert runner().invoke(app, [*[a for a in args if not a.startswith("--")], "--help"]).exit_code == 0


def test_the_mcp_server_and_the_command_are_playbook_s() -> None:
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"playbook": {"command": "playbook", "args": ["mcp"]}}
    assert runner().invoke(app, ["mcp", "--help"]).exit_code == 0
    text = (PLUGIN / "commands" / "playbook.md").read_text()
    head, _, body = text.removeprefix("---\n").partition("\n---\n")
    assert "description:" in head and "$ARGUMENTS" in body
    assert all(tool in body for tool in ("search_lessons", "get_lesson", "report_outcome"))


def runner() -> CliRunner:
    return CliRunner()
