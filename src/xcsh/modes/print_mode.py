"""Print mode: run the prompts to completion; print the final answer (or every event as JSON).

The first prompt carries the ``@file`` attachments; further messages are sent one after
another, each once the previous has finished, as the reference does. In JSON mode the
session header is the first line, then every event. Exit code: 0 when the final assistant
message ended normally, 1 on error or abort; ``128 + signal`` on a stop signal; 141 (as a
process ended by SIGPIPE) when the reader of stdout has gone.

The stop signals are handled from before the session is built. stdout is written by a
:class:`~xcsh.modes.stdout_writer.StdoutWriter` (blocking writes from a thread of its own; the
fd is never made non-blocking, as other processes may share it), never on the loop's thread, so
a stop signal is handled while a reader does not read (docs/fleet.md). A reader that closes
stdout (``| head -1``) ends the run as a stop signal would, quietly.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from xcsh.ai.types import ImageContent
from xcsh.coding.messages import last_assistant
from xcsh.coding.session import AgentSession
from xcsh.coding.sessions.context import last_assistant_text
from xcsh.modes.progress import ProgressPrinter, progress_wanted
from xcsh.modes.signals import StopHandlers, exit_status
from xcsh.modes.stdout_writer import StdoutWriter

BROKEN_PIPE_STATUS = exit_status(signal.SIGPIPE)


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
    session: AgentSession | None = None
    writers: list[StdoutWriter] = []
    loop = asyncio.get_running_loop()

    def leave(status: int) -> None:
        for writer in writers:
            writer.abandon()
        os._exit(status)

    stop = StopHandlers(lambda: session, exit=leave)
    stop.install()  # before the session is built: a signal during start-up is a graceful stop

    def reader_gone() -> None:
        if not stop.stopping:
            stop.on_signal(signal.SIGPIPE)

    session = build_session()
    json_events = job.json_events
    sys.stdout.flush()
    if json_events:
        out = StdoutWriter(1, loop, on_broken=reader_gone)
        writers.append(out)
        out.write(dict(session.store.header))
        session.subscribe(out.write)
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
        await _drain(writers, stop)
        return 1
    final = last_assistant(session.messages)
    await session.shutdown_async()
    await _drain(writers, stop)
    if final is None:
        sys.stderr.write("Error: the model produced no answer\n")
        return 1
    if final.get("stopReason") in ("error", "aborted"):
        sys.stderr.write(f"Error: {final.get('errorMessage') or final.get('stopReason')}\n")
        return 1
    if not json_events:
        text = last_assistant_text(session.messages) or ""
        out = StdoutWriter(1, loop)
        writers.append(out)
        out.write_bytes((text + "\n").encode("utf-8"))
        await _drain(writers, stop)
        if out.closed:
            return BROKEN_PIPE_STATUS
    return 0


async def _drain(writers: list[StdoutWriter], stop: StopHandlers) -> None:
    """Wait until stdout has taken everything; a stop signal meanwhile drops the rest and runs
    its stop sequence (which exits the process)."""
    for writer in writers:
        writer.drain()
        if writer.stopped:  # a stop signal while the reader did not read
            await stop.finish()
