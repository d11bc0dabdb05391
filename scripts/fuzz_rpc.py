"""A seeded fuzzing campaign against the real `xcsh --mode rpc` (raw pipes + the fake LLM).

Usage: ``.venv/bin/python scripts/fuzz_rpc.py SEED STEPS [ROOT]`` (``FIXES=1`` adds
``--protocol-fixes``, so every error response carries its id). Each step is one of: a
valid command of a random type (sometimes split across two writes, or ending in CRLF), a junk
line (binary, lone surrogates, NaN ids, deep nesting, unknown ids for host-tool results and
UI responses, duplicate keys), a command with an odd id, a host-tool result (for a pending
call, an unknown one, or with malformed blocks), a release of the held model replies, a
pause of stdout reading while 20-200 commands pile up, a 2-50 MB line, or a barrier
(``get_state`` that must be answered). The fake LLM is scripted with random replies: text,
tool calls (bash, read, unknown tools, bad arguments, host tools), held streams, dropped
connections, garbage SSE, HTTP errors. The wire rotates with the seed (chat, Anthropic,
Responses).

Checked: the process stays alive and answers every barrier; every stdout line is a JSON
object matching the protocol schema; every command is answered exactly once (a prompt's
late error aside); the process exits 0 at EOF; stderr has no traceback; every session file
parses line by line, with unique ids and parentIds that point to earlier entries. The report
(JSON on stdout) lists the problems; ROOT (default /tmp/xcsh-fuzz/run-SEED) keeps a summary
of the frames, the lines sent and stderr.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts"))
from fuzz_checks import event_problems, request_problems  # noqa: E402
from fuzz_races import State, framing, mid_run, pick  # noqa: E402

from conftest import Workspace, expected_answers  # noqa: E402
from xcsh.rpc.schema import FrameChecker  # noqa: E402
from xcsh.testing import script as s  # noqa: E402
from xcsh.testing.fake_llm import FakeLLM  # noqa: E402

FIXES = os.environ.get("FIXES") == "1"
ROUND2 = os.environ.get("ROUND", "2") != "1"
ABRUPT = float(os.environ.get("ABRUPT", "0.3"))  # share of runs whose stdin ends mid-run
RACES = float(os.environ.get("RACES", "0.35"))  # share of round-2 steps (races, dialogs, framing...)
DIALOGS = ("select", "confirm", "input", "editor")
PY = sys.executable


class Proc:
    def __init__(self, ws: Workspace, args: list[str]) -> None:
        env = dict(ws.env)
        self.p = subprocess.Popen(
            [PY, "-P", "-m", "xcsh", "--mode", "rpc", *args],
            cwd=ws.proj,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.frames: list[dict[str, Any]] = []
        self.bad: list[str] = []
        self.stderr = bytearray()
        self.cond = threading.Condition()
        self.checker = FrameChecker()
        self.paused = threading.Event()
        self.paused.set()
        self.on_frame: list[Any] = []
        self.sent: list[bytes] = []
        self.types: dict[str, str] = {}  # id -> type of each command sent with a string id
        self.order: list[str] = []  # string ids in the order sent
        self.marked: set[str] = set()  # ids of prompts whose message carries "#<id>#"
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _out(self) -> None:
        buf = b""
        while True:
            self.paused.wait()
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                if buf:
                    self.bad.append(f"trailing bytes without newline: {buf[:200]!r}")
                with self.cond:
                    self.cond.notify_all()
                return
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    frame = json.loads(line)
                except Exception as exc:
                    self.bad.append(f"non-JSON stdout line {line[:200]!r}: {exc}")
                    continue
                if not isinstance(frame, dict):
                    self.bad.append(f"non-object frame {line[:200]!r}")
                    continue
                try:
                    v = self.checker.violations(frame) if len(line) < (1 << 20) else []
                except BaseException as exc:
                    v = [f"checker raised {exc!r}"]
                if v:
                    self.bad.append(f"schema violation {v[:3]} in {line[:300]!r}")
                for cb in self.on_frame:
                    try:
                        cb(frame)
                    except Exception as exc:
                        self.bad.append(f"callback error {exc!r}")
                with self.cond:
                    self.frames.append(frame)
                    self.cond.notify_all()

    def _err(self) -> None:
        while True:
            chunk = os.read(self.p.stderr.fileno(), 1 << 16)
            if not chunk:
                return
            self.stderr += chunk

    def send(self, data: bytes) -> None:
        self.sent.append(data[:300])
        for line in data.split(b"\n"):
            if b'"id"' in line and len(line) < (1 << 16):
                try:
                    frame = json.loads(line)
                except ValueError:
                    continue
                if isinstance(frame, dict) and isinstance(frame.get("id"), str):
                    kind = str(frame.get("type"))
                    self.order.append(frame["id"])
                    if f"#{frame['id']}#" in str(frame.get("message")):
                        self.marked.add(frame["id"])
                    if self.types.setdefault(frame["id"], kind) != kind:
                        self.types[frame["id"]] = ""  # one id sent with several types: not checked
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def after(self, cid: str, k: int) -> list[str]:
        i = self.order.index(cid)
        return self.order[i + 1 : i + 1 + k]

    def wait_for(self, pred: Any, since: int = 0, timeout: float = 60) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for f in self.frames[since:]:
                    if pred(f):
                        return f
                left = deadline - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    return None
                self.cond.wait(min(left, 1))


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


def enc(f: dict[str, Any]) -> bytes:
    try:
        return json.dumps(f, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(f).encode()


NONEXIST = ""


def run(seed: int, steps: int, root: Path) -> dict[str, Any]:
    global NONEXIST
    NONEXIST = str(root / "nonexistent.jsonl")
    rng = random.Random(seed)
    fake = FakeLLM().start()
    gates: list[s.Gate] = []
    api = ["openai-completions", "anthropic-messages", "openai-responses"][seed % 3]
    ws = Workspace(root, fake.base_url, api)
    (ws.proj / "a.txt").write_text("hello\n")
    ws.config("retry:\n  baseDelayMs: 5\n  maxDelayMs: 20\ncompaction:\n  enabled: true\n")
    for _ in range(4000):
        fake.script(random_reply(rng, gates, True))
    ext = ["-e", str(REPO / "scripts" / "fuzz_ext.py")] if ROUND2 else []
    proc = Proc(ws, ["--model", "fake/fake-model", *ext] + (["--protocol-fixes"] if FIXES else []))
    st = State(root, sessions=[], entry_ids=[])
    stats: dict[str, int] = {}
    problems: list[str] = []
    host_calls = st.host_calls

    sessions = st.sessions
    entry_ids = st.entry_ids

    def on_frame(frame: dict[str, Any]) -> None:
        if frame.get("type") == "host_tool_call":
            host_calls.append(frame["id"])
        if frame.get("type") == "extension_ui_request" and frame.get("method") in DIALOGS:
            st.ui_requests.append((frame["id"], frame["method"]))
        if (
            frame.get("type") == "response"
            and frame.get("command") == "get_branch_messages"
            and frame.get("success")
        ):
            for m in frame["data"]["messages"]:
                if m["entryId"] not in entry_ids:
                    entry_ids.append(m["entryId"])
        if frame.get("type") == "response" and frame.get("command") == "get_tree" and frame.get("success"):
            stack = list(frame["data"]["tree"])
            while stack:
                node = stack.pop()
                if len(entry_ids) < 500 and node["id"] not in entry_ids:
                    entry_ids.append(node["id"])
                stack.extend(node.get("children", []))

    proc.on_frame.append(on_frame)
    expected_ids: set[str] = {"h0"}
    if proc.wait_for(lambda f: f.get("type") == "ready", timeout=30) is None:
        problems.append("no ready")
    proc.send(
        enc(
            {
                "id": "h0",
                "type": "set_host_tools",
                "tools": [
                    {
                        "name": "echo_host",
                        "description": "echo",
                        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
                    }
                ],
            }
        )
        + b"\n"
    )
    if rng.random() < 0.5:
        proc.send(
            b'{"id":"h1","type":"set_todos","phases":[{"id":"p","name":"Work","tasks":[{"id":"t","content":"Do X","status":"pending"}]}]}\n'
        )
        expected_ids.add("h1")
    pass
    junk_expected = 0
    n = 0
    t0 = time.monotonic()
    for step in range(steps):
        r = rng.random()
        if ROUND2 and rng.random() < RACES:
            st.n = n
            gen = pick(rng)
            burst = gen(rng, st, command) if gen.__name__ == "mid_run" else gen(rng, st)
            n = st.n
            stats[gen.__name__] = stats.get(gen.__name__, 0) + 1
            if gen is framing:
                junk_expected += sum(expected_answers(line) for line in burst.data.split(b"\n")[:-1])
            else:
                expected_ids.update(burst.ids)
                junk_expected += burst.anonymous
            if burst.data:
                proc.send(burst.data)
        elif r < 0.55:
            n += 1
            f = command(rng, n, sessions, entry_ids)
            stats[f["type"]] = stats.get(f["type"], 0) + 1
            data = enc(f)
            mode = rng.random()
            if mode < 0.1:
                data += b"\r"
            if mode < 0.2 and len(data) > 10:  # split write
                cut = rng.randrange(1, len(data))
                proc.send(data[:cut])
                proc.send(data[cut:] + b"\n")
            else:
                proc.send(data + b"\n")
            expected_ids.add(f["id"])
        elif r < 0.6:
            odd = rng.choice([0, -1.5, True, [1, 2], {"a": "b"}, "", "\u2028", "x" * 5000])
            f = {"id": odd, "type": rng.choice(["get_state", "abort", "set_steering_mode", "nope", "steer"])}
            stats["odd_id"] = stats.get("odd_id", 0) + 1
            proc.send(enc(f) + b"\n")
            junk_expected += 1
        elif r < 0.7:
            line = junk_line(rng)
            stats["junk"] = stats.get("junk", 0) + 1
            junk_expected += expected_answers(line)
            proc.send(line + b"\n")
        elif r < 0.78:
            # answer a host tool call, sometimes unknown, sometimes twice
            if host_calls and rng.random() < 0.8:
                hid = host_calls.pop(rng.randrange(len(host_calls)))
            else:
                hid = f"unknown{step}"
            stats["host_result"] = stats.get("host_result", 0) + 1
            content = rng.choice(
                [
                    [{"type": "text", "text": "ok"}],
                    [],
                    [{"type": "image", "data": "x", "mimeType": "image/png"}],
                    [{"type": "bogus"}],
                ]
            )
            proc.send(
                enc(
                    {
                        "type": "host_tool_result",
                        "id": hid,
                        "result": {"content": content, "details": {}},
                        "isError": rng.random() < 0.2,
                    }
                )
                + b"\n"
            )
            if rng.random() < 0.2:
                proc.send(
                    enc({"type": "host_tool_update", "id": hid, "partialResult": {"content": content}})
                    + b"\n"
                )
        elif r < 0.85:
            for g in gates:
                g.release()
            stats["release"] = stats.get("release", 0) + 1
        elif r < 0.88:
            # host stops reading stdout for a moment while commands pile up
            stats["pause"] = stats.get("pause", 0) + 1
            proc.paused.clear()
            for _ in range(rng.randint(20, 200)):
                n += 1
                f = {"id": f"c{n}", "type": rng.choice(["get_state", "get_messages", "get_tree"])}
                proc.send(enc(f) + b"\n")
                expected_ids.add(f["id"])
            time.sleep(rng.choice([0.05, 0.3]))
            proc.paused.set()
        elif r < 0.885:
            stats["huge"] = stats.get("huge", 0) + 1
            if rng.random() < 0.2:
                proc.send(b'{"type":"steer","message":"' + b"y" * (2 << 20) + b'"}\n')
            else:
                proc.send(b'{"type":"no_such","message":"' + b"y" * rng.choice([5 << 20, 50 << 20]) + b'"}\n')
            junk_expected += 1
        else:
            # barrier: everything so far must be answered
            n += 1
            bid = f"c{n}"
            proc.send(enc({"id": bid, "type": "get_state"}) + b"\n")
            expected_ids.add(bid)
            got = None
            for _ in range(30):
                got = proc.wait_for(
                    lambda fr, bid=bid: fr.get("id") == bid and fr.get("type") == "response", timeout=2
                )
                if got is not None or proc.p.poll() is not None:
                    break
                for g in gates:
                    g.release()
            if got is None:
                problems.append(f"step {step}: barrier {bid} not answered; alive={proc.p.poll() is None}")
                break
            d = got.get("data") or {}
            if d.get("sessionFile") and d["sessionFile"] not in sessions:
                sessions.append(d["sessionFile"])
        if proc.p.poll() is not None:
            problems.append(f"step {step}: process exited {proc.p.returncode}")
            break
    abrupt = ROUND2 and rng.random() < ABRUPT
    if abrupt:
        # stdin ends in the middle of things: runs streaming, commands in flight; the process
        # exits 0 at once and leaves every session file whole (rpc-protocol §2.5)
        st.n = n
        proc.send(mid_run(rng, st, command).data)
        stats["abrupt_eof"] = 1
    else:
        # final: release everything, abort, wait idle, final get_state
        for g in gates:
            g.release()
        proc.send(b'{"id":"final-abort","type":"abort"}\n')
        expected_ids.add("final-abort")
        got = proc.wait_for(
            lambda fr: fr.get("id") == "final-abort" and fr.get("type") == "response", timeout=60
        )
        proc.send(b'{"id":"final","type":"get_state"}\n')
        expected_ids.add("final")
        for _ in range(30):
            got = proc.wait_for(
                lambda fr: fr.get("id") == "final" and fr.get("type") == "response", timeout=2
            )
            if got is not None:
                break
            for g in gates:
                g.release()
        if got is None:
            problems.append("final get_state unanswered")
        # let queued work drain
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            n += 1
            proc.send(enc({"id": f"idle{n}", "type": "get_state"}) + b"\n")
            expected_ids.add(f"idle{n}")
            idle = proc.wait_for(
                lambda fr, i=f"idle{n}": fr.get("id") == i and fr.get("type") == "response", timeout=30
            )
            if idle is None or not idle["data"]["isStreaming"]:
                break
            for g in gates:
                g.release()
            proc.send(b'{"type":"abort"}\n')
            junk_expected += 1
            time.sleep(0.2)
    eof_id = None
    if ROUND2 and not abrupt and rng.random() < 0.5:
        # a last line without its newline right before EOF is still handled (rpc-protocol §1)
        eof_id = "eof-partial"
        proc.send(b'{"id":"eof-partial","type":"get_state"}')
        expected_ids.add(eof_id)
    proc.p.stdin.close()
    try:
        code = proc.p.wait(60)
    except subprocess.TimeoutExpired:
        problems.append("process did not exit after stdin closed")
        proc.p.kill()
        code = proc.p.wait()
    time.sleep(0.2)
    fake.stop()
    # accounting
    responses = [f for f in proc.frames if f.get("type") == "response"]
    by_id: dict[Any, int] = {}
    for f in responses:
        if "id" in f:
            key = f["id"] if isinstance(f["id"], (str, int, float, bool, type(None))) else json.dumps(f["id"])
            by_id[key] = by_id.get(key, 0) + 1
    late = 0
    dup = {}
    for k, v in by_id.items():
        if v == 2 and isinstance(k, str):
            rs = [f for f in responses if f.get("id") == k]
            if (
                len(rs) == 2
                and rs[0].get("command") in ("prompt", "abort_and_prompt")
                and rs[0]["success"]
                and not rs[1]["success"]
            ):
                late += 1
                continue
        if (
            v > 1
            and isinstance(k, str)
            and k[:1]
            and k[0] in "chfi"
            and k not in ("b", "x", "a")
            and len(k) < 20
        ):
            dup[k] = v
    if dup:
        problems.append(f"duplicate responses: {list(dup.items())[:10]}")
    late += sum(
        1
        for f in responses
        if f.get("id") is None
        and f.get("command") == "prompt"
        and f.get("success") is False
        and "already processing" in f.get("error", "")
    )
    unanswered = [i for i in expected_ids if i not in by_id]
    if FIXES and unanswered and not abrupt:
        problems.append(f"{len(unanswered)} ids unanswered: {sorted(unanswered)[:10]}")
    want = len(expected_ids) + junk_expected + late
    if len(responses) != want and not abrupt:
        problems.append(
            f"responses {len(responses)} != expected {want} (ids {len(expected_ids)}, junk {junk_expected}, late {late}, unanswered {sorted(unanswered)[:10]})"
        )
    problems.extend(proc.bad[:20])
    if ROUND2:
        problems.extend(lost_prompts(proc, responses, root, fake)[:5])
    wrong = [
        (f["id"], proc.types[f["id"]], f.get("command"))
        for f in responses
        if isinstance(f.get("id"), str)
        and proc.types.get(f["id"])
        and f.get("command") != proc.types[f["id"]]
        and not (f.get("command") == "parse" and f.get("success") is False)
    ]
    if wrong:
        problems.append(f"responses naming another command than the one sent: {wrong[:5]}")
    if ROUND2:
        problems.extend(
            [p for p in event_problems(proc.frames) if not (abrupt and p.startswith("at exit"))][:10]
        )
        bad_requests = [
            f"request {i} ({r.wire}): {p}"
            for i, r in enumerate(fake.requests)
            for p in request_problems(r.wire, r.json)
        ]
        problems.extend(bad_requests[:10])
    err = proc.stderr.decode("utf-8", "replace")
    if "Traceback" in err:
        problems.append("traceback in stderr: " + err[err.index("Traceback") :][:3000])
    if code != 0:
        problems.append(f"exit code {code}")
    # session files
    files = session_files(root)
    for path in files:
        ids: set[str] = set()
        for i, line in enumerate(path.read_bytes().split(b"\n")):
            if not line:
                continue
            if line in st.planted:
                continue  # the fuzzer's own torn tail / garbage line (the process may keep it)
            try:
                e = json.loads(line)
            except Exception as exc:
                problems.append(f"{path.name}:{i} unparseable: {exc} {line[:100]!r}")
                continue
            if not isinstance(e, dict):
                problems.append(f"{path.name}:{i} not an object: {line[:100]!r}")
                continue
            if i == 0:
                if e.get("type") != "session":
                    problems.append(f"{path.name}: bad header")
                continue
            pid = e.get("parentId")
            if pid is not None and pid not in ids:
                problems.append(f"{path.name}:{i} parentId {pid} not earlier ({e.get('type')})")
            if e.get("id") in ids:
                problems.append(f"{path.name}:{i} duplicate id")
            ids.add(e.get("id"))
        data = path.read_bytes()
        if data and not data.endswith(b"\n") and data.rsplit(b"\n", 1)[-1] not in st.planted:
            problems.append(f"{path.name}: no final newline")
    with open(root / "frames.jsonl", "w") as out:
        for fr in proc.frames:
            small = {k: fr[k] for k in ("type", "id", "command", "success", "error", "outcome") if k in fr}
            out.write(json.dumps(small)[:2000] + "\n")
    with open(root / "sent.txt", "w") as out:
        for line in proc.sent:
            out.write(repr(line) + "\n")
    (root / "stderr.txt").write_text(err)
    return {
        "seed": seed,
        "api": api,
        "steps": steps,
        "commands": n,
        "frames": len(proc.frames),
        "responses": len(responses),
        "stats": stats,
        "session_files": len(files),
        "requests": len(fake.requests),
        "secs": round(time.monotonic() - t0, 1),
        "problems": problems,
        "stderr_tail": err[-1500:],
    }


if __name__ == "__main__":
    seed = int(sys.argv[1])
    steps = int(sys.argv[2])
    root = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(f"/tmp/xcsh-fuzz/run-{seed}")
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    res = run(seed, steps, root)
    print(json.dumps(res, indent=1, default=str))
