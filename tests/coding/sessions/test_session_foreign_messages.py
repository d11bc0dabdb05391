"""Message entries another program wrote (or a hand edit left) that the agent cannot use are
skipped on load; assistant metadata that only describes a message is completed in memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from xcsh.ai.types import zero_usage
from xcsh.coding.sessions.store import SessionStore

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-07-02T18:38:56.123Z", "cwd": "/"}
GOOD_USER = {"role": "user", "content": "hi", "timestamp": 1}
GOOD_ASSISTANT = {
    "role": "assistant",
    "content": [{"type": "text", "text": "ok"}],
    "api": "openai-completions",
    "provider": "p",
    "model": "m",
    "usage": {**zero_usage(), "input": 3},
    "stopReason": "stop",
    "timestamp": 5,
}


def _open(tmp_path: Path, *messages: Any) -> SessionStore:
    lines = [json.dumps(HEADER)]
    for n, message in enumerate(messages):
        entry = {"type": "message", "id": f"e{n}", "parentId": f"e{n - 1}" if n else None, "timestamp": "t"}
        lines.append(json.dumps({**entry, "message": message}))
    path = tmp_path / "foreign.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return SessionStore.open(path, cwd_for_new=tmp_path)


@pytest.mark.parametrize(
    "message",
    [
        5,
        {"content": "no role"},
        {"role": "user", "content": 5},
        {"role": "user", "content": [{"text": "no type"}]},
        {"role": "user", "content": [{"type": "image", "data": "x"}]},  # no mimeType
        {"role": "assistant", "content": "text", "stopReason": "stop"},
        {"role": "assistant", "content": [], "timestamp": 1},  # no stopReason
        {"role": "assistant", "content": [{"type": "thinking"}], "stopReason": "stop"},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "name": "bash", "arguments": {}}],
            "stopReason": "toolUse",
        },
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "t", "name": "bash", "arguments": "{}"}],
            "stopReason": "toolUse",
        },
        {"role": "toolResult", "content": []},
    ],
)
def test_a_message_the_agent_cannot_use_is_skipped_and_the_rest_is_kept(tmp_path: Path, message: Any) -> None:
    store = _open(tmp_path, {"role": "user", "content": "hi", "timestamp": 1}, message, GOOD_ASSISTANT)
    try:
        assert [e["id"] for e in store.entries] == ["e0", "e2"]
    finally:
        store.close()


def test_assistant_metadata_that_only_describes_the_message_is_completed(tmp_path: Path) -> None:
    bare = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}
    partial_usage = {**bare, "usage": {"input": 7, "cost": {"total": 0.5}}}
    store = _open(tmp_path, GOOD_ASSISTANT, bare, partial_usage)
    try:
        good, completed, partial = (e["message"] for e in store.entries)
    finally:
        store.close()
    assert good == GOOD_ASSISTANT  # a whole message is read as it is
    assert (completed["api"], completed["provider"], completed["model"]) == ("", "", "")
    assert completed["usage"] == zero_usage() and completed["timestamp"] == 0
    assert partial["usage"]["input"] == 7 and partial["usage"]["output"] == 0
    assert partial["usage"]["cost"] == {**zero_usage()["cost"], "total": 0.5}


@pytest.mark.parametrize(
    "last", [b"{not json", b"[]", b'{"type":"message","x":' + b"[" * 3000 + b"]" * 3000 + b"}"]
)
def test_a_complete_last_line_no_parser_reads_stays_and_only_an_unterminated_tail_is_cut(
    tmp_path: Path, last: bytes
) -> None:
    # a complete line is not a torn write: cut, it was lost for a reader that can read it (a line
    # nested deeper than our parsers follow is valid JSON)
    good = json.dumps(
        {"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": GOOD_USER}
    )
    path = tmp_path / "s.jsonl"
    body = json.dumps(HEADER).encode() + b"\n" + good.encode() + b"\n" + last + b"\n"
    path.write_bytes(body + b'{"type":"mess')  # and a torn tail after it
    store = SessionStore.open(path, cwd_for_new=tmp_path)
    try:
        assert [e["id"] for e in store.entries] == ["a"]
        store.append_message({"role": "user", "content": "after", "timestamp": 2})
    finally:
        store.close()
    data = path.read_bytes()
    assert data.startswith(body)  # the complete lines kept byte for byte, the torn tail gone
    assert json.loads(data[len(body) :].decode())["message"]["content"] == "after"
