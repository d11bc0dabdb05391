"""Commands hosts asked for beyond the reference (docs/host-commands.md), against the real process."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import BASE_ARGS, Workspace, tool_defs, user_texts
from xcsh.rpc.client import RpcClient, RpcError
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

EXTENSION = """
def hello(args, ctx):
    ctx.ui.notify("hi " + args)


def setup(xcsh):
    xcsh.register_command("hello", hello, "say hello")
"""


def spawn(ws: Workspace, *args: str, base: list[str] | None = None) -> Any:
    return RpcClient.spawn(args=[*(BASE_ARGS if base is None else base), *args], cwd=ws.proj, env=ws.env)


async def test_get_commands_lists_extension_and_file_commands_templates_and_skills(
    workspace: Workspace, tmp_path: Path
) -> None:
    proj = workspace.proj / ".xcsh"
    (proj / "commands").mkdir(parents=True)
    (proj / "commands" / "review.md").write_text(
        "---\ndescription: Review the diff\nargument-hint: <branch>\n---\nReview $1\n"
    )
    (proj / "prompts").mkdir()
    (proj / "prompts" / "explain.md").write_text("Explain the code in plain words.\nMore.\n")
    (proj / "skills" / "deploy").mkdir(parents=True)
    (proj / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship it\n---\nSteps\n"
    )
    ext = tmp_path / "hello_ext.py"
    ext.write_text(EXTENSION)
    workspace.env["HOME"] = str(tmp_path / "home")
    async with spawn(workspace, "--extension", str(ext)) as client:
        commands = await client.get_commands()
    by_name = {c["name"]: c for c in commands}
    assert by_name["hello"] == {**by_name["hello"], "description": "say hello", "source": "extension"}
    assert by_name["review"] == {
        **by_name["review"],
        "description": "Review the diff",
        "source": "prompt",
        "location": "project",
        "argumentHint": "<branch>",
    }
    assert by_name["explain"]["source"] == "prompt"
    assert by_name["explain"]["description"] == "Explain the code in plain words."
    assert by_name["skill:deploy"] == {**by_name["skill:deploy"], "description": "Ship it", "source": "skill"}


async def test_clear_queue_returns_and_drops_queued_messages(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.hold("Working"))
    async with spawn(workspace) as client:
        mark = client.mark()
        await client.prompt("long?")
        await client.wait_for_type("message_update", since=mark)
        await client.steer("also this")
        await client.follow_up("and later that")
        assert (await client.get_state())["queuedMessageCount"] == 2
        dropped = await client.clear_queue()
        state = await client.get_state()
        await client.abort()
        again = await client.clear_queue()
    assert dropped == {"steering": ["also this"], "followUp": ["and later that"]}
    assert state["queuedMessageCount"] == 0
    assert again == {"steering": [], "followUp": []}


async def test_list_sessions_is_newest_first_with_name_first_message_and_counts(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("one"), script.text("two"), script.text("three"))
    base = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    async with spawn(workspace, base=base) as client:
        await client.prompt_and_wait("first session?")
        await client.set_session_name("Alpha")
        first_file = (await client.get_state())["sessionFile"]
        await client.new_session()
        await client.prompt_and_wait("second session?")
        await client.prompt_and_wait("more?")
        second_file = (await client.get_state())["sessionFile"]
        sessions = await client.list_sessions()
        everything = await client.list_sessions("all")
        with pytest.raises(RpcError, match="Invalid scope"):
            await client.list_sessions("galaxy")
    assert [s["path"] for s in sessions] == [second_file, first_file]
    newest, oldest = sessions
    assert newest["firstMessage"] == "second session?" and newest["messageCount"] == 4
    assert newest["current"] is True and "name" not in newest
    assert oldest["name"] == "Alpha" and oldest["messageCount"] == 2 and oldest["current"] is False
    assert newest["modified"] >= oldest["modified"] and newest["modified"].endswith("Z")
    assert [s["path"] for s in everything] == [second_file, first_file]


async def test_get_tree_shows_the_entry_tree_with_the_leaf_and_the_path_to_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("a1"), script.text("a2"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("q1?")
        await client.prompt_and_wait("q2?")
        tree = await client.get_tree()
    (root,) = tree["tree"]
    chain = [root]
    while chain[-1]["children"]:
        (child,) = chain[-1]["children"]
        chain.append(child)
    messages = [(n["role"], n.get("preview")) for n in chain if n["type"] == "message"]
    assert messages == [("user", "q1?"), ("assistant", "a1"), ("user", "q2?"), ("assistant", "a2")]
    assert tree["leafId"] == chain[-1]["id"]
    assert tree["path"] == [n["id"] for n in chain]
    assert all(n["parentId"] == p["id"] for p, n in itertools.pairwise(chain))


def tree_ids(nodes: list[dict[str, Any]]) -> list[str]:
    return [i for n in nodes for i in [n["id"], *tree_ids(n["children"])]]


async def test_get_tree_keeps_self_parented_and_orphaned_entries_as_roots_and_folds_labels(
    workspace: Workspace, tmp_path: Path
) -> None:
    def entry(entry_id: str, parent: Any, role: str, text: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
        if role == "assistant":
            message.update({"api": "openai-completions", "provider": "fake", "model": "fake-model"})
            message["stopReason"] = "stop"
        stamp = "2026-01-01T00:00:00.000Z"
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}

    header = {"type": "session", "version": 3, "id": "tree", "timestamp": "2026-01-01T00:00:00.000Z"}
    lines = [
        {**header, "cwd": str(workspace.proj)},
        entry("a", "a", "user", "self parent"),
        entry("b", "a", "assistant", "under a"),
        {
            "type": "label",
            "id": "l",
            "parentId": "b",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "targetId": "b",
        },
        entry("c", "l", "user", "after a label"),
        entry("d", "zzz", "assistant", "orphan"),
        entry("e", "d", "user", "leaf"),
    ]
    session = tmp_path / "tree.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    async with spawn(
        workspace, "--session", str(session), base=["--model", "fake/fake-model", "--no-tools"]
    ) as client:
        tree = await client.get_tree()
    assert [root["id"] for root in tree["tree"]] == ["a", "d"]
    assert sorted(tree_ids(tree["tree"])) == ["a", "b", "c", "d", "e"]
    assert [n["id"] for n in tree["tree"][0]["children"][0]["children"]] == ["c"]
    assert tree["leafId"] == "e" and set(tree["path"]) <= set(tree_ids(tree["tree"]))


def tree_nodes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for n in nodes for m in [n, *tree_nodes(n["children"])]]


async def test_get_tree_names_only_nodes_of_the_tree_when_the_leaf_and_parents_are_label_entries(
    workspace: Workspace, tmp_path: Path
) -> None:
    stamp = "2026-01-01T00:00:00.000Z"

    def message(entry_id: str, parent: str, role: str) -> dict[str, Any]:
        body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": entry_id}], "timestamp": 1}
        if role == "assistant":
            body.update({"api": "openai-completions", "provider": "fake", "model": "fake-model"})
            body["stopReason"] = "stop"
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": body}

    def label(entry_id: str, parent: str, target: str, text: str | None) -> dict[str, Any]:
        entry = {"type": "label", "id": entry_id, "parentId": parent, "timestamp": stamp, "targetId": target}
        return {**entry, "label": text} if text is not None else entry

    model = {"type": "model_change", "id": "m0", "parentId": None, "timestamp": stamp}
    lines = [
        {"type": "session", "version": 3, "id": "labels", "timestamp": stamp, "cwd": str(workspace.proj)},
        {**model, "provider": "fake", "modelId": "fake-model"},
        message("u1", "m0", "user"),
        message("a1", "u1", "assistant"),
        label("l1", "a1", "u1", "first"),
        label("l2", "l1", "a1", "second"),
        label("l3", "l2", "a1", None),
        message("u2", "l3", "user"),
        message("a2", "u2", "assistant"),
        label("l4", "a2", "u2", "third"),
    ]
    session = tmp_path / "labels.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    async with spawn(
        workspace, "--session", str(session), base=["--model", "fake/fake-model", "--no-tools"]
    ) as client:
        tree = await client.get_tree()
    nodes = {n["id"]: n for n in tree_nodes(tree["tree"])}
    assert sorted(nodes) == ["a1", "a2", "m0", "u1", "u2"]
    assert tree["leafId"] == "a2" and tree["path"] == ["m0", "u1", "a1", "u2", "a2"]
    assert nodes["u2"]["parentId"] == "a1"
    assert all(n["parentId"] is None or n["parentId"] in nodes for n in nodes.values())
    assert [(n["id"], n.get("label")) for n in nodes.values() if "label" in n] == [
        ("u1", "first"),
        ("u2", "third"),
    ]


async def test_set_active_tools_switches_tools_for_the_next_model_call(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("one"), script.text("two"))
    async with spawn(workspace, base=["--model", "fake/fake-model", "--no-session"]) as client:
        tools = await client.get_tools()
        assert await client.set_active_tools(["read", "grep"]) == ["read", "grep"]
        await client.prompt_and_wait("first?")
        after = {t["name"]: t["active"] for t in await client.get_tools()}
        with pytest.raises(RpcError, match="Unknown tool"):
            await client.set_active_tools(["read", "teleport"])
        assert await client.set_active_tools([]) == []
        await client.prompt_and_wait("second?")
    by_name = {t["name"]: t for t in tools}
    assert by_name["bash"]["active"] is True and by_name["bash"]["source"] == "builtin"
    assert set(by_name["bash"]["parameters"]["properties"]) >= {"command"}
    assert [t["name"] for t in tool_defs(fake_llm.requests[0].json)] == ["read", "grep"]
    assert after["read"] is True and after["bash"] is False
    assert "tools" not in fake_llm.requests[1].json


async def test_no_todo_defaults_turns_off_the_eager_prelude_in_rpc_mode(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("ok"))
    async with spawn(workspace, "--no-todo-defaults") as client:
        frames = await client.prompt_and_wait("Implement the feature")
    roles = [f["message"]["role"] for f in frames if f["type"] == "message_start"]
    assert roles == ["user", "assistant"]
    assert user_texts(fake_llm.requests[0].json) == ["Implement the feature"]
    assert "tool_choice" not in fake_llm.requests[0].json


async def test_rpc_todo_defaults_setting_false_turns_off_the_prelude(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("rpc:\n  todoDefaults: false\n")
    fake_llm.script(script.text("ok"))
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("Implement the feature")
    assert [f["message"]["role"] for f in frames if f["type"] == "message_start"] == ["user", "assistant"]
