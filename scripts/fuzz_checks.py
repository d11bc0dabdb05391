"""Invariants `scripts/fuzz_rpc.py` checks after a run, beyond one answer per command.

- Every request the agent sent the model is one a real provider accepts as a conversation:
  each tool call is answered by exactly one tool result before the conversation goes on, and
  no tool result answers a call the request does not contain (OpenAI and Anthropic refuse
  such a request with a 400, so every later prompt of that session would fail).
- The event stream is balanced: every ``agent_start`` has its ``agent_end``, every
  ``message_start`` its ``message_end``, every ``tool_execution_start`` its end (per
  ``toolCallId``), with no end before its start.
- Host-tool and extension-dialog requests use fresh ids; ``host_tool_cancel`` names a call
  that was made and is sent at most once.
- No accepted prompt is lost: its words reach a session file (found by its header, whatever
  its name) or the model, unless a later command may have cleared it from a queue.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzz_proc import Proc

    from xcsh.testing.fake_llm import FakeLLM


def request_problems(wire: str, body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []
    if wire == "chat":
        return _chat(body.get("messages") or [])
    if wire == "anthropic":
        return _anthropic(body.get("messages") or [])
    if wire == "responses":
        return _responses(body.get("input") or [])
    return []


def _chat(messages: list[Any]) -> list[str]:
    problems: list[str] = []
    waiting: list[str] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            tid = m.get("tool_call_id")
            if tid in waiting:
                waiting.remove(tid)
            else:
                problems.append(f"chat message {i}: tool result {tid!r} answers no open tool call")
            continue
        if waiting:
            problems.append(f"chat message {i} ({role}) before the results of {waiting}")
            waiting = []
        if role == "assistant":
            waiting = [c.get("id") for c in m.get("tool_calls") or []]
    if waiting:
        problems.append(f"chat request ends with unanswered tool calls {waiting}")
    return problems


def _anthropic(messages: list[Any]) -> list[str]:
    problems: list[str] = []
    waiting: list[str] = []
    for i, m in enumerate(messages):
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        results = [
            b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if m.get("role") == "user":
            if sorted(map(str, results)) != sorted(map(str, waiting)):
                problems.append(f"anthropic message {i}: tool results {results} for tool uses {waiting}")
            waiting = []
        elif m.get("role") == "assistant":
            if waiting:
                problems.append(f"anthropic message {i}: assistant after unanswered tool uses {waiting}")
            waiting = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    if waiting:
        problems.append(f"anthropic request ends with unanswered tool uses {waiting}")
    return problems


def _responses(items: list[Any]) -> list[str]:
    problems: list[str] = []
    calls: list[str] = []
    answered: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            calls.append(item.get("call_id"))
        elif kind == "function_call_output":
            cid = item.get("call_id")
            if cid not in calls or cid in answered:
                problems.append(f"responses item {i}: output for {cid!r} answers no open call")
            answered.add(cid)
    missing = [c for c in calls if c not in answered]
    if missing:
        problems.append(f"responses request has calls without output {missing}")
    return problems


def event_problems(frames: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    depth = {"agent": 0, "message": 0}
    tools: set[str] = set()
    host_calls: set[str] = set()
    cancelled: set[str] = set()
    ui_ids: set[str] = set()
    for n, f in enumerate(frames):
        kind = f.get("type")
        for name in depth:
            if kind == f"{name}_start":
                depth[name] += 1
                if depth[name] > 1:
                    problems.append(f"frame {n}: {kind} inside an open {name}")
            elif kind == f"{name}_end":
                depth[name] -= 1
                if depth[name] < 0:
                    problems.append(f"frame {n}: {kind} without its start")
                    depth[name] = 0
        if kind == "tool_execution_start":
            tools.add(f.get("toolCallId"))
        elif kind == "tool_execution_end":
            if f.get("toolCallId") not in tools:
                problems.append(f"frame {n}: tool_execution_end of {f.get('toolCallId')!r} without its start")
            tools.discard(f.get("toolCallId"))
        elif kind == "host_tool_call":
            if f.get("id") in host_calls:
                problems.append(f"frame {n}: host_tool_call id {f.get('id')!r} reused")
            host_calls.add(f.get("id"))
        elif kind == "host_tool_cancel":
            target = f.get("targetId", f.get("id"))
            if target not in host_calls or target in cancelled:
                problems.append(f"frame {n}: host_tool_cancel of {target!r} (called: {target in host_calls})")
            cancelled.add(target)
        elif kind == "extension_ui_request" and "id" in f:
            if f["id"] in ui_ids:
                problems.append(f"frame {n}: extension_ui_request id {f['id']!r} reused")
            ui_ids.add(f["id"])
    if depth["agent"] or depth["message"]:
        problems.append(f"at exit: open runs/messages {depth}")
    if tools:
        problems.append(f"at exit: tool executions without end {sorted(tools)[:5]}")
    return problems


def session_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` that starts with a session header, whatever its name
    (``switch_session`` to a missing path creates the session there: ``x.html`` too)."""
    found = []
    for path in root.rglob("*"):
        if not path.is_file() or path.name == "frames.jsonl":
            continue
        with path.open("rb") as handle:
            head = handle.readline(1 << 16)
        if head.startswith(b'{"type":"session"') or head.startswith(b'{"type": "session"'):
            found.append(path)
    return found


QUEUE_CLEARING = {"new_session", "switch_session", "branch", "clear_queue", "abort", "abort_and_prompt"}


def lost_prompts(proc: Proc, responses: list[dict[str, Any]], root: Path, fake: FakeLLM) -> list[str]:
    """Accepted prompts whose words reached neither a session file nor the model."""
    kept = b"".join(p.read_bytes() for p in session_files(root))
    kept += b"".join(r.body for r in fake.requests)
    lost = []
    failed_late = {
        f.get("id") for f in responses if f.get("success") is False and isinstance(f.get("id"), str)
    }
    for f in responses:
        cid = f.get("id")
        if (
            f.get("command") in ("prompt", "abort_and_prompt")
            and f.get("success")
            and isinstance(cid, str)
            and cid in proc.marked
            and cid not in failed_late  # the host heard of it: "already processing" after the accept
            and f"#{cid}#".encode() not in kept
        ):
            later = {proc.types.get(i) for i in proc.after(cid, len(proc.order))}
            if later & QUEUE_CLEARING:
                continue  # it may have been queued (a follow-up of a continuation), then cleared
            after = [proc.types.get(i) for i in proc.after(cid, 6)]
            lost.append(f"accepted prompt {cid} lost (next commands: {after})")
    return lost
