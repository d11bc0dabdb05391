"""A session file edited by hand, one field of one entry wrong: the session still opens, every
answer about it stays on the protocol's schema, and the next prompt reaches the model.

Found by fuzzing every field of every entry type (docs/testing.md, "Round 3"). Each row broke
something before: the switch failed with a bare Python error (``Failed to parse command: 'int'
object is not iterable``), the prompt failed with a traceback, or a ``get_*`` answer carried a
value the schema does not allow (a number as the session name, a tree node whose ``type`` or
``parentId`` is not a string, ``true`` as a token count).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.rpc.schema import FrameChecker
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

USAGE = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def entries(cwd: Path) -> list[dict[str, Any]]:
    """A small, valid session: header, a model, a question and its answer, a label, a TTSR entry,
    a custom message, a branch summary and a compaction."""
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a1"}],
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": 2,
    }
    body: list[dict[str, Any]] = [
        {"type": "model_change", "model": "fake/fake-model"},
        {"type": "message", "message": {"role": "user", "content": "q1", "timestamp": 1}},
        {"type": "message", "message": answer},
        {"type": "label", "targetId": "e2", "label": "here"},
        {"type": "ttsr_injection", "injectedRules": ["r1"]},
        {
            "type": "custom_message",
            "customType": "note",
            "content": "remember",
            "display": True,
            "attribution": "agent",
        },
        {"type": "branch_summary", "fromId": "root", "summary": "went elsewhere"},
        {
            "type": "compaction",
            "summary": "S",
            "shortSummary": "s",
            "firstKeptEntryId": "e2",
            "tokensBefore": 12,
        },
    ]
    for n, entry in enumerate(body, start=1):
        entry.update(
            id=f"e{n}", parentId=f"e{n - 1}" if n > 1 else None, timestamp="2026-01-01T00:00:00.000Z"
        )
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(cwd),
    }
    return [header, *body]


# (what is wrong, entry index, path of the field, the wrong value)
ROWS: list[tuple[str, int, tuple[Any, ...], Any]] = [
    ("TTSR rules that are a number", 5, ("injectedRules",), 7),
    ("a label whose target is an array", 4, ("targetId",), []),
    ("a user message whose timestamp is text", 2, ("message", "timestamp"), "x"),
    ("a user message whose timestamp is an object", 2, ("message", "timestamp"), {"k": 1}),
    ("a session name that is a number", 0, ("title",), 7),
    ("an entry whose type is a number", 4, ("type",), 7),
    ("an entry whose parent is a number", 5, ("parentId",), 7),
    ("a token count that is true", 3, ("message", "usage", "input"), True),
    ("a custom message whose type is a number", 6, ("customType",), 7),
    ("a custom message whose display is text", 6, ("display",), "x"),
    ("a custom message attributed to a number", 6, ("attribution",), 7),
    ("a branch summary that is a number", 7, ("summary",), 7),
    ("a branch summary from an object", 7, ("fromId",), {"k": 1}),
    ("a compaction summary that is null", 8, ("summary",), None),
    ("a compaction short summary that is an array", 8, ("shortSummary",), []),
    ("a compaction token count that is text", 8, ("tokensBefore",), "x"),
]


@pytest.fixture
def checker() -> FrameChecker:
    return FrameChecker()


async def test_each_wrong_field_still_opens_answers_on_schema_and_prompts(
    workspace: Workspace, fake_llm: FakeLLM, checker: FrameChecker
) -> None:
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    failures: list[str] = []
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        for n, (name, index, path, value) in enumerate(ROWS):
            lines = entries(workspace.proj)
            target = lines[index]
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = value
            session = workspace.sess / f"edited{n}.jsonl"
            session.write_text("".join(json.dumps(line) + "\n" for line in lines))
            switched = await client.request({"type": "switch_session", "sessionPath": str(session)})
            if not switched["success"]:
                failures.append(f"{name}: switch_session: {switched.get('error')}")
                continue
            for command in ("get_state", "get_messages", "get_tree", "get_session_stats"):
                answer = await client.request({"type": command})
                problems = checker.violations(answer) if answer["success"] else [answer.get("error")]
                failures.extend(f"{name}: {command}: {problem}" for problem in problems)
            fake_llm.script(script.text(f"answer {n}"))
            frames = await client.prompt_and_wait("again?", timeout=30)
            last = next(f for f in frames if f["type"] == "agent_end")["messages"][-1]
            if last.get("stopReason") != "stop":
                failures.append(f"{name}: prompt ended {last.get('stopReason')}: {last.get('errorMessage')}")
        tail = client.stderr_tail
    assert not failures, "\n".join(failures)
    assert "Traceback" not in tail
