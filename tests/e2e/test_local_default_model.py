"""The embedded default model (Qwen2.5-Coder-1.5B, Q4_K_M) does a real task offline.

Slow (about a minute on a 2-core machine): run with ``pytest -m slow``. The provider is
driven directly in a small manual loop — call, run the chosen tool by hand, call again —
and the wall time is recorded in ``bench/results/local_model_task.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from xcsh.ai.local import INSTALL_HINT, default_model, is_installed
from xcsh.ai.local.runtime import current_runtime, ensure_runtime, stop_runtime
from xcsh.ai.options import StreamOptions
from xcsh.ai.providers.local import model_file, runtime_spec
from xcsh.ai.registry import stream
from xcsh.ai.types import AssistantMessage, Context, Message, Tool, ToolResultMessage

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results" / "local_model_task.json"
TASK = "Create hello.py that prints hello world, run it with python3, and tell me what it printed."
MAX_TURNS = 8
TURN_TIMEOUT_S = 600

TOOLS: list[Tool] = [
    {
        "name": "write",
        "description": "Write content to a file (relative to the working directory), replacing it.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    {
        "name": "bash",
        "description": "Run a shell command in the working directory; returns its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
]


def run_tool(name: str, arguments: dict[str, Any], cwd: Path) -> tuple[str, bool]:
    """Execute the model's tool call by hand: (output, is_error)."""
    if name == "write":
        target = cwd / str(arguments["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(arguments["content"]), encoding="utf-8")
        return f"Successfully wrote {len(str(arguments['content']))} bytes to {arguments['path']}", False
    if name == "bash":
        done = subprocess.run(
            ["bash", "-c", str(arguments["command"])],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
        )
        output = (done.stdout + done.stderr).strip() or "(no output)"
        if done.returncode:
            return f"{output}\n\nCommand exited with code {done.returncode}", True
        return output, False
    return f"Tool {name} not found", True


async def call_model(context: Context) -> AssistantMessage:
    async with asyncio.timeout(TURN_TIMEOUT_S):
        s = stream(default_model(), context, StreamOptions())
        async for _ in s:
            pass
        return await s.result()


@pytest.mark.slow
async def test_default_model_writes_runs_and_reports_hello_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not is_installed():
        pytest.skip(f"the local model is not installed ({INSTALL_HINT})")
    # the joined weights are kept between runs in the repo's ignored cache
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(REPO / ".cache" / "agent"))
    monkeypatch.chdir(tmp_path)

    started = time.monotonic()
    gguf = await asyncio.to_thread(model_file, default_model())
    weights_s = time.monotonic() - started
    await ensure_runtime(runtime_spec(default_model(), gguf))
    load_s = time.monotonic() - started - weights_s

    messages: list[Message] = [{"role": "user", "content": TASK, "timestamp": 1}]
    steps: list[dict[str, Any]] = []
    task_started = time.monotonic()
    final = ""
    for _ in range(MAX_TURNS):
        reply = await call_model({"messages": messages, "tools": TOOLS})
        assert reply["stopReason"] in ("stop", "toolUse"), reply.get("errorMessage")
        messages.append(reply)
        calls = [b for b in reply["content"] if b["type"] == "toolCall"]
        usage = {"input": reply["usage"]["input"], "cached": reply["usage"]["cacheRead"]}
        if not calls:
            final = "".join(b["text"] for b in reply["content"] if b["type"] == "text")
            steps.append({"final": final, "seconds": reply.get("duration", 0) / 1000, **usage})
            break
        for call in calls:
            output, is_error = run_tool(call["name"], call["arguments"], tmp_path)
            steps.append(
                {
                    "tool": call["name"],
                    "arguments": call["arguments"],
                    "output": output[:200],
                    "seconds": reply.get("duration", 0) / 1000,
                    **usage,
                }
            )
            result: ToolResultMessage = {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "content": [{"type": "text", "text": output}],
                "isError": is_error,
                "timestamp": 2,
            }
            messages.append(result)
    task_s = time.monotonic() - task_started
    runtime = current_runtime()
    stop_runtime()
    record = {
        "task": TASK,
        "model": default_model()["id"],
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "weights_ready_s": round(weights_s, 2),
        "runtime_load_s": round(load_s, 2),
        "task_wall_time_s": round(task_s, 2),
        "total_wall_time_s": round(time.monotonic() - started, 2),
        "turns": len(steps),
        "steps": steps,
        "runtime_pid": runtime.pid if runtime else None,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    hello = tmp_path / "hello.py"
    assert hello.is_file(), steps
    ran = subprocess.run(["python3", str(hello)], capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip().lower().rstrip("!") == "hello world", steps
    assert any(s.get("tool") == "bash" and "hello world" in s["output"].lower() for s in steps), steps
    assert final.strip(), steps
