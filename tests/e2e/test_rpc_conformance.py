"""Wire details of rpc-protocol.md checked in review, against the real process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml

from conftest import Workspace
from e2e.helpers import spawn_rpc
from xcsh.rpc.client import RpcClient
from xcsh.rpc.jsonl import encode_frame
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PLAIN = ["--no-tools", "--no-session"]


def spawn(ws: Workspace, *args: str) -> Any:
    return RpcClient.spawn(args=[*args, *PLAIN], cwd=ws.proj, env=ws.env)


def extension(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return path


async def test_scoped_cycle_applies_each_models_own_level_and_omits_an_unset_one(
    workspace: Workspace,
) -> None:
    """§5.3: scoped cycling applies the scoped model's level; an unset level is omitted, not "off"."""
    scope = "fake-reasoner:low,fake-model"
    async with spawn(workspace, "--model", "fake/fake-model", "--models", scope) as client:
        to_low = await client.request({"id": "c1", "type": "cycle_model"})
        to_plain = await client.request({"id": "c2", "type": "cycle_model"})
    assert to_low["data"] == {**to_low["data"], "thinkingLevel": "low", "isScoped": True}
    assert to_low["data"]["model"]["id"] == "fake-reasoner"
    assert to_plain["data"]["model"]["id"] == "fake-model" and to_plain["data"]["isScoped"] is True
    assert "thinkingLevel" not in to_plain["data"]


async def test_changing_model_re_resolves_the_current_level_so_an_unset_level_stays_unset(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """§5.3/agent-behaviour §9.3: set_model and cycle_model re-clamp the current level; unset → unset."""
    fake_llm.script(script.text("plain answer"))
    async with spawn(workspace, "--model", "fake/fake-model") as client:
        await client.set_model("fake", "fake-reasoner")
        after_set = await client.get_state()
        to_plain = await client.cycle_model()
        to_reasoner = await client.cycle_model()
        await client.prompt_and_wait("no reasoning?")
    assert after_set["model"]["id"] == "fake-reasoner" and after_set["thinkingLevel"] == "off"
    assert to_plain is not None and "thinkingLevel" not in to_plain
    assert to_reasoner is not None and to_reasoner["model"]["id"] == "fake-reasoner"
    assert "thinkingLevel" not in to_reasoner
    assert "reasoning_effort" not in fake_llm.requests[0].json


async def test_changing_model_keeps_an_explicit_level_clamped_to_the_new_model(workspace: Workspace) -> None:
    async with spawn(workspace, "--model", "fake/fake-reasoner", "--thinking", "low") as client:
        to_plain = await client.cycle_model()
        back = await client.cycle_model()
        await client.set_thinking_level("off")
        to_plain_off = await client.cycle_model()
        back_off = await client.cycle_model()
    assert to_plain is not None and "thinkingLevel" not in to_plain
    # a non-reasoning model unsets the level, so the way back has nothing left to restore
    assert back is not None and "thinkingLevel" not in back
    assert to_plain_off is not None and to_plain_off["thinkingLevel"] == "off"
    assert back_off is not None and back_off["thinkingLevel"] == "off"


def _default_role(ws: Workspace) -> Any:
    return (yaml.safe_load((ws.agent / "config.yml").read_text()) or {}).get("modelRoles", {}).get("default")


async def test_set_model_is_the_default_model_of_the_next_process(workspace: Workspace) -> None:
    """§5.3: set_model records the choice as the default model (the reference's ``modelRoles.default``)."""
    async with spawn(workspace) as client:
        first = (await client.get_state())["model"]["id"]
        await client.set_model("fake", "fake-reasoner")
    stored = _default_role(workspace)
    async with spawn(workspace) as client:
        restarted = await client.get_state()
        cycled = await client.cycle_model()
    async with spawn(workspace) as client:
        after_cycle = (await client.get_state())["model"]["id"]
    assert first == "fake-model" and stored == "fake/fake-reasoner"
    # a reasoning default model starts at its highest level, as with --model
    assert (restarted["model"]["id"], restarted["thinkingLevel"]) == ("fake-reasoner", "high")
    assert cycled is not None and cycled["model"]["id"] == "fake-model"
    assert after_cycle == "fake-model"


async def test_an_explicit_level_on_the_default_role_is_kept_and_used_at_start(workspace: Workspace) -> None:
    workspace.config("modelRoles:\n  default: fake/fake-model:low\n")
    async with spawn(workspace) as client:
        await client.set_model("fake", "fake-reasoner")
    async with spawn(workspace) as client:
        state = await client.get_state()
    assert _default_role(workspace) == "fake/fake-reasoner:low"
    assert (state["model"]["id"], state["thinkingLevel"]) == ("fake-reasoner", "low")


async def test_the_enabled_models_setting_scopes_cycle_model_like_the_models_flag(
    workspace: Workspace,
) -> None:
    """§5.3: scoped models come from ``--models`` or the ``enabledModels`` setting."""
    workspace.config("enabledModels:\n  - fake-reasoner:minimal\n  - fake-model\n")
    async with spawn(workspace, "--model", "fake/fake-model") as client:
        cycled = await client.cycle_model()
    assert cycled is not None and cycled["isScoped"] is True
    assert (cycled["model"]["id"], cycled["thinkingLevel"]) == ("fake-reasoner", "minimal")


ASK_BEFORE_SWITCH = """
async def ask(event, ctx):
    allowed = await ctx.ui.confirm("Switch?", "Leave this session?")
    ctx.ui.notify(f"allowed={allowed}")
    return None if allowed else {"cancel": True}


def setup(xcsh):
    xcsh.on("session_before_switch", ask)
"""


async def test_stdin_eof_ends_the_process_while_a_blocking_command_waits_for_a_dialog(
    workspace: Workspace, tmp_path: Path
) -> None:
    """§2.5: at EOF nobody can answer a pending dialog; it resolves to its default and the process exits 0."""
    ext = extension(tmp_path, "ask_switch", ASK_BEFORE_SWITCH)
    async with spawn(workspace, "--model", "fake/fake-model", "-e", str(ext)) as client:
        mark = client.mark()
        client.send_raw({"id": "n", "type": "new_session"})
        await client.wait_for(lambda f: f.get("method") == "confirm", since=mark)
        code = await client.close(timeout=5)
    answers = [f for f in client.frames[mark:] if f["type"] == "response"]
    assert code == 0
    assert answers == [
        {
            "id": "n",
            "type": "response",
            "command": "new_session",
            "success": True,
            "data": {"cancelled": True},
        }
    ]


SEND_WHILE_SWITCHING = """
def setup(xcsh):
    xcsh.on("session_before_switch", lambda event, ctx: xcsh.send_user_message("one more thing"))
"""


async def test_an_extension_send_error_is_not_taken_for_the_pending_request(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """§3/§8.6: an id-less ``extension_send_user`` error belongs to no request; the client keeps waiting."""
    ext = extension(tmp_path, "send_on_switch", SEND_WHILE_SWITCHING)
    fake_llm.script(script.hold("working"))
    async with spawn(workspace, "--model", "fake/fake-model", "-e", str(ext)) as client:
        mark = client.mark()
        await client.prompt("long task")
        await client.wait_for_type("message_update", since=mark)
        # the handler's send fails (busy, no deliver_as) while new_session is the only pending request
        switched = await client.new_session()
    errors = [f for f in client.frames[mark:] if f.get("command") == "extension_send_user"]
    assert switched == {"cancelled": False}
    assert errors == [
        {
            "type": "response",
            "command": "extension_send_user",
            "success": False,
            "error": "Agent is already processing. Use steer() or followUp() to queue messages, "
            "or wait for completion.",
        }
    ]


async def test_non_finite_numbers_are_written_as_null_like_json_stringify(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """§1: every frame is valid JSON; NaN and Infinity (not JSON) become null, as JSON.stringify writes them.

    The non-finite numbers come from the host (a JSON reader that takes ``NaN`` literals, as the
    server's does) in a host tool's result details; a models.yml cost of ``.nan`` used to carry
    them, but is now refused as an invalid price (tests/coding/test_models.py)."""
    fake_llm.script(script.tool_calls(("c1", "odd", {})), script.text("done"))
    odd = {"name": "odd", "description": "odd numbers", "parameters": {"type": "object", "properties": {}}}
    async with spawn(workspace, "--model", "fake/fake-model") as client:
        await client.call({"type": "set_host_tools", "tools": [odd]})
        start = client.mark()
        await client.call({"type": "prompt", "message": "go"})
        call = await client.wait_for_type("host_tool_call", since=start)
        line = {"type": "host_tool_result", "id": call["id"], "result": {"content": [], "details": "DETAILS"}}
        raw = json.dumps(line).replace('"DETAILS"', '{"ratio": NaN, "big": Infinity, "small": -Infinity}')
        client.send_raw(raw.encode() + b"\n")
        end = await client.wait_for_type("tool_execution_end", since=start)
        await client.wait_for_type("agent_end", since=start)
    assert end["result"]["details"] == {"ratio": None, "big": None, "small": None}


async def test_a_non_string_id_is_echoed_and_a_null_type_is_an_unknown_command_named_null(
    workspace: Workspace,
) -> None:
    """§3/§4.3 as the reference writes them: any id value is echoed; ``type:null`` keeps ``command:null``."""
    async with spawn(workspace, "--model", "fake/fake-model") as client:
        mark = client.mark()
        client.send_raw({"id": 7, "type": "set_steering_mode", "mode": "all"})
        client.send_raw({"id": "q", "type": None})
        await client.get_state()
    answers = [f for f in client.frames[mark:] if f["type"] == "response"][:2]
    assert answers == [
        {"id": 7, "type": "response", "command": "set_steering_mode", "success": True},
        {"type": "response", "command": None, "success": False, "error": "Unknown command: null"},
    ]


QUIT = """
def setup(xcsh):
    def quit(args, ctx):
        ctx.shutdown()
        ctx.ui.notify("quitting")

    xcsh.register_command("quit", quit)
"""


async def test_an_extension_shutdown_is_honoured_after_an_unknown_command_response(
    workspace: Workspace, tmp_path: Path
) -> None:
    """§2.5: the shutdown follows the next command response, whatever the command was."""
    ext = extension(tmp_path, "quit", QUIT)
    async with spawn(workspace, "--model", "fake/fake-model", "-e", str(ext)) as client:
        mark = client.mark()
        await client.prompt("/quit")
        await client.wait_for(lambda f: f.get("message") == "quitting", since=mark)
        client.send_raw({"type": "no_such_command"})
        async with asyncio.timeout(5):
            code = await client.process.wait()
    assert code == 0


async def test_a_host_that_stops_reading_can_still_write_all_its_commands(workspace: Workspace) -> None:
    """§1: the server keeps draining stdin while its stdout is full, so host and server never
    block each other; once the host reads again, every answer arrives, in order."""
    count = 400
    padding = "x" * 4096  # unknown fields are ignored; they make the input outgrow the pipe
    lines = b"".join(
        encode_frame({"id": f"s{i}", "type": "get_state", "padding": padding}) for i in range(count)
    )
    process = await spawn_rpc(workspace.proj, workspace.env, "--model", "fake/fake-model", *PLAIN)
    assert process.stdin is not None and process.stdout is not None
    try:
        async with asyncio.timeout(5):
            # nothing is read from stdout yet: its pipe fills after a few dozen answers
            process.stdin.write(lines)
            await process.stdin.drain()
            process.stdin.close()
            ids = [json.loads(line).get("id") async for line in process.stdout]
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert len(lines) > 1 << 20
    assert ids == [None, *(f"s{i}" for i in range(count))]  # the ready frame, then every answer
    assert code == 0


async def test_bash_during_a_run_is_held_back_without_events_until_the_next_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """§5.8/agent-behaviour §10.2: a user bash result is deferred while a run is active; no events."""
    gate = script.Gate()
    fake_llm.script(script.hold("busy", gate), script.text("seen it"))
    async with spawn(workspace, "--model", "fake/fake-model") as client:
        mark = client.mark()
        await client.prompt("work")
        await client.wait_for_type("message_update", since=mark)
        before = client.mark()
        result = await client.bash("echo during-run")
        quiet = [f for f in client.frames[before:] if f["type"] not in ("response", "message_update")]
        gate.release()
        await client.wait_for_idle(since=mark)
        held = [m["role"] for m in await client.get_messages()]
        frames = await client.prompt_and_wait("and now?")
        after = [m["role"] for m in await client.get_messages()]
    assert result["output"] == "during-run\n" and result["exitCode"] == 0
    assert quiet == [] and "bashExecution" not in held
    assert not any(f["type"] == "message_start" and f["message"]["role"] == "bashExecution" for f in frames)
    # flushed at the start of the next prompt: after the earlier answer, before the new user message
    assert after[len(held) :] == ["bashExecution", "user", "assistant"]
    sent = fake_llm.requests[1].json["messages"]
    assert any("Ran `echo during-run`" in str(m.get("content")) for m in sent if m["role"] == "user")


def _header(path: str) -> Any:
    return json.loads(Path(path).read_text().splitlines()[0])


async def test_empty_parent_session_is_absent_and_switching_drops_queued_messages(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """§5.1: ``parentSession: ""`` is treated as absent; §5.9: switch_session clears the queues."""
    fake_llm.script(script.text("a1"), script.text("a2"), script.text("a3"))
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("first")
        first = (await client.get_state())["sessionFile"]
        await client.new_session(parent_session="")
        await client.prompt_and_wait("second")
        second = (await client.get_state())["sessionFile"]
        await client.steer("stale steer")
        await client.follow_up("stale follow-up")
        switched = await client.switch_session(first)
        queued = (await client.get_state())["queuedMessageCount"]
        frames = await client.prompt_and_wait("third")
    assert "parentSession" not in _header(second)
    assert switched == {"cancelled": False} and queued == 0
    users = [f["message"]["content"] for f in frames if f["type"] == "message_start"]
    assert users == [[{"type": "text", "text": "third"}], []]  # the user prompt, then the reply's start


async def test_images_of_a_prompt_queued_while_busy_stay_with_its_text(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """§5.1: a busy prompt with streamingBehavior is queued as steer/follow-up with its images."""
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    gate = script.Gate()
    fake_llm.script(script.hold("busy", gate), script.text("steered"), script.text("followed"))
    async with spawn(workspace, "--model", "fake/fake-model") as client:
        mark = client.mark()
        await client.prompt("work")
        await client.wait_for_type("message_update", since=mark)
        await client.prompt("look", images=[image], streaming_behavior="steer")
        await client.prompt("later", images=[image], streaming_behavior="followUp")
        gate.release()
        frames = await client.wait_for_idle(since=mark)
    users = [
        f["message"]["content"]
        for f in frames
        if f["type"] == "message_start" and f["message"]["role"] == "user"
    ]
    assert users[1:] == [
        [{"type": "text", "text": "look"}, image],
        [{"type": "text", "text": "later"}, image],
    ]


ODD_VALUES = """
from pathlib import Path


def setup(xcsh):
    async def where(args, call):
        call.update({"content": [{"type": "text", "text": "looking"}], "details": {"at": Path("/srv")}})
        return {"content": [{"type": "text", "text": "here"}], "details": {"path": Path("/tmp"), "tags": {"a"}}}

    def note(args, ctx):
        xcsh.send_message("note", "remember", details={"where": Path("/srv")})
        ctx.ui.notify("noted")

    xcsh.register_tool("where", "Where am I.", {"type": "object", "properties": {}}, where)
    xcsh.register_command("note", note)
"""


async def test_python_values_from_an_extension_reach_the_wire_as_plain_json(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """§6/§8: an extension's tool details or message details holding non-JSON Python values (a
    Path, a set) are sent as strings instead of breaking the run or the frame stream."""
    ext = extension(tmp_path, "odd_values", ODD_VALUES)
    fake_llm.script(script.tool_calls(("c1", "where", {})), script.text("done"))
    async with spawn(workspace, "--model", "fake/fake-model", "-e", str(ext)) as client:
        frames = await client.prompt_and_wait("where?", timeout=5)
        mark = client.mark()
        await client.prompt("/note")
        await client.wait_for(lambda f: f.get("message") == "noted", since=mark)
        messages = await client.get_messages()
    update = next(f for f in frames if f["type"] == "tool_execution_update")
    end = next(f for f in frames if f["type"] == "tool_execution_end")
    assert update["partialResult"]["details"] == {"at": "/srv"}
    assert end["isError"] is False and end["result"]["details"] == {"path": "/tmp", "tags": ["a"]}
    assert frames[-1]["type"] == "agent_end" and frames[-1]["messages"][-1]["stopReason"] == "stop"
    assert messages[-1]["role"] == "custom" and messages[-1]["details"] == {"where": "/srv"}
