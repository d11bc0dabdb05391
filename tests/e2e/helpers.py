"""Small helpers shared by the end-to-end scenario tests."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import BASE_ARGS, Workspace
from xcsh.coding.sessions.entries import new_header, serialize_entry
from xcsh.rpc.client import RpcClient

Frame = dict[str, Any]

# the fields every model of get_available_models / get_state carries
MODEL_KEYS = {
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
}

RUN_TYPES = (
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
)


def spawn_client(ws: Workspace, *extra: str, args: list[str] | None = None) -> Any:
    """An :class:`RpcClient` on the real process in ``ws``, run with ``args`` (default
    :data:`~conftest.BASE_ARGS`) and then ``extra``."""
    return RpcClient.spawn(args=[*(args if args is not None else BASE_ARGS), *extra], cwd=ws.proj, env=ws.env)


def run_xcsh(ws: Workspace, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m xcsh *args`` run to its end in ``ws`` (given ``stdin``; output captured as bytes;
    at most 60 s)."""
    return subprocess.run(
        [sys.executable, "-m", "xcsh", *args],
        cwd=ws.proj,
        env=ws.env,
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


def of_call(kind: str, call_id: str) -> Any:
    """A frame filter: frames of type ``kind`` about tool call ``call_id``."""
    return lambda f: f.get("type") == kind and f.get("toolCallId") == call_id


def kinds(frames: list[Frame], *, skip_updates: bool = True) -> list[str]:
    """Frame types in order, optionally without message_update frames."""
    return [f["type"] for f in frames if not (skip_updates and f["type"] == "message_update")]


def text_of(message: Frame) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def assert_run(frames: list[Frame], user: str, reply: str, api: str = "openai-completions") -> None:
    """The standard RUN(u, r) sequence of scenarios.md §0.3 (message_update frames checked separately)."""
    assert kinds(frames) == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ], kinds(frames)
    starts = [f for f in frames if f["type"] == "message_start"]
    assert starts[0]["message"]["role"] == "user" and text_of(starts[0]["message"]) == user
    assert starts[1]["message"]["role"] == "assistant" and starts[1]["message"]["content"] == []
    updates = [f["assistantMessageEvent"] for f in frames if f["type"] == "message_update"]
    assert updates[0]["type"] == "text_start" and updates[0]["contentIndex"] == 0
    assert updates[-1] == {**updates[-1], "type": "text_end", "contentIndex": 0, "content": reply}
    deltas = [u["delta"] for u in updates if u["type"] == "text_delta"]
    assert len(deltas) >= 1 and "".join(deltas) == reply
    end = [f for f in frames if f["type"] == "message_end"][-1]["message"]
    assert end["role"] == "assistant" and end["stopReason"] == "stop"
    assert end["content"] == [{"type": "text", "text": reply}]
    assert (end["provider"], end["model"], end["api"]) == ("fake", "fake-model", api)
    turn_end = next(f for f in frames if f["type"] == "turn_end")
    assert turn_end["message"]["role"] == "assistant" and turn_end["toolResults"] == []
    agent_end = frames[-1]
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant"]


def between(frames: list[Frame], start_type: str, end_type: str) -> list[Frame]:
    """Frames from the first ``start_type`` to the first following ``end_type`` (inclusive)."""
    start = next(i for i, f in enumerate(frames) if f["type"] == start_type)
    end = next(i for i in range(start, len(frames)) if frames[i]["type"] == end_type)
    return frames[start : end + 1]


def write_linear_session(path: Path, cwd: Path, messages: int, text: Callable[[int], str] = str) -> None:
    """A session file of ``messages`` alternating user/assistant messages on one branch, entry
    ids ``%08x`` of their index (the leaf is ``f"{messages - 1:08x}"``); ``text(i)`` is message i's text."""
    lines = [serialize_entry(new_header(str(cwd)))]
    parent = None
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        message: dict[str, Any] = {
            "role": role,
            "content": [{"type": "text", "text": text(i)}],
            "timestamp": i,
        }
        if role == "assistant":
            message.update({"api": "openai-completions", "provider": "fake", "model": "fake-model"})
            message["stopReason"] = "stop"
        entry = {
            "type": "message",
            "id": f"{i:08x}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
        }
        entry["message"] = message
        lines.append(serialize_entry(entry))
        parent = entry["id"]
    path.write_text("\n".join(lines) + "\n")


async def spawn_rpc(cwd: Path, env: dict[str, str], *args: str) -> asyncio.subprocess.Process:
    """The real ``xcsh --mode rpc *args`` with stdin and stdout piped (lines up to 16 MiB) and
    stderr dropped, for tests that write and read raw frames."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-P",
        "-m",
        "xcsh",
        "--mode",
        "rpc",
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 24,
    )


async def spawn_on_session(session: Path, cwd: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    """:func:`spawn_rpc` on the fake model, without tools, resuming ``session``."""
    return await spawn_rpc(cwd, env, "--model", "fake/fake-model", "--no-tools", "--session", str(session))
