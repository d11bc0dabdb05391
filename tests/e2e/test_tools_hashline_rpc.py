"""Hashline editing behind the RPC process: the model reads anchors, edits by them, and sees stale ones refused."""

from __future__ import annotations

from conftest import Workspace
from xcsh.coding.tools.hashline import anchor
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _tool_texts(fake_llm: FakeLLM, request: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[request].json["messages"] if m["role"] == "tool"]


async def test_the_model_reads_anchors_edits_by_them_and_a_stale_anchor_shows_fresh_ones(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "app.py").write_text("def main():\n    return 1\n")
    body = anchor(2, "    return 1")
    fake_llm.script(
        script.tool_calls(("r1", "read", {"path": "app.py"})),
        script.tool_calls(
            (
                "e1",
                "edit",
                {
                    "edits": [
                        {
                            "path": "app.py",
                            "loc": {"range": {"pos": body, "end": body}},
                            "content": ["    return 2"],
                        }
                    ]
                },
            )
        ),
        # the same anchor again: line 2 has changed, so it is stale now
        script.tool_calls(
            (
                "e2",
                "edit",
                {
                    "edits": [
                        {
                            "path": "app.py",
                            "loc": {"range": {"pos": body, "end": body}},
                            "content": ["    return 3"],
                        }
                    ]
                },
            )
        ),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "read,edit"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("bump the return value")
    assert (workspace.proj / "app.py").read_text() == "def main():\n    return 2\n"
    read_text = _tool_texts(fake_llm, 1)[-1]
    assert read_text == f"{anchor(1, 'def main():')}:def main():\n{body}:    return 1"
    edited = _tool_texts(fake_llm, 2)[-1]
    fresh = anchor(2, "    return 2")
    assert edited.startswith("Updated app.py\nChanges: +1 -1") and f"+ {fresh}:    return 2" in edited
    stale = _tool_texts(fake_llm, 3)[-1]
    assert "changed since you read it; nothing was edited" in stale
    assert f">>> {fresh}:    return 2" in stale
    edit_schema = next(t for t in fake_llm.requests[0].json["tools"] if t["function"]["name"] == "edit")
    assert "loc" in edit_schema["function"]["parameters"]["properties"]["edits"]["items"]["properties"]


async def test_edit_mode_replace_in_settings_gives_the_replace_edit_and_plain_reads(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("edit:\n  mode: replace\n")
    (workspace.proj / "app.py").write_text("x = 1\n")
    fake_llm.script(
        script.tool_calls(("r1", "read", {"path": "app.py"})),
        script.tool_calls(
            ("e1", "edit", {"edits": [{"path": "app.py", "old_text": "x = 1", "new_text": "x = 2"}]})
        ),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "read,edit"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("change it")
    assert _tool_texts(fake_llm, 1)[-1] == "x = 1"
    assert (workspace.proj / "app.py").read_text() == "x = 2\n"
    assert "Edited app.py" in _tool_texts(fake_llm, 2)[-1]
