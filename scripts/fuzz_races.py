"""Second-round steps of `scripts/fuzz_rpc.py`: races, floods, dialogs, framing, torn sessions.

Each step is one write (several lines handled in one loop turn where that is the point):
the dialogs of `scripts/fuzz_ext.py` answered with right and wrong ids and value types; a
prompt followed at once by commands that change the run under it (model, thinking level,
compaction, new/switched/branched session, host tools, bash and abort_bash, abort); floods of
steer/follow-up; host-tool results racing an abort; bash racing abort_bash; framing edge
cases (BOM, CRLF, lone CR, whitespace lines, binary and 3-8 MB lines); session files with a
torn tail or a garbage line in the middle that a switch_session then opens.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Command = Callable[[random.Random, int, list[str], list[str], str | None], dict[str, Any]]


@dataclass
class Burst:
    """What one step writes and what it must cause: ``ids`` each answered once, ``anonymous`` more."""

    data: bytes = b""
    ids: list[str] = field(default_factory=list)
    anonymous: int = 0


@dataclass
class State:
    """What the fuzzer knows of the process (filled by the frame callback and the barriers)."""

    root: Path
    sessions: list[str] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    host_calls: list[str] = field(default_factory=list)
    ui_requests: list[tuple[str, str]] = field(default_factory=list)  # (id, method)
    planted: list[bytes] = field(default_factory=list)  # unparseable lines the fuzzer wrote itself
    n: int = 0

    def next_id(self, prefix: str = "c") -> str:
        self.n += 1
        return f"{prefix}{self.n}"


def _enc(frame: dict[str, Any]) -> bytes:
    try:
        return json.dumps(frame, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(frame).encode()


def _add(burst: Burst, frame: dict[str, Any], *, ending: bytes = b"\n") -> None:
    burst.data += _enc(frame) + ending
    if "id" in frame:
        burst.ids.append(frame["id"])
    else:
        burst.anonymous += 1


MID_RUN = [
    "set_model",
    "cycle_model",
    "set_thinking_level",
    "cycle_thinking_level",
    "compact",
    "new_session",
    "switch_session",
    "branch",
    "export_html",
    "bash",
    "abort_bash",
    "abort",
    "abort_and_prompt",
    "steer",
    "follow_up",
    "get_state",
    "set_active_tools",
    "clear_queue",
    "abort_retry",
    "get_tree",
    "set_session_name",
    "set_auto_compaction",
    "set_locale",
    "get_integrations",
    "set_host_tools",
]

HOST_TOOLS = [
    {
        "name": "echo_host",
        "description": "echo",
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    }
]


def _extra(rng: random.Random, frame: dict[str, Any]) -> None:
    """Fields for the command types `fuzz_rpc.command` does not know."""
    if frame["type"] == "set_locale":
        frame["locale"] = rng.choice(["en", "de-DE", "", "xx-\u2028"])
    elif frame["type"] == "set_host_tools":
        odd_schemas: list[Any] = [
            {"type": "banana"},
            {"type": "object", "properties": 5},
            {"type": "object", "required": "message"},
            {"type": "object", "properties": {"message": {"type": "string", "pattern": "("}}},
            {"type": "object", "properties": {"message": {"$ref": "#/nowhere"}}},
        ]
        frame["tools"] = rng.choice(
            [
                [],
                HOST_TOOLS,
                [{**HOST_TOOLS[0], "name": "other_host"}],
                [{**HOST_TOOLS[0], "parameters": rng.choice(odd_schemas)}],
            ]
        )


def mid_run(rng: random.Random, st: State, command: Command) -> Burst:
    """A prompt, then 1-6 commands that change the run it starts, all read in one loop turn."""
    burst = Burst()
    cid = st.next_id()
    _add(
        burst,
        {"id": cid, "type": "prompt", "message": rng.choice(["go", "run bash", "x" * 200]) + f" #{cid}#"},
    )
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(MID_RUN)
        st.n += 1
        frame = command(rng, st.n, st.sessions, st.entry_ids, kind)
        _extra(rng, frame)
        _add(burst, frame)
    return burst


def flood(rng: random.Random, st: State) -> Burst:
    """50-300 steer/follow_up commands in one write, sometimes behind a prompt."""
    burst = Burst()
    if rng.random() < 0.6:
        _add(burst, {"id": st.next_id(), "type": "prompt", "message": "flooded"})
    for i in range(rng.randint(50, 300)):
        frame: dict[str, Any] = {"type": rng.choice(["steer", "follow_up"]), "message": f"m{i}"}
        if rng.random() < 0.9:
            frame["id"] = st.next_id()
        _add(burst, frame)
    if rng.random() < 0.3:
        _add(burst, {"id": st.next_id(), "type": "clear_queue"})
    return burst


def bash_race(rng: random.Random, st: State) -> Burst:
    """bash and abort_bash in one write, in either order, sometimes two bashes."""
    burst = Burst()
    seq = rng.choice(
        [
            ["bash", "abort_bash"],
            ["abort_bash", "bash"],
            ["bash", "bash", "abort_bash"],
            ["bash", "abort_bash", "abort_bash", "bash"],
            ["bash", "abort", "abort_bash"],
        ]
    )
    for kind in seq:
        frame: dict[str, Any] = {"id": st.next_id(), "type": kind}
        if kind == "bash":
            frame["command"] = rng.choice(
                [
                    "sleep 0.3; echo done",
                    "yes | head -c 300000",
                    "echo hi",
                    "sleep 5",
                    "trap '' TERM; sleep 0.5",
                ]
            )
        _add(burst, frame)
    return burst


def host_race(rng: random.Random, st: State) -> Burst:
    """A pending host-tool call's result and update racing an abort (or a set_host_tools)."""
    burst = Burst()
    hid = st.host_calls.pop(rng.randrange(len(st.host_calls))) if st.host_calls else f"gone{st.n}"
    result = {
        "type": "host_tool_result",
        "id": hid,
        "result": {"content": [{"type": "text", "text": "late"}], "details": {}},
    }
    update = {
        "type": "host_tool_update",
        "id": hid,
        "partialResult": {"content": [{"type": "text", "text": "p"}]},
    }
    stop = rng.choice(
        [
            {"type": "abort"},
            {"type": "abort_and_prompt", "message": "again"},
            {"type": "set_host_tools", "tools": []},
            {"type": "new_session"},
        ]
    )
    stop = {"id": st.next_id(), **stop}
    order = rng.choice(
        [[stop, result], [result, stop], [update, stop, result], [stop, update, result, result]]
    )
    for frame in order:
        burst.data += _enc(frame) + b"\n"
        if "id" in frame and frame["type"] not in ("host_tool_result", "host_tool_update"):
            burst.ids.append(frame["id"])
    return burst


def ui_command(rng: random.Random, st: State) -> Burst:
    """A prompt naming one of the fuzz extension's commands (dialogs, notifications, a failure)."""
    burst = Burst()
    name = rng.choice(["fz-confirm", "fz-select", "fz-input", "fz-editor", "fz-misc", "fz-throw"])
    frame: dict[str, Any] = {"id": st.next_id(), "type": "prompt", "message": f"/{name}"}
    if rng.random() < 0.3:
        frame["streamingBehavior"] = rng.choice(["steer", "followUp"])
    _add(burst, frame)
    return burst


UI_VALUES: list[Any] = ["a", "b", 5, None, [1], {"x": 1}, "\ud800", "", True, "x" * 100_000]


def ui_answer(rng: random.Random, st: State) -> Burst:
    """An extension_ui_response: right or wrong id, any value type, sometimes twice (no output due)."""
    burst = Burst()
    if st.ui_requests and rng.random() < 0.8:
        rid: Any = st.ui_requests.pop(rng.randrange(len(st.ui_requests)))[0]
    else:
        rid = rng.choice(["ui_nope", 5, None, ["x"], ""])
    shape = rng.choice(
        [
            {"value": rng.choice(UI_VALUES)},
            {"confirmed": rng.choice([True, False, "yes", 1, None])},
            {"cancelled": rng.choice([True, False, "x"])},
            {"cancelled": True, "timedOut": rng.choice([True, "y"])},
            {},
            {"value": "a", "confirmed": True, "cancelled": True},
        ]
    )
    frame: dict[str, Any] = {"type": "extension_ui_response", **shape}
    if rng.random() < 0.9:
        frame["id"] = rid
    for _ in range(rng.choice([1, 1, 2])):
        burst.data += _enc(frame) + b"\n"
    return burst


def framing(rng: random.Random, st: State) -> Burst:
    """Line framing edge cases; every line's due answers counted by the caller's rule."""
    burst = Burst()
    kind = rng.randrange(9)
    cid = st.next_id()
    line = _enc({"id": cid, "type": "get_state"})
    if kind == 0:
        burst.data = b"\xef\xbb\xbf" + line + b"\n"
    elif kind == 1:
        burst.data = line + b"\r\n" + _enc({"id": st.next_id(), "type": "get_commands"}) + b"\r\n"
    elif kind == 2:
        burst.data = b"\r\n \t \n\r\n" + line + b"\n"
    elif kind == 3:
        burst.data = (
            bytes(rng.randrange(256) for _ in range(rng.randint(3, 8) << 20)).replace(b"\n", b"\x00") + b"\n"
        )
    elif kind == 4:
        burst.data = b"\x00" * rng.randint(1, 5000) + b"\n" + line + b"\n"
    elif kind == 5:
        burst.data = line[:-1] + b"\r" + line[-1:] + b"\n"  # CR inside the object: not a line end
    elif kind == 6:
        burst.data = b"\xef\xbb\xbf\n" + line + b"\n"
    elif kind == 7:
        burst.data = line + b"\r\r\n"
    else:
        burst.data = b"\x1e" + line + b"\n"  # JSON text sequence record separator
    return burst


def torn_session(rng: random.Random, st: State) -> Burst:
    """Copy a known session file with a torn tail, a garbage middle line or an unusable message
    as its leaf, then switch to it (and prompt)."""
    burst = Burst()
    sources = [p for p in st.sessions if Path(p).exists() and Path(p).stat().st_size > 0]
    if not sources:
        return burst
    src = Path(rng.choice(sources))
    lines = src.read_bytes().split(b"\n")
    lines = [line for line in lines if line]
    target = src.parent / f"torn-{st.n}-{src.name}"
    if rng.random() < 0.5 or len(lines) < 3:
        tail = lines[-1][: max(1, len(lines[-1]) // 2)]
        st.planted.append(tail)
        target.write_bytes(b"\n".join(lines[:-1]) + b"\n" + tail)
    elif rng.random() < 0.5:
        junk = rng.choice([b"{not json", b"\xff\xfe", b'{"type":"message"', b"[]"])
        st.planted.append(junk)
        lines.insert(rng.randrange(1, len(lines)), junk)
        target.write_bytes(b"\n".join(lines) + b"\n")
    else:  # a message entry the agent cannot use, as the leaf (a foreign or hand-edited file)
        try:
            parent = json.loads(lines[-1]).get("id")
        except (ValueError, AttributeError):
            parent = None
        message = rng.choice(
            [
                5,
                {"role": "user", "content": 5},
                {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "name": "bash"}],
                    "stopReason": "toolUse",
                },
                {"role": "assistant", "content": "text", "stopReason": "stop", "timestamp": 1},
                {"role": "toolResult"},
            ]
        )
        entry = {
            "type": "message",
            "id": f"foreign{st.n}",
            "parentId": parent,
            "timestamp": "x",
            "message": message,
        }
        target.write_bytes(b"\n".join([*lines, _enc(entry)]) + b"\n")
    _add(burst, {"id": st.next_id(), "type": "switch_session", "sessionPath": str(target)})
    if rng.random() < 0.7:
        _add(burst, {"id": st.next_id(), "type": "prompt", "message": "after torn"})
    return burst


def special_path(rng: random.Random, st: State) -> Burst:
    """switch_session / export_html to a FIFO, a directory or a missing directory under the run's
    root (never a device): refused at once or written, the process never blocks on a pipe."""
    burst = Burst()
    fifo = st.root / "pipe.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    (st.root / "a-dir").mkdir(exist_ok=True)
    target = rng.choice([fifo, st.root / "a-dir", st.root / "missing" / "dir" / "x.html"])
    kind = rng.choice(["switch_session", "export_html"])
    frame: dict[str, Any] = {"id": st.next_id(), "type": kind}
    frame["sessionPath" if kind == "switch_session" else "outputPath"] = str(target)
    _add(burst, frame)
    return burst


STEPS: list[tuple[Callable[..., Burst], int]] = [
    (mid_run, 6),
    (flood, 2),
    (bash_race, 3),
    (host_race, 3),
    (ui_command, 4),
    (ui_answer, 5),
    (framing, 3),
    (torn_session, 1),
    (special_path, 1),
]


def pick(rng: random.Random) -> Callable[..., Burst]:
    names = [fn for fn, w in STEPS for _ in range(w)]
    return rng.choice(names)
