"""Print mode: run one prompt to completion; print the final answer (or every event as JSON).

Exit code: 0 when the final assistant message ended normally, 1 on error or abort.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from xcsh.coding.session import AgentSession
from xcsh.coding.sessions.context import last_assistant_text
from xcsh.rpc.jsonl import encode_frame


def run_print(build_session: Callable[[], AgentSession], prompt: str, *, json_events: bool) -> int:
    """Run ``prompt`` and return the process exit code."""
    return asyncio.run(_run(build_session, prompt, json_events))


async def _run(build_session: Callable[[], AgentSession], prompt: str, json_events: bool) -> int:
    session = build_session()
    out = sys.stdout.buffer
    if json_events:

        def write(event: dict[str, Any]) -> None:
            out.write(encode_frame(event))
            out.flush()

        session.subscribe(write)
    try:
        task = session.start_prompt(prompt)
        if task is not None:
            await task  # the prompt task runs the whole chain (retries, compaction, reminders)
    except Exception as exc:  # mode boundary: report and fail with a non-zero exit code
        sys.stderr.write(f"Error: {exc}\n")
        session.shutdown()
        return 1
    final = next((m for m in reversed(session.messages) if m.get("role") == "assistant"), None)
    session.shutdown()
    if final is None:
        sys.stderr.write("Error: the model produced no answer\n")
        return 1
    if final.get("stopReason") in ("error", "aborted"):
        sys.stderr.write(f"Error: {final.get('errorMessage') or final.get('stopReason')}\n")
        return 1
    if not json_events:
        text = last_assistant_text(session.messages) or ""
        out.write((text + "\n").encode("utf-8"))
        out.flush()
    return 0
