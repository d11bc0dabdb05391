"""Launch lines that work with the reference work here: unknown flags, --export, json header, @file."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

from conftest import Workspace, fake_models_yml, user_texts
from e2e.helpers import run_xcsh
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ARGS = ["--model", "fake/fake-model", "--no-tools"]
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def run(ws: Workspace, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return run_xcsh(ws, *args, stdin=stdin)


def test_rpc_mode_starts_with_flags_of_newer_references(workspace: Workspace) -> None:
    result = run(
        workspace, "--mode", "rpc", *ARGS, "--no-session", "--allow-home", "--plugin-dir", "x",
        "--some-future-flag", "--no-mcp",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.split(b"\n")[0])["type"] == "ready"
    assert b"unknown option --some-future-flag ignored" in result.stderr
    assert b"--no-mcp is accepted but has no effect" in result.stderr


def test_export_writes_the_page_of_a_session_file(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("The sky is blue."))
    assert run(workspace, *ARGS, "--session-dir", str(workspace.sess), "-p", "sky colour?").returncode == 0
    (session_file,) = workspace.sess.glob("*.jsonl")
    out = workspace.proj / "page.html"
    result = run(workspace, "--export", str(session_file), str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Exported to: {out}\n".encode()
    page = out.read_text()
    assert "The sky is blue." in page and "sky colour?" in page
    assert out.stat().st_mode & 0o777 == 0o600  # the page holds the conversation


def test_export_without_an_output_names_the_page_after_the_session(workspace: Workspace) -> None:
    source = workspace.sess / "abc.jsonl"
    header = {"type": "session", "version": 3, "id": "abc", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"}
    source.write_text(json.dumps(header) + "\n")
    result = run(workspace, "--export", str(source))
    assert result.returncode == 0, result.stderr
    assert (workspace.proj / "xcsh-session-abc.html").is_file()


def test_export_of_a_missing_file_fails_clearly(workspace: Workspace) -> None:
    result = run(workspace, "--export", "nope.jsonl")
    assert result.returncode == 1
    assert b"File not found" in result.stderr and result.stdout == b""


def test_json_mode_writes_the_session_header_first(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("ok"))
    result = run(workspace, *ARGS, "--no-session", "--mode", "json", "hi?")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(workspace.proj)
    assert lines[1]["type"] == "agent_start" and lines[-1]["type"] == "agent_end"


def test_at_file_arguments_attach_text_and_images_to_the_first_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    vision = "      - id: eyes\n        input: [text, image]\n        contextWindow: 128000\n        maxTokens: 4096\n"
    (workspace.agent / "models.yml").write_text(fake_models_yml(fake_llm.base_url, extra_models=vision))
    (workspace.proj / "notes.txt").write_text("remember the milk")
    (workspace.proj / "pic.bin").write_bytes(PNG)  # recognised by content, not by name
    fake_llm.script(script.text("done"))
    args = ("--model", "fake/eyes", "--no-tools", "--no-session")
    result = run(workspace, *args, "-p", "@notes.txt", "@pic.bin", "summarise")
    assert result.returncode == 0, result.stderr
    (request,) = fake_llm.wait_for_requests(1)
    (text,) = user_texts(request.json)
    notes = Path(workspace.proj / "notes.txt").resolve()
    assert text.startswith(f'<file name="{notes}">\nremember the milk\n</file>\n')
    assert text.endswith("</file>\nsummarise")
    user = next(m for m in request.json["messages"] if m["role"] == "user")
    images = [b for b in user["content"] if b.get("type") == "image_url"]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_missing_at_file_is_a_startup_error(workspace: Workspace) -> None:
    result = run(workspace, *ARGS, "--no-session", "-p", "@missing.txt", "hi")
    assert result.returncode == 1 and b"File not found" in result.stderr


def test_several_messages_are_sent_one_after_another(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("first answer"), script.text("second answer"))
    result = run(workspace, *ARGS, "--no-session", "-p", "one", "two")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"second answer\n"
    assert user_texts(fake_llm.requests[1].json) == ["one", "two"]


def test_print_mode_shows_progress_on_stderr_when_asked(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.proj / "notes.txt").write_text("hello")
    fake_llm.script(
        script.tool_calls(("c1", "read", {"path": "notes.txt"})),
        script.tool_calls(("c2", "read", {"path": "missing.txt"})),
        script.text("All read."),
    )
    workspace.env["XCSH_PROGRESS"] = "1"
    result = run(workspace, "--model", "fake/fake-model", "--tools", "read", "--no-session", "-p", "read it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"All read.\n"
    err = result.stderr.decode()
    assert "→ read notes.txt\n✓ read\n" in err
    assert "→ read missing.txt\n✗ read: " in err
    assert "All read.\n" in err


def test_print_mode_is_silent_on_stderr_when_not_a_terminal(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("quiet"))
    result = run(workspace, *ARGS, "--no-session", "-p", "hi")
    assert result.returncode == 0 and result.stdout == b"quiet\n"
    assert "quiet" not in result.stderr.decode()
