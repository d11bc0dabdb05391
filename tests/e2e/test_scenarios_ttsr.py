"""Scenario S56 (TTSR) and its variants against the real process: interrupt, inject, continue, repeat policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import BASE_ARGS, Workspace
from e2e.helpers import kinds, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]
RULE = '---\ncondition: "FORBIDDEN"\n---\nNever write the forbidden word.\n'


def write_rule(ws: Workspace, text: str = RULE, name: str = "no-forbidden.md") -> Path:
    rules = ws.proj / ".xcsh" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    path = rules / name
    path.write_text(text)
    return path


def spawn(ws: Workspace, *extra: str, args: list[str] | None = None) -> Any:
    return RpcClient.spawn(args=[*(args if args is not None else BASE_ARGS), *extra], cwd=ws.proj, env=ws.env)


def runs(frames: list[Frame]) -> list[list[Frame]]:
    """Frames split into agent_start … agent_end runs."""
    out: list[list[Frame]] = []
    for frame in frames:
        if frame["type"] == "agent_start":
            out.append([])
        if out:
            out[-1].append(frame)
    return out


def user_texts(request: Any) -> str:
    return json.dumps([m for m in request.json["messages"] if m["role"] == "user"])


async def test_s56_rule_interrupts_the_stream_and_is_injected_before_continuing(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    rule_path = write_rule(workspace)
    fake_llm.script(
        script.text("this is FORBIDDEN text", chunks=["this is FOR", "BIDDEN text"]),
        script.text("clean text"),
        script.text("FORBIDDEN again"),
    )
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("write?")
        messages = await client.get_messages()
        second = await client.prompt_and_wait("again?")
    completing = next(
        i
        for i, f in enumerate(frames)
        if f["type"] == "message_update" and f["assistantMessageEvent"].get("delta") == "BIDDEN text"
    )
    triggered = [i for i, f in enumerate(frames) if f["type"] == "ttsr_triggered"]
    first_end = next(i for i, f in enumerate(frames) if f["type"] == "agent_end")
    assert len(triggered) == 1 and completing < triggered[0] < first_end
    assert frames[triggered[0]]["rules"] == [
        {
            "name": "no-forbidden",
            "path": str(rule_path.resolve()),
            "content": "Never write the forbidden word.",
            "alwaysApply": False,
            "condition": ["FORBIDDEN"],
            "_source": {
                "provider": "native",
                "providerName": "xcsh",
                "path": str(rule_path.resolve()),
                "level": "project",
            },
        }
    ]
    first, resumed = runs(frames)
    assert kinds([f for f in first if f["type"] != "ttsr_triggered"])[-3:] == [
        "message_end",
        "turn_end",
        "agent_end",
    ]
    aborted = [f for f in first if f["type"] == "message_end"][-1]["message"]
    assert aborted["role"] == "assistant" and aborted["stopReason"] == "aborted"
    assert kinds(resumed) == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert text_of(next(f for f in resumed if f["type"] == "message_end")["message"]) == "clean text"
    assert [m["role"] for m in messages] == ["user", "custom", "assistant"]
    injection = messages[1]
    assert {k: injection[k] for k in ("customType", "display", "details")} == {
        "customType": "ttsr-injection",
        "display": False,
        "details": {"rules": ["no-forbidden"]},
    }
    assert injection["content"].startswith(
        f'<system-interrupt reason="rule_violation" rule="no-forbidden" path="{rule_path.resolve()}">'
    )
    assert "Never write the forbidden word." in injection["content"]
    request = user_texts(fake_llm.requests[1])
    assert '<system-interrupt reason=\\"rule_violation\\" rule=\\"no-forbidden\\"' in request
    assert "this is FOR" not in json.dumps(fake_llm.requests[1].json["messages"])
    # repeatMode once: the same rule does not fire again in this session
    assert not [f for f in second if f["type"] == "ttsr_triggered"]
    assert [f for f in second if f["type"] == "message_end"][-1]["message"]["stopReason"] == "stop"


async def test_injection_is_persisted_and_restored_so_a_resumed_session_does_not_fire_again(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    write_rule(workspace)
    fake_llm.script(
        script.text("x", chunks=["this is FOR", "BIDDEN text"]),
        script.text("clean text"),
        script.text("FORBIDDEN once more"),
    )
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with spawn(workspace, args=args) as client:
        await client.prompt_and_wait("write?")
        session_file = (await client.get_state())["sessionFile"]
    entries = [json.loads(line) for line in Path(session_file).read_text().splitlines()]
    types = [e["type"] for e in entries]
    custom = types.index("custom_message")
    assert types[custom + 1] == "ttsr_injection"
    assert entries[custom]["customType"] == "ttsr-injection" and entries[custom]["display"] is False
    assert entries[custom + 1]["injectedRules"] == ["no-forbidden"]
    aborted = [e for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "aborted"]
    assert len(aborted) == 1  # the aborted message stays in the file
    async with spawn(workspace, "--session", session_file, args=args) as client:
        frames = await client.prompt_and_wait("again?")
    assert not [f for f in frames if f["type"] == "ttsr_triggered"]


async def test_no_rules_flag_disables_ttsr(workspace: Workspace, fake_llm: FakeLLM) -> None:
    write_rule(workspace)
    fake_llm.script(script.text("x", chunks=["this is FOR", "BIDDEN text"]))
    async with spawn(workspace, "--no-rules") as client:
        frames = await client.prompt_and_wait("write?")
    assert not [f for f in frames if f["type"] == "ttsr_triggered"]
    assert [f for f in frames if f["type"] == "message_end"][-1]["message"]["stopReason"] == "stop"


async def test_never_interrupting_rule_is_injected_as_a_follow_up_after_the_message(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    write_rule(workspace, '---\ncondition: "FORBIDDEN"\ninterruptMode: never\n---\nSay it differently.\n')
    fake_llm.script(script.text("FORBIDDEN word here"), script.text("fixed"))
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("write?")
        messages = await client.get_messages()
    assert not [f for f in frames if f["type"] == "ttsr_triggered"]
    assert len(runs(frames)) == 1
    ends = [f["message"] for f in frames if f["type"] == "message_end"]
    assert [m["role"] for m in ends] == ["user", "assistant", "custom", "assistant"]
    assert ends[1]["stopReason"] == "stop" and ends[2]["customType"] == "ttsr-injection"
    assert [m["role"] for m in messages] == ["user", "assistant", "custom", "assistant"]
    assert '<system-interrupt reason=\\"rule_violation\\"' in user_texts(fake_llm.requests[1])


async def test_glob_condition_interrupts_a_write_tool_call_before_it_runs(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    write_rule(workspace, "---\ncondition: '*.env'\n---\nNever write .env files.\n", name="no-env.md")
    fake_llm.script(
        script.tool_calls(("c1", "write", {"path": "secrets.env", "content": "TOKEN=1"})),
        script.text("understood"),
    )
    args = ["--model", "fake/fake-model", "--tools", "write", "--no-session"]
    async with spawn(workspace, args=args) as client:
        frames = await client.prompt_and_wait("store the token")
    triggered = [f for f in frames if f["type"] == "ttsr_triggered"]
    assert [r["name"] for r in triggered[0]["rules"]] == ["no-env"]
    assert triggered[0]["rules"][0]["condition"] == [".*"]
    assert triggered[0]["rules"][0]["scope"] == ["tool:edit(*.env)", "tool:write(*.env)"]
    assert not (workspace.proj / "secrets.env").exists()
    first = runs(frames)[0]
    ends = [f["message"] for f in first if f["type"] == "message_end"]
    assert [m["role"] for m in ends] == ["user", "assistant", "toolResult"]
    assert ends[1]["stopReason"] == "aborted" and ends[2]["isError"] is True
    assert text_of([f for f in frames if f["type"] == "message_end"][-1]["message"]) == "understood"
