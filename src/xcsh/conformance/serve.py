"""``xcsh fake-llm``: the fake LLM server with a scripted model, for testing hosts in any language.

A host author's tests start it, point a real ``xcsh --mode rpc`` at it through the models
file it writes, and get deterministic model answers with no API key::

    xcsh fake-llm --script steps.json --agent-dir /tmp/agent [--record requests.json]

It writes ``<agent-dir>/models.yml`` (provider ``fake``, models ``fake-model`` and
``fake-reasoner``), prints one JSON line on stdout — ``{"baseUrl", "agentDir", "model"}`` —
and serves until stdin closes (or SIGINT/SIGTERM). At exit it writes the recorded request
bodies to ``--record`` and exits 1 when a step was left unused or a request found no step.

The script is a JSON array; each element answers one model request:

- ``{"text": "…"}`` (optional ``"thinking": "…"``, ``"usage": [prompt, completion]``, ``"delayMs": n``)
- ``{"toolCalls": [{"id": "c1", "name": "bash", "arguments": {…}}], "text": "optional, before"}``
- ``{"hold": "partial text"}`` — one delta, then the stream stays open until the client leaves
- ``{"error": {"status": 429, "message": "…", "retryAfter": 1}}``
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Step


class ScriptError(ValueError):
    """A script element is not one of the documented shapes."""


def step_from(item: Any, index: int) -> Step:
    """One script element as a fake-server step."""
    if not isinstance(item, dict):
        raise ScriptError(f"step {index}: expected an object, got {type(item).__name__}")
    usage = item.get("usage", [1, 1])
    if not (isinstance(usage, list) and len(usage) == 2 and all(isinstance(n, int) for n in usage)):
        raise ScriptError(f"step {index}: usage must be [prompt, completion]")
    pair = (usage[0], usage[1])
    if "error" in item:
        error = item["error"]
        if not isinstance(error, dict) or not isinstance(error.get("status"), int):
            raise ScriptError(f"step {index}: error needs an integer status")
        return script.http_error(
            error["status"], str(error.get("message", "error")), retry_after=error.get("retryAfter")
        )
    if "hold" in item:
        return script.hold(str(item["hold"]))
    if "toolCalls" in item:
        calls = item["toolCalls"]
        if not isinstance(calls, list) or not calls:
            raise ScriptError(f"step {index}: toolCalls must be a non-empty array")
        specs: list[tuple[str, str, dict[str, Any] | str]] = []
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ScriptError(f"step {index}: each tool call needs a name")
            specs.append(
                (str(call.get("id") or f"call_{index}_{len(specs)}"), call["name"], call.get("arguments", {}))
            )
        return script.tool_calls(*specs, usage=pair, text_before=str(item.get("text", "")))
    if "thinking" in item:
        return script.thinking(str(item["thinking"]), str(item.get("text", "")), usage=pair)
    if "text" in item:
        return script.text(str(item["text"]), usage=pair, delay_ms=int(item.get("delayMs", 0)))
    raise ScriptError(f"step {index}: expected one of text, thinking, toolCalls, hold, error")


def load_script(path: Path) -> list[Step]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ScriptError("the script must be a JSON array of steps")
    return [step_from(item, i) for i, item in enumerate(data)]


def main(argv: Sequence[str]) -> int:
    import argparse

    from xcsh.conformance.runner import models_yml

    parser = argparse.ArgumentParser(prog="xcsh fake-llm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, help="JSON array of model answers, one per request")
    parser.add_argument("--agent-dir", required=True, help="directory to write models.yml into")
    parser.add_argument("--record", help="write the recorded request bodies (JSON array) here at exit")
    args = parser.parse_args(list(argv))
    try:
        steps = load_script(Path(args.script))
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"xcsh fake-llm: {exc}\n")
        return 2
    agent_dir = Path(args.agent_dir).resolve()
    agent_dir.mkdir(parents=True, exist_ok=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    with FakeLLM() as llm:
        llm.script(*steps)
        (agent_dir / "models.yml").write_text(models_yml(llm.base_url), encoding="utf-8")
        info = {"baseUrl": llm.base_url, "agentDir": str(agent_dir), "model": "fake/fake-model"}
        sys.stdout.write(json.dumps(info) + "\n")
        sys.stdout.flush()

        def wait_for_eof() -> None:
            sys.stdin.read()
            done.set()

        threading.Thread(target=wait_for_eof, daemon=True).start()
        done.wait()
        if args.record:
            bodies = [r.json for r in llm.requests]
            Path(args.record).write_text(json.dumps(bodies, indent=2), encoding="utf-8")
        problems = list(llm.problems)
        if llm.remaining:
            problems.append(f"{llm.remaining} scripted step(s) never used")
    for problem in problems:
        sys.stderr.write(f"xcsh fake-llm: {problem}\n")
    return 1 if problems else 0
