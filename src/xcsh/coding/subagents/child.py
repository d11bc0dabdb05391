"""One child agent of the ``task`` tool, run in-process with its own session, context and tools.

Contract: :func:`run_child` builds an :class:`AgentSession` for the child (the
parent's registry and settings; the agent definition's model, thinking level and
tools; retry and compaction; the parent's ``before_tool_call`` gate, so approvals
and extension vetoes cover the child's calls too; its own python kernel), prompts it with the shared
context plus the assignment, reports progress through ``on_progress`` and returns a
:class:`ChildResult` once the child's run has ended. The child's session is stored
at ``<parent session file without .jsonl>/<id>.jsonl`` (in memory when the parent
is). ``abort()`` on the returned handle's signal aborts the child's run; the child is
always shut down (session closed, kernel killed) before ``run_child`` returns, so no
child outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.ai.abort import AbortSignal
from xcsh.ai.thinking import resolve_level
from xcsh.ai.types import Model
from xcsh.coding.errors import PromptAborted
from xcsh.coding.messages import last_assistant
from xcsh.coding.models import ModelResolutionError
from xcsh.coding.session import AgentSession
from xcsh.coding.session_state import SessionConfig
from xcsh.coding.sessions.store import SessionStore
from xcsh.coding.subagents.agents import AgentDefinition, usable_models
from xcsh.coding.tools import DEFAULT_TOOL_NAMES, create_coding_tools
from xcsh.coding.tools.kernel import PythonKernel
from xcsh.coding.tools.python import create_python_tool

if TYPE_CHECKING:
    from xcsh.agent.tool import AgentTool
    from xcsh.coding.events import SessionEvent

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Progress:
    """What the parent's tool updates show about one child."""

    index: int
    id: str
    agent: str
    description: str
    status: str = "pending"  # pending | running | completed | failed | aborted
    toolCount: int = 0
    currentTool: str | None = None
    lastIntent: str | None = None
    tokens: int = 0
    durationMs: int = 0
    sessionFile: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}  # type: ignore[attr-defined]


@dataclass(slots=True)
class ChildResult:
    progress: Progress
    output: str = ""
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ChildSpec:
    """Everything a child needs from the parent."""

    parent: AgentSession
    definition: AgentDefinition
    depth: int
    max_depth: int
    make_task_tool: Callable[[AgentSession, AgentDefinition, int], AgentTool] | None


def child_session_path(parent: AgentSession, task_id: str) -> Path | None:
    """``<parent file minus .jsonl>/<id>.jsonl`` (a fresh ``<id>-N`` when taken), or None in memory."""
    base = parent.store.path
    if base is None or not parent.config.persist:
        return None
    folder = base.with_suffix("") if base.suffix == ".jsonl" else base.parent / (base.name + ".d")
    candidate = folder / f"{task_id}.jsonl"
    serial = 2
    while candidate.exists():
        candidate = folder / f"{task_id}-{serial}.jsonl"
        serial += 1
    return candidate


def _model(spec: ChildSpec) -> Model:
    parent = spec.parent
    overrides = parent.settings.get("task.agentModelOverrides") or {}
    wanted = overrides.get(spec.definition.name) if isinstance(overrides, dict) else None
    patterns = [wanted] if isinstance(wanted, str) else []
    patterns += usable_models(spec.definition.models)
    for pattern in patterns:
        try:
            model, _ = parent.registry.resolve(pattern)
        except ModelResolutionError:
            continue
        if parent.registry.is_available(model):
            return model
    return parent.model


def _tools(spec: ChildSpec, child_cwd: Path, kernel: PythonKernel) -> tuple[list[AgentTool], list[str]]:
    from xcsh.coding.options import tool_enabled, tool_options

    parent = spec.parent
    wanted = (
        list(spec.definition.tools) if spec.definition.tools is not None else [*DEFAULT_TOOL_NAMES, "python"]
    )
    builtin = [n for n in wanted if n in DEFAULT_TOOL_NAMES or n == "ls"]
    builtin = [n for n in builtin if tool_enabled(parent.settings, n)]
    tools = create_coding_tools(child_cwd, builtin, tool_options(parent.settings))
    if "python" in wanted and parent.has_tool("python"):
        tools.append(create_python_tool(child_cwd, kernel))
    if spec.make_task_tool is not None and spec.definition.spawns and spec.depth + 1 < spec.max_depth:
        tools.append(spec.make_task_tool(parent, spec.definition, spec.depth + 1))
    return tools, [t.name for t in tools]


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def _add_usage(total: dict[str, Any], usage: Mapping[str, Any]) -> None:
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "premiumRequests"):
        total[key] = int(total.get(key, 0)) + int(usage.get(key, 0) or 0)
    cost = usage.get("cost") or {}
    into = total.setdefault("cost", {})
    for key, value in cost.items():
        if isinstance(value, int | float):
            into[key] = into.get(key, 0) + value


async def run_child(
    spec: ChildSpec,
    progress: Progress,
    prompt: str,
    signal: AbortSignal | None,
    on_progress: Callable[[], None],
    output_schema: Any = None,
) -> ChildResult:
    """Run one child to the end of its run (or its abort) and shut it down.

    The child's session starts with a ``model_change`` and a ``session_init`` entry (its
    system prompt, ``prompt`` as the task, its active tools and ``output_schema`` when
    given), then the run's messages.
    """
    from xcsh.coding.compaction.compactor import install_compaction
    from xcsh.coding.retry import install_retry

    parent = spec.parent
    result = ChildResult(progress=progress)
    if signal is not None and signal.aborted:
        progress.status = "aborted"
        return result
    started = time.monotonic()
    kernel = PythonKernel(parent.cwd)
    path = child_session_path(parent, progress.id)
    store = (
        SessionStore.open(path, cwd_for_new=parent.cwd, blob_dir=parent.config.agent_dir / "blobs")
        if path is not None
        else SessionStore.in_memory(parent.cwd)
    )
    progress.sessionFile = str(path) if path is not None else None
    model = _model(spec)
    level = (
        resolve_level(model, spec.definition.thinking_level)
        if spec.definition.thinking_level
        else parent.thinking_level
    )
    tools, names = _tools(spec, parent.cwd, kernel)
    config = SessionConfig(
        cwd=parent.cwd,
        agent_dir=parent.config.agent_dir,
        append_prompt=spec.definition.prompt or None,
        persist=path is not None,
    )
    child = AgentSession(
        config=config,
        registry=parent.registry,
        settings=parent.settings,
        store=store,
        model=model,
        thinking_level=level,
        tools=tools,
        active_tool_names=names,
    )
    install_retry(child)
    install_compaction(child)
    # the parent's gate (approvals, extension vetoes) also decides the child's tool calls
    child.hooks.before_tool_call.append(parent.check_tool_call)
    store.append_model_change(f"{model['provider']}/{model['id']}", None)
    store.append_session_init(child.system_prompt, prompt, list(child.active_tool_names), output_schema)

    def on_event(event: SessionEvent) -> None:
        if event["type"] == "tool_execution_start":
            progress.toolCount += 1
            progress.currentTool = event["toolName"]
            intent = event.get("intent")
            if isinstance(intent, str) and intent:
                progress.lastIntent = intent
        elif event["type"] == "tool_execution_end":
            progress.currentTool = None
        elif event["type"] == "message_end":
            message = event["message"]
            if message["role"] == "assistant" and isinstance(message.get("usage"), dict):
                _add_usage(result.usage, message["usage"])
                progress.tokens = int(result.usage.get("totalTokens", 0))
        else:
            return
        progress.durationMs = int((time.monotonic() - started) * 1000)
        on_progress()

    child.subscribe(on_event)
    remove = None
    aborts: list[asyncio.Future[None]] = []
    try:
        progress.status = "running"
        on_progress()
        task = child.start_prompt(prompt, read_mentions=False)  # the model wrote it: no @file reads
        if signal is not None:

            def abort_child() -> None:
                aborts.append(asyncio.ensure_future(child.abort()))

            remove = signal.add_callback(abort_child)
        if task is not None:
            with contextlib.suppress(PromptAborted):  # aborted before its run: reported as aborted below
                await task
        await child.wait_for_idle()
        last = last_assistant(child.messages)
        stop = last.get("stopReason") if last is not None else None
        if (signal is not None and signal.aborted) or stop == "aborted":
            progress.status = "aborted"
            result.output = _text_of(dict(last)) if last is not None else ""
        elif last is None or stop == "error":
            progress.status = "failed"
            result.error = (
                str(last.get("errorMessage") or "the subagent failed") if last is not None else "no answer"
            )
        else:
            progress.status = "completed"
            result.output = _text_of(dict(last))
    except Exception as exc:  # a child failure is reported in the parent's result, never raised
        logger.warning("subagent %s failed", progress.id, exc_info=True)
        progress.status = "failed"
        result.error = str(exc) or type(exc).__name__
    finally:
        if remove is not None:
            remove()
        if aborts:
            await asyncio.gather(*aborts, return_exceptions=True)
        if child.is_streaming:
            await child.abort()
        kernel.kill()
        await child.shutdown_async()
        progress.currentTool = None
        progress.durationMs = int((time.monotonic() - started) * 1000)
        on_progress()
    return result
