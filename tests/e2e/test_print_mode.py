"""Print mode: `xcsh -p` runs one prompt to completion and prints the answer; exit code reflects errors."""

from __future__ import annotations

import json
import subprocess

from conftest import Workspace
from e2e.helpers import run_xcsh
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ARGS = ["--model", "fake/fake-model", "--no-session", "--no-tools"]


def run(ws: Workspace, *args: str) -> subprocess.CompletedProcess[bytes]:
    return run_xcsh(ws, *args)


def test_print_mode_prints_only_the_final_answer(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("The answer is 42."))
    result = run(workspace, *ARGS, "-p", "what is the answer?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"The answer is 42.\n"


def test_json_mode_prints_every_event_as_a_json_line(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("ok"))
    result = run(workspace, *ARGS, "--mode", "json", "-p", "hi?")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.decode().split("\n") if line]
    # the session header comes first, as in the reference (tests/e2e/test_cli_parity.py)
    assert events[0]["type"] == "session"
    assert events[1]["type"] == "agent_start" and events[-1]["type"] == "agent_end"
    assert any(e["type"] == "message_update" for e in events)


def test_print_mode_exits_non_zero_when_the_provider_fails(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.config("retry:\n  enabled: false\n")
    fake_llm.script(script.http_error(401, "invalid api key"))
    result = run(workspace, *ARGS, "-p", "hi?")
    assert result.returncode == 1
    assert b"invalid api key" in result.stderr
    assert result.stdout == b""


def test_version_and_list_models_work_without_a_model(workspace: Workspace) -> None:
    version = run(workspace, "--version")
    listing = run(workspace, "--list-models", "fake")
    assert version.returncode == 0 and version.stdout.strip()
    assert listing.returncode == 0 and b"fake-model" in listing.stdout


def test_a_broken_models_file_is_a_clear_startup_error(workspace: Workspace) -> None:
    (workspace.agent / "models.yml").write_text("providers:\n  fake: [unclosed\n")
    result = run(workspace, "--mode", "rpc", *ARGS)
    assert result.returncode == 1
    assert b"models.yml" in result.stderr and b"Traceback" not in result.stderr
    assert result.stdout == b""


def test_an_unknown_provider_or_model_is_a_startup_error(workspace: Workspace) -> None:
    provider = run(workspace, "--mode", "rpc", "--provider", "nope", "--no-session")
    model = run(workspace, "--mode", "rpc", "--model", "fake/does-not-exist", "--no-session")
    assert provider.returncode == 1 and provider.stdout == b""
    assert b'Unknown provider "nope". Use --list-models to see available providers/models.' in provider.stderr
    assert model.returncode == 1 and model.stdout == b"" and b"Traceback" not in model.stderr


def test_no_model_available_is_a_startup_error(workspace: Workspace) -> None:
    (workspace.agent / "models.yml").unlink()
    result = run(workspace, "--mode", "rpc", "--no-session")
    assert result.returncode == 1 and result.stdout == b""
    assert b"No models available." in result.stderr
