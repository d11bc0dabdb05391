"""What `scripts/fuzz_rpc.py` sends: random model replies, commands and junk lines, all drawn from one seeded RNG.

The draws are the campaign's: a seed replays the same run, so the order and number of draws
of each function must stay as they are.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

from xcsh.testing import script as s

ROUND2 = os.environ.get("ROUND", "2") != "1"


def odd_reply(rng: random.Random) -> Any:
    """Round 2: replies that end oddly (length, an unknown finish reason, a stream held forever,
    7-character argument fragments, host-tool calls, arguments nested 900-3,000 levels deep)."""
    k = rng.randrange(8)
    if k == 7:  # arguments nested deeper than the JSON parsers follow
        depth = rng.choice([900, 1100, 3000])
        args = '{"command":"ls","x":' + '{"a":' * depth + "1" + "}" * depth + "}"
        return s.Reply(tool_calls=[s.ToolCallSpec(f"call_{rng.randrange(10**9)}", "bash", args, 500)])
    if k >= 5:  # host tools, several at once
        calls = [
            (f"call_{rng.randrange(10**9)}", "echo_host", {"message": "m"}) for _ in range(rng.randint(1, 3))
        ]
        return s.tool_calls(*calls)
    if k == 0:
        return s.text("truncated", stop="length")
    if k == 1:
        return s.text("filtered", stop=rng.choice(["content_filter", "refusal", "weird_reason"]))
    if k == 2:
        return s.Reply(text=["forever"], hold_forever=True)
    if k == 3:
        args = json.dumps({"command": "echo " + "z" * rng.randint(10, 4000)})
        return s.Reply(tool_calls=[s.ToolCallSpec(f"call_{rng.randrange(10**9)}", "bash", args, 7)])
    return s.Reply(text=[], stop="stop")


def random_reply(rng: random.Random, gates: list[s.Gate], host_tool: bool) -> Any:
    if ROUND2 and rng.random() < 0.12:
        return odd_reply(rng)
    k = rng.random()
    if k < 0.35:
        words = rng.choice(["hi", "ok " * rng.randint(1, 50), "\u2028x\u0000y", "é" * 600, "\ud7ff"])
        return s.text(words, delay_ms=rng.choice([0, 0, 5, 30]))
    if k < 0.5:
        calls = []
        for _ in range(rng.randint(1, 3)):
            tid = f"call_{rng.randrange(10**9)}"
            choice = rng.random()
            if choice < 0.3:
                calls.append(
                    (
                        tid,
                        "bash",
                        {"command": rng.choice(["echo hi", "true", "sleep 0.2", "printf '\\xff\\x00'"])},
                    )
                )
            elif choice < 0.5:
                calls.append((tid, "read", {"path": rng.choice(["a.txt", "missing.txt", "/etc/hostname"])}))
            elif choice < 0.6:
                calls.append((tid, "nonexistent_tool", {"x": 1}))
            elif choice < 0.7:
                calls.append((tid, "read", "{not json"))
            elif choice < 0.8 and host_tool:
                calls.append((tid, "echo_host", {"message": "hello"}))
            elif choice < 0.9:
                calls.append((tid, "bash", {"command": 12}))
            else:
                calls.append((tid, "todo_write", {"todos": "x"}))
        return s.tool_calls(*calls)
    if k < 0.58:
        g = s.Gate()
        gates.append(g)
        return s.hold("held", g)
    if k < 0.64:
        return s.cut("partial")
    if k < 0.72:
        return s.garbage(
            rng.choice(
                [
                    b"data: {this is not json\n\n",
                    b"",
                    b"\xff\xfe\x00garbage\n\n",
                    b"data: [DONE]\n\n",
                    b'data: {"choices":[{"delta":{"content":5}}]}\n\n',
                    b"event: x\n" * 100,
                    # wrongly shaped JSON on each wire (tests/ai/test_stream_shapes.py)
                    b'data: {"choices":"oops"}\n\n',
                    b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":"9"}}}\n\n',
                    b'event: response.created\ndata: {"type":"response.created","response":[5]}\n\n',
                ]
            )
        )
    if k < 0.82:
        return s.http_error(
            rng.choice([400, 401, 404, 500, 503, 429]), "boom", retry_after=rng.choice([None, 0.01])
        )
    if k < 0.86:
        return s.http_error(500, raw_body=rng.choice([b"", b"\xff\xfe", b"<html>", b'{"error":null}']))
    return s.thinking("hmm", "done")


# fixed junk lines: a lone surrogate, a NaN id, NUL and CR, nesting deeper than the parsers,
# unknown ids, duplicate keys, numbers out of range, a bad image, bidi and BOM characters
_JUNK_LINES: tuple[bytes, ...] = (
    b'{"type":"prompt","message":"\\ud800"}',
    b'{"type":"get_state","id":NaN}',
    b'{"type":"steer","message":"x"}\x00',
    b'{"type":"set_todos","phases":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"type":"extension_ui_response","id":"nope","value":"x"}',
    b'{"type":"host_tool_result","id":"unknown","result":{"content":[{"type":"text","text":"x"}]}}',
    b'{"type":"host_tool_update","id":"unknown","partialResult":{"content":[]}}',
    b'{"type":"host_tool_result","id":"x","result":{"content":"notalist"}}',
    b'{"type":"get_state","id":"a","id":"b"}\r',
    b'{"type":"set_model","provider":1e400,"modelId":-0}',
    b'{"type":"prompt","message":"x","images":[{"type":"image","data":"!!!","mimeType":"image/png"}],"streamingBehavior":"steer"}',
    b'{"type":"bash","command":"echo \\u0000"}',
    '{"type":"set_session_name","name":"\u202e\U0001f600\ufeff"}'.encode(),
)


def junk_line(rng: random.Random) -> bytes:
    kind = rng.randrange(1 + len(_JUNK_LINES))  # the same draws as before: seeds replay
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))).replace(b"\n", b" ")
    return _JUNK_LINES[kind - 1]


def command(
    rng: random.Random, n: int, sessions: list[str], entry_ids: list[str], kind: str | None = None
) -> dict[str, Any]:
    cid = f"c{n}"
    kinds = [
        ("prompt", 10),
        ("steer", 4),
        ("follow_up", 4),
        ("abort", 4),
        ("get_state", 5),
        ("abort_and_prompt", 2),
        ("new_session", 1),
        ("switch_session", 1),
        ("branch", 1),
        ("compact", 1),
        ("set_model", 1),
        ("bash", 2),
        ("abort_bash", 1),
        ("get_messages", 2),
        ("get_tree", 2),
        ("get_session_stats", 1),
        ("set_session_name", 1),
        ("clear_queue", 1),
        ("cycle_model", 1),
        ("cycle_thinking_level", 1),
        ("set_thinking_level", 1),
        ("export_html", 1),
        ("get_branch_messages", 1),
        ("set_todos", 1),
        ("list_sessions", 1),
        ("get_last_assistant_text", 1),
        ("abort_retry", 1),
        ("set_auto_retry", 1),
        ("set_steering_mode", 1),
        ("set_follow_up_mode", 1),
        ("set_interrupt_mode", 1),
        ("get_tools", 1),
        ("set_active_tools", 1),
        ("get_commands", 1),
        ("set_auto_compaction", 1),
        ("get_available_models", 1),
    ]
    names = [k for k, w in kinds for _ in range(w)]
    t = kind or rng.choice(names)
    f: dict[str, Any] = {"id": cid, "type": t}
    msg = rng.choice(["hello", "x" * 3000, "\u2028", "emoji \U0001f600", "/help", "!echo hi"])
    if t in ("prompt", "steer", "follow_up", "abort_and_prompt"):
        f["message"] = msg if msg[:1] in "/!" else f"{msg} #{cid}#"  # findable in the session
        if t == "prompt" and rng.random() < 0.5:
            f["streamingBehavior"] = rng.choice(["steer", "followUp"])
    elif t == "switch_session":
        f["sessionPath"] = rng.choice(sessions) if sessions and rng.random() < 0.8 else NONEXIST
    elif t == "branch":
        f["entryId"] = rng.choice(entry_ids) if entry_ids and rng.random() < 0.8 else "deadbeef"
    elif t == "compact":
        if rng.random() < 0.5:
            f["customInstructions"] = "short"
    elif t == "set_model":
        f["provider"], f["modelId"] = rng.choice(
            [("fake", "fake-model"), ("fake", "fake-reasoner"), ("fake", "nope")]
        )
    elif t == "bash":
        f["command"] = rng.choice(
            ["echo hi", "sleep 0.3; echo done", "printf '\\xff\\xfe\\x00'", "yes | head -c 200000"]
        )
    elif t == "set_session_name":
        f["name"] = rng.choice(["n", "\ud800", "x" * 10000, ""])
        if f["name"] == "\ud800":
            pass
    elif t == "set_thinking_level":
        f["level"] = rng.choice(["off", "minimal", "high", "xhigh"])
    elif t == "export_html":
        f["outputPath"] = "export.html"
    elif t == "set_todos":
        f["phases"] = [
            {
                "id": "p",
                "name": "p",
                "tasks": [
                    {"id": "t", "content": "t", "status": rng.choice(["pending", "in_progress", "completed"])}
                ],
            }
        ]
    elif t == "set_auto_retry":
        f["enabled"] = rng.random() < 0.7
    elif t == "set_auto_compaction":
        f["enabled"] = rng.random() < 0.5
    elif t in ("set_steering_mode", "set_follow_up_mode"):
        f["mode"] = rng.choice(["all", "one-at-a-time"])
    elif t == "set_interrupt_mode":
        f["mode"] = rng.choice(["immediate", "wait"])
    elif t == "set_active_tools":
        f["toolNames"] = rng.choice([["read", "bash"], [], ["echo_host", "bash", "read"]])
    elif t == "list_sessions":
        f["scope"] = rng.choice(["cwd", "all"])
    return f


def enc(f: dict[str, Any]) -> bytes:
    try:
        return json.dumps(f, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(f).encode()


NONEXIST = ""
