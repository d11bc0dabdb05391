"""Print mode: run the prompts to completion; print the final answer (or every event as JSON).

The first prompt carries the ``@file`` attachments; further messages are sent one after
another, each once the previous has finished, as the reference does. In JSON mode the
session header is the first line, then every event. Exit code: 0 when the final assistant
message ended normally, 1 on error or abort.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from xcsh.ai.types import ImageContent
from xcsh.coding.events import SessionEvent
from xcsh.coding.messages import last_assistant
from xcsh.coding.session import AgentSession
from xcsh.coding.sessions.context import last_assistant_text
from xcsh.modes.progress import ProgressPrinter, progress_wanted
from xcsh.modes.signals import install_stop_handlers
from xcsh.rpc.jsonl import encode_frame


@dataclass(slots=True)
class PrintJob:
    """What print mode sends: the first prompt (with images), then ``more`` prompts in order."""

    first: str
    images: list[ImageContent] = field(default_factory=list)
    more: list[str] = field(default_factory=list)
    json_events: bool = False


def run_print(build_session: Callable[[], AgentSession], job: PrintJob) -> int:
    """Run ``job`` and return the process exit code."""
    return asyncio.run(_run(build_session, job))


async def _run(build_session: Callable[[], AgentSession], job: PrintJob) -> int:
    session = build_session()
    stop = install_stop_handlers(lambda: session)
    out = sys.stdout.buffer
    json_events = job.json_events
    if json_events:
        out.write(encode_frame(dict(session.store.header)))
        out.flush()

        def write(event: SessionEvent) -> None:
            out.write(encode_frame(event))
            out.flush()

        session.subscribe(write)
    elif progress_wanted(os.environ, sys.stderr):
        session.subscribe(ProgressPrinter(sys.stderr))
    try:
        prompts: list[tuple[str, list[ImageContent] | None]] = [(job.first, job.images or None)]
        prompts += [(text, None) for text in job.more]
        for text, images in prompts:
            task = session.start_prompt(text, images)
            if task is not None:
                await task  # the prompt task runs the whole chain (retries, compaction, reminders)
            await stop.settle()
    except Exception as exc:  # mode boundary: report and fail with a non-zero exit code
        sys.stderr.write(f"Error: {exc}\n")
        await session.shutdown_async()
        return 1
    final = last_assistant(session.messages)
    await session.shutdown_async()
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
