"""Over the real RPC process: the writing tools never destroy a file (review 3 items 1, 3, 4, 6)."""

from __future__ import annotations

from conftest import Workspace
from xcsh.coding.tools.hashline import anchor
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _tool_texts(fake_llm: FakeLLM, request: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[request].json["messages"] if m["role"] == "tool"]


async def test_surrogates_foreign_bytes_moves_and_mixed_endings_leave_files_whole(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    proj = workspace.proj
    (proj / "keep.txt").write_text("precious line\n" * 160)
    (proj / "lat.py").write_bytes(b"# caf\xe9 cr\xe8me\nx = 2\n")
    (proj / "src.txt").write_text("source\n")
    (proj / "dst.txt").write_text("precious\n")
    (proj / "mixed.txt").write_bytes(b"a\nb\r\nc\n")
    x2, a1 = anchor(2, "x = 2"), anchor(1, "a")
    fake_llm.script(
        # json.dumps writes the lone surrogate as the escape "\ud83d", as a model's JSON may
        script.tool_calls(("w1", "write", {"path": "keep.txt", "content": "new text \ud83d end\n"})),
        script.tool_calls(
            (
                "e1",
                "edit",
                {
                    "edits": [
                        {"path": "lat.py", "loc": {"range": {"pos": x2, "end": x2}}, "content": ["x = 3"]}
                    ]
                },
            )
        ),
        script.tool_calls(("e2", "edit", {"edits": [{"path": "src.txt", "move": "dst.txt"}]})),
        script.tool_calls(
            (
                "e3",
                "edit",
                {
                    "edits": [
                        {"path": "mixed.txt", "loc": {"range": {"pos": a1, "end": a1}}, "content": ["A"]}
                    ]
                },
            )
        ),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "read,write,edit"]
    async with RpcClient.spawn(args=args, cwd=proj, env=workspace.env) as client:
        await client.prompt_and_wait("work on the files")
    assert (
        "content contains an unpaired surrogate (U+D83D) at line 1, column 10" in _tool_texts(fake_llm, 1)[-1]
    )
    assert (proj / "keep.txt").read_text() == "precious line\n" * 160
    assert (proj / "lat.py").read_bytes() == b"# caf\xe9 cr\xe8me\nx = 3\n"
    assert "dst.txt already exists; move never replaces a file" in _tool_texts(fake_llm, 3)[-1]
    assert (proj / "dst.txt").read_text() == "precious\n" and (proj / "src.txt").read_text() == "source\n"
    assert (proj / "mixed.txt").read_bytes() == b"A\nb\r\nc\n"
    assert not [p.name for p in proj.iterdir() if "xcsh-tmp" in p.name]
