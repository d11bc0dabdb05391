"""A hostile repository tree cannot hang, flood or reach outside itself at start-up: symlink
loops, YAML alias bombs, FIFOs and links leaving the project (docs/security.md, docs/context.md).
Each test spawns the real ``xcsh --mode rpc`` on a temporary tree."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Workspace, tool_results, user_texts
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ARGS = ["--model", "fake/fake-model", "--no-session"]


def _alias_bomb(levels: int) -> str:
    """A YAML document of a few hundred bytes whose aliases expand to 10**levels nodes."""
    lines = ["l0: &l0 {" + ", ".join(f"k{i}: 1" for i in range(10)) + "}"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} {{" + ", ".join(f"k{i}: *l{level - 1}" for i in range(10)) + "}")
    return "\n".join(lines) + "\n"


async def _start(ws: Workspace, *extra: str, cwd: Path | None = None) -> RpcClient:
    return await RpcClient.start(
        args=[*ARGS, *extra], cwd=cwd or ws.proj, env=ws.env, stderr=asyncio.subprocess.PIPE
    )


async def _stderr_after_close(client: RpcClient) -> str:
    await client.close()
    assert client.process.stderr is not None
    return (await asyncio.wait_for(client.process.stderr.read(), 30)).decode()


async def test_symlink_loops_under_prompts_do_not_hang_start_up_and_templates_still_load(
    workspace: Workspace,
) -> None:
    prompts = workspace.proj / ".xcsh" / "prompts"
    (prompts / "sub").mkdir(parents=True)
    (prompts / "hello.md").write_text("Say hello\n")
    (prompts / "sub" / "deep.md").write_text("Go deep\n")
    for name in "abc":  # each link points back at prompts/: an exponential walk without a guard
        os.symlink(".", prompts / name)
    os.symlink("..", prompts / "sub" / "up")
    client = await _start(workspace)
    try:
        names = sorted(c["name"] for c in await asyncio.wait_for(client.get_commands(), 60))
    finally:
        await client.close()
    assert "hello" in names and "deep" in names
    assert names.count("hello") == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        pytest.param(lambda: _alias_bomb(9), "alias bomb", id="alias-bomb"),
        pytest.param(lambda: "# padding padding padding padding padding\n" * 8000, "256 KiB", id="oversized"),
    ],
)
async def test_a_refused_project_config_is_ignored_naming_the_file_and_xcsh_starts(
    workspace: Workspace, body: Callable[[], str], reason: str
) -> None:
    config = workspace.proj / ".xcsh" / "config.yml"
    config.parent.mkdir(parents=True)
    config.write_text("steeringMode: all\n" + body())
    client = await _start(workspace)
    try:
        state = await asyncio.wait_for(client.get_state(), 60)
    finally:
        stderr = await _stderr_after_close(client)
    assert state["steeringMode"] != "all"  # the refused file's settings are not applied
    assert str(config) in stderr and reason in stderr


async def test_an_alias_bomb_in_a_commands_front_matter_is_refused_and_the_command_still_loads(
    workspace: Workspace,
) -> None:
    command = workspace.proj / ".xcsh" / "commands" / "boom.md"
    command.parent.mkdir(parents=True)
    command.write_text("---\n" + _alias_bomb(9) + "---\nThe body\n")
    client = await _start(workspace)
    try:
        commands = await asyncio.wait_for(client.get_commands(), 60)
    finally:
        await client.close()
    assert "boom" in [c["name"] for c in commands]


async def test_tools_refuse_a_fifo_with_a_clear_error_instead_of_blocking(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    os.mkfifo(workspace.proj / "notes.md")  # no writer ever comes: opening it would block for ever
    calls = [
        ("c1", "read", {"path": "notes.md"}),
        ("c2", "grep", {"pattern": "x", "path": "notes.md"}),
        ("c3", "edit", {"edits": [{"path": "notes.md", "loc": "append", "content": ["b"]}]}),
        ("c4", "write", {"path": "notes.md", "content": "hi"}),
        ("c5", "notebook", {"action": "delete", "notebook_path": "notes.md", "cell_index": 0}),
    ]
    fake_llm.script(script.tool_calls(*calls), script.text("done"))
    tools = "read,grep,edit,write,notebook"
    client = await _start(workspace, "--tools", tools)
    try:
        frames = await client.prompt_and_wait("look at the notes", timeout=60)
        state = await asyncio.wait_for(client.get_state(), 30)
    finally:
        await client.close()
    ends = {f["toolCallId"]: f for f in frames if f["type"] == "tool_execution_end"}
    assert set(ends) == {c[0] for c in calls}
    for end in ends.values():
        assert end["isError"] is True
        assert "notes.md: it is a named pipe (FIFO)" in end["result"]["content"][0]["text"]
    assert "named pipe" in tool_results(fake_llm.requests[-1].json)["c1"]
    assert state["isStreaming"] is False
    assert stat.S_ISFIFO((workspace.proj / "notes.md").stat().st_mode)  # left as it was


STUCK_TOOL = """
import asyncio
import json
import threading

BLOCKED = threading.Event()  # never set: the thread below waits for ever


def setup(xcsh):
    async def stuck(args, call):
        await asyncio.to_thread(BLOCKED.wait)  # ignores the abort signal
        return "never"

    xcsh.register_tool("stuck", "Wait for ever.", {"type": "object", "properties": {}}, stuck)
"""


async def test_abort_answers_while_a_tool_is_stuck_in_a_thread_and_the_session_stays_usable(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    ext = tmp_path / "stuck_ext.py"
    ext.write_text(STUCK_TOOL)
    fake_llm.script(script.tool_calls(("s1", "stuck", {})), script.text("fine"))
    client = await _start(workspace, "-e", str(ext), "--tools", "read")
    try:
        mark = client.mark()
        await client.prompt("wait")
        await client.wait_for(lambda f: f["type"] == "tool_execution_start", since=mark, timeout=60)
        await asyncio.wait_for(client.abort(), 60)
        end = await client.wait_for(lambda f: f["type"] == "tool_execution_end", since=mark, timeout=60)
        assert end["isError"] is True and "abandoned" in end["result"]["content"][0]["text"]
        await client.wait_for(lambda f: f["type"] == "agent_end", since=mark, timeout=60)
        frames = await client.prompt_and_wait("still there?", timeout=60)  # the loop still serves
        assert frames[-1]["type"] == "agent_end"
        assert frames[-1]["messages"][-1]["content"] == [{"type": "text", "text": "fine"}]
        assert (await asyncio.wait_for(client.get_state(), 30))["isStreaming"] is False
    finally:
        code = await client.close(timeout=30)  # stdin EOF ends the process despite the stuck thread
    assert code == 0


async def test_context_files_system_md_skills_and_commands_linking_out_of_the_repository_are_skipped(
    workspace: Workspace, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "credentials").write_text("aws_secret_access_key = SECRET-FROM-OUTSIDE-REPO\n")
    repo = workspace.proj
    (repo / ".git").mkdir()
    xcsh_dir = repo / ".xcsh"
    (xcsh_dir / "skills" / "s1").mkdir(parents=True)
    (xcsh_dir / "commands").mkdir()
    (repo / "AGENTS.md").symlink_to(secret / "credentials")
    (xcsh_dir / "SYSTEM.md").symlink_to(secret / "credentials")
    (xcsh_dir / "skills" / "s1" / "SKILL.md").symlink_to(secret / "credentials")
    (xcsh_dir / "commands" / "leak.md").symlink_to(secret / "credentials")
    (xcsh_dir / "commands" / "fine.md").write_text("A command of the repository\n")
    client = await _start(workspace)
    try:
        state = await asyncio.wait_for(client.get_state(), 60)
        names = [c["name"] for c in await client.get_commands()]
    finally:
        stderr = await _stderr_after_close(client)
    assert "SECRET-FROM-OUTSIDE" not in state["systemPrompt"]
    assert "fine" in names and "leak" not in names
    [notice] = [line for line in stderr.splitlines() if "link outside the project" in line]
    assert str(repo / "AGENTS.md") in notice and "leak.md" in notice and "SKILL.md" in notice
    assert "SYSTEM.md" in stderr and "SECRET-FROM-OUTSIDE" not in stderr


async def test_project_files_in_a_folder_every_user_can_write_are_skipped_with_a_notice(
    workspace: Workspace, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"  # like /tmp: anyone may plant files here
    (shared / ".xcsh" / "commands").mkdir(parents=True)
    (shared / "AGENTS.md").write_text("PLANTED-CONTEXT\n")
    (shared / ".xcsh" / "SYSTEM.md").write_text("PLANTED-SYSTEM\n")
    (shared / ".xcsh" / "commands" / "planted.md").write_text("PLANTED-COMMAND\n")
    (shared / ".xcsh" / "config.yml").write_text("steeringMode: all\n")
    shared.chmod(0o777)
    client = await _start(workspace, cwd=shared)
    try:
        state = await asyncio.wait_for(client.get_state(), 60)
        names = [c["name"] for c in await client.get_commands()]
    finally:
        stderr = await _stderr_after_close(client)
        shared.chmod(0o755)
    assert "PLANTED" not in state["systemPrompt"]
    assert "planted" not in names
    assert state["steeringMode"] != "all"
    assert "other users control" in stderr and "writable by every user" in stderr
    assert f"skipped {shared / '.xcsh' / 'config.yml'}" in stderr


async def test_an_untrusted_project_cannot_change_the_model_or_thinking_level_and_the_notice_says_so(
    workspace: Workspace,
) -> None:
    workspace.config("modelRoles:\n  default: fake/fake-model\n")
    config = workspace.proj / ".xcsh" / "config.yml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "steeringMode: all\nmodelRoles:\n  default: fake/fake-reasoner\ndefaultThinkingLevel: high\n"
        "enabledModels: [fake/fake-reasoner]\n"
    )

    async def state_and_stderr(*extra: str) -> tuple[dict[str, object], str]:
        client = await RpcClient.start(
            args=["--no-session", *extra],
            cwd=workspace.proj,
            env=workspace.env,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            state = await asyncio.wait_for(client.get_state(), 60)
        finally:
            stderr = await _stderr_after_close(client)
        return dict(state), stderr

    state, stderr = await state_and_stderr()
    assert state["model"]["id"] == "fake-model"  # type: ignore[index]
    assert state["steeringMode"] == "all"  # harmless project settings still apply
    [notice] = [line for line in stderr.splitlines() if "skipped project code" in line]
    assert "modelRoles.default" in notice and "defaultThinkingLevel" in notice and "enabledModels" in notice
    assert "--trust" in notice

    state, stderr = await state_and_stderr("--trust")  # the user's consent: the project's choice applies
    assert state["model"]["id"] == "fake-reasoner"  # type: ignore[index]
    assert state["thinkingLevel"] == "high"
    assert "skipped project code" not in stderr


async def test_continue_and_list_sessions_keep_to_this_directory_when_another_path_encodes_the_same(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    nested, dashed = tmp_path / "a" / "b", tmp_path / "a-b"  # both encode as ...-a-b--
    nested.mkdir(parents=True)
    dashed.mkdir()
    fake_llm.script(script.text("answer about project a/b"))
    args = ["--model", "fake/fake-model", "--no-tools"]
    async with RpcClient.spawn(args=args, cwd=nested, env=workspace.env) as client:
        await client.prompt_and_wait("private prompt in project a/b", timeout=60)
        first = (await client.get_state())["sessionFile"]
    async with RpcClient.spawn(args=[*args, "--continue"], cwd=dashed, env=workspace.env) as client:
        state = await asyncio.wait_for(client.get_state(), 60)
        messages = await client.get_messages()
        listed = await client.list_sessions()
        everything = await client.list_sessions("all")
    assert state["sessionFile"] != first and messages == []
    assert first not in [s["path"] for s in listed]
    assert first in [s["path"] for s in everything]  # still listed for all projects
    async with RpcClient.spawn(args=[*args, "--continue"], cwd=nested, env=workspace.env) as client:
        assert (await client.get_state())["sessionFile"] == first  # its own directory continues it
        assert [s["path"] for s in await client.list_sessions()] == [first]


async def test_a_settings_change_writes_through_a_symlinked_config_yml_and_keeps_the_link(
    workspace: Workspace, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "xcsh-config.yml"
    real.write_text("# my settings\nretry:\n  enabled: true\n")
    link = workspace.agent / "config.yml"
    link.symlink_to(real)
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-session"], cwd=workspace.proj, env=workspace.env
    ) as client:
        await asyncio.wait_for(client.set_auto_retry(False), 60)
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text() == "# my settings\nretry:\n  enabled: false\n"
    assert [p.name for p in dotfiles.iterdir()] == ["xcsh-config.yml"]  # no temp file left


async def test_a_key_in_the_base_urls_query_is_redacted_in_every_frame_that_shows_the_model(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    models = workspace.agent / "models.yml"
    models.write_text(
        models.read_text().replace(
            f"baseUrl: {fake_llm.base_url}/v1", f"baseUrl: {fake_llm.base_url}/v1?api-key=QSECRET1&region=eu"
        )
    )
    assert "QSECRET1" in models.read_text()
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-session"], cwd=workspace.proj, env=workspace.env
    ) as client:
        state = await asyncio.wait_for(client.get_state(), 60)
        await client.call({"type": "get_available_models"})
        await client.call({"type": "set_model", "provider": "fake", "modelId": "fake-reasoner"})
        await client.call({"type": "cycle_model"})
        frames = json.dumps(list(client.frames))
    # every query value but the harmless names' is redacted (docs/security.md), region's too
    assert state["model"]["baseUrl"].endswith("/v1?api-key=[redacted]&region=[redacted]")  # type: ignore[index]
    assert "QSECRET1" not in frames and frames.count("api-key=[redacted]") >= 4


async def test_a_utf8_byte_order_mark_before_front_matter_is_ignored_in_skills_commands_and_context(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    bom = "\ufeff"
    xcsh_dir = workspace.proj / ".xcsh"
    (xcsh_dir / "skills" / "tidy").mkdir(parents=True)
    (xcsh_dir / "commands").mkdir()
    (xcsh_dir / "prompts").mkdir()
    (xcsh_dir / "skills" / "tidy" / "SKILL.md").write_text(
        f"{bom}---\nname: tidy\ndescription: TIDY-SKILL-DESCRIPTION\n---\nTidy up.\n"
    )
    (xcsh_dir / "commands" / "review.md").write_text(
        f"{bom}---\ndescription: Review the change\n---\nReview this: $ARGUMENTS\n"
    )
    (xcsh_dir / "prompts" / "plan.md").write_text(f"{bom}---\ndescription: Plan it\n---\nPlan: $1\n")
    (workspace.proj / "AGENTS.md").write_text(f"{bom}ROOT-CONTEXT\n")
    fake_llm.script(script.text("ok"), script.text("ok"))
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-session", "--tools", "read"],
        cwd=workspace.proj,
        env=workspace.env,
    ) as client:
        prompt = (await asyncio.wait_for(client.get_state(), 60))["systemPrompt"]
        commands = {c["name"]: c for c in await client.get_commands()}
        await client.prompt_and_wait("/review the parser", timeout=60)
        await client.prompt_and_wait("/plan release", timeout=60)
    assert "TIDY-SKILL-DESCRIPTION" in prompt
    assert bom not in prompt and "ROOT-CONTEXT" in prompt
    assert commands["review"]["description"] == "Review the change"
    assert commands["plan"]["description"] == "Plan it"
    sent = [user_texts(r.json)[-1] for r in fake_llm.requests]
    assert sent == ["Review this: the parser", "Plan: release"]


def test_an_oversized_user_config_stops_start_up_naming_the_file(workspace: Workspace) -> None:
    config = workspace.agent / "config.yml"
    config.write_text("steeringMode: all\n" + "# padding padding padding padding padding\n" * 8000)
    result = run_xcsh(workspace, "--mode", "rpc", *ARGS, stdin=b'{"type": "get_state", "id": "1"}\n')
    assert result.returncode != 0 and b'"id": "1"' not in result.stdout and b'"id":"1"' not in result.stdout
    assert str(config).encode() in result.stderr and b"256 KiB" in result.stderr
