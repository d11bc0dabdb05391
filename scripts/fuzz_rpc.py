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

The process and its pipes are `fuzz_proc.py`, what is sent (replies, commands, junk) is
`fuzz_inputs.py`, the round-2 steps `fuzz_races.py`, the invariants `fuzz_checks.py`.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts"))
import fuzz_inputs  # noqa: E402
from fuzz_checks import event_problems, lost_prompts, request_problems, session_files  # noqa: E402
from fuzz_inputs import ROUND2, command, enc, junk_line, random_reply  # noqa: E402
from fuzz_proc import Proc  # noqa: E402
from fuzz_races import State, framing, mid_run, pick  # noqa: E402

from conftest import Workspace, expected_answers  # noqa: E402
from xcsh.testing import script as s  # noqa: E402
from xcsh.testing.fake_llm import FakeLLM  # noqa: E402

FIXES = os.environ.get("FIXES") == "1"
ABRUPT = float(os.environ.get("ABRUPT", "0.3"))  # share of runs whose stdin ends mid-run
RACES = float(os.environ.get("RACES", "0.35"))  # share of round-2 steps (races, dialogs, framing...)
DIALOGS = ("select", "confirm", "input", "editor")


# a prompt's second response (rpc-protocol §3 case 3) when it has no id to count it by: refused as
# busy, or aborted before its run (an abort written after it, docs/decisions.md)
LATE_PROMPT_ERRORS = ("already processing", "Prompt aborted before its run started")


def run(seed: int, steps: int, root: Path) -> dict[str, Any]:
    fuzz_inputs.NONEXIST = str(root / "nonexistent.jsonl")  # command() names it
    rng = random.Random(seed)
    fake = FakeLLM().start()
    gates: list[s.Gate] = []
    api = ["openai-completions", "anthropic-messages", "openai-responses"][seed % 3]
    ws = Workspace(root, fake.base_url, api)
    # everything the process (and the tools it runs) writes stays under the run's directory:
    # home, caches, config and temporary files included
    for name, sub in (
        ("HOME", "home"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_CONFIG_HOME", "config"),
        ("TMPDIR", "tmp"),
    ):
        (root / sub).mkdir(exist_ok=True)
        ws.env[name] = str(root / sub)
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
        and f.get("command") in ("prompt", "abort_and_prompt")
        and f.get("success") is False
        and any(late in f.get("error", "") for late in LATE_PROMPT_ERRORS)
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
