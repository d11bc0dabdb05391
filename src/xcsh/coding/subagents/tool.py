"""The ``task`` tool: delegate work to child agents that run concurrently in-process.

Contract (reference ``task``): ``{agent, context?, schema?, tasks: [{id, description,
assignment}]}``. Every task runs the named agent (see ``agents``) as its own child
session (see ``child``) with ``context`` + ``assignment`` as its prompt; at most
``task.maxConcurrency`` (32) run at once. Nesting: a child gets ``task`` only while
its depth is below ``task.maxRecursionDepth`` (2) and its definition may spawn; an
agent cannot start itself. Progress arrives as tool updates whose ``details.progress``
lists each child's status, tool count, current tool and tokens. Aborting the parent
aborts every child (queued ones never start) and the call still returns, marking
them ``cancelled``. The result text is a ``<task-summary>`` with a header
``N/M succeeded [duration]`` and one ``<agent id agent>`` block per task holding its
status and final answer (answers over 5000 characters are cut, with a note);
``details``: ``results`` (per task: id, agent, description, status, output, error,
durationMs, tokens, sessionFile), ``totalDurationMs`` and ``usage`` (summed over the
children, counted by session statistics). Class exclusive, abortable.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortSignal
from xcsh.ai.patterns import LazyPattern
from xcsh.coding.subagents.agents import AgentDefinition, ProjectModels, load_agents
from xcsh.coding.tools.errors import ToolError

if TYPE_CHECKING:
    from xcsh.agent.types import AgentToolResult, ToolUpdate
    from xcsh.coding.discovery import Discovered
    from xcsh.coding.session import AgentSession
    from xcsh.coding.subagents.child import ChildResult

PREVIEW_CHARS = 5000
_ID_RE = LazyPattern(r"^[A-Za-z0-9_.-]{1,48}$")
AgentLoader = Callable[[], list[AgentDefinition]]


def _duration(ms: int) -> str:
    return f"{ms / 1000:.1f}s" if ms < 60_000 else f"{ms // 60_000}m{(ms % 60_000) // 1000:02d}s"


def _status(result: ChildResult) -> str:
    return {"completed": "completed", "aborted": "cancelled"}.get(result.progress.status, "failed")


def _summary(results: list[ChildResult], total_ms: int) -> str:
    ok = sum(1 for r in results if r.progress.status == "completed")
    cancelled = sum(1 for r in results if r.progress.status == "aborted")
    note = f" ({cancelled} cancelled)" if cancelled else ""
    blocks: list[str] = []
    for result in results:
        output = result.output.strip() or (f"Error: {result.error}" if result.error else "(no output)")
        if len(output) > PREVIEW_CHARS:
            cut = output[:PREVIEW_CHARS]
            output = cut[: cut.rfind("\n")] if "\n" in cut else cut
            output += f"\n[answer cut at {PREVIEW_CHARS} characters; the full text is in the child session]"
        progress = result.progress
        blocks.append(
            f'<agent id="{progress.id}" agent="{progress.agent}">\n<status>{_status(result)}</status>\n'
            f"<result>\n{output}\n</result>\n</agent>"
        )
    body = "\n---\n".join(blocks)
    header = f"<header>{ok}/{len(results)} succeeded{note} [{_duration(total_ms)}]</header>"
    return f"<task-summary>\n{header}\n\n{body}\n</task-summary>"


def _validate(
    args: dict[str, Any], agents: dict[str, AgentDefinition]
) -> tuple[AgentDefinition, list[dict[str, str]]]:
    name = args.get("agent")
    if not isinstance(name, str) or not name.strip():
        raise ToolError(f"agent is required. Available: {', '.join(agents)}")
    definition = agents.get(name.strip())
    if definition is None:
        raise ToolError(f'Unknown agent "{name}". Available: {", ".join(agents)}')
    tasks = args.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ToolError("tasks must be a non-empty array of {id, description, assignment}")
    seen: set[str] = set()
    problems: list[str] = []
    clean: list[dict[str, str]] = []
    for index, task in enumerate(tasks):
        if not isinstance(task, dict):
            problems.append(f"tasks[{index}] is not an object")
            continue
        task_id, assignment = task.get("id"), task.get("assignment")
        if not isinstance(task_id, str) or not _ID_RE.match(task_id):
            problems.append(f"tasks[{index}].id must be 1-48 letters, digits, '_', '-' or '.'")
        elif task_id in seen:
            problems.append(f"tasks[{index}].id {task_id!r} is used twice")
        if not isinstance(assignment, str) or not assignment.strip():
            problems.append(f"tasks[{index}].assignment is required")
        if isinstance(task_id, str):
            seen.add(task_id)
        description = task.get("description")
        clean.append(
            {
                "id": str(task_id),
                "description": description if isinstance(description, str) else "",
                "assignment": assignment if isinstance(assignment, str) else "",
            }
        )
    if problems:
        raise ToolError("Invalid tasks: " + "; ".join(problems))
    return definition, clean


def _output_schema(schema: object) -> Any:
    """The ``schema`` argument as the ``outputSchema`` of a child's ``session_init``: the JSON
    it holds, the text itself when it is not JSON, None when absent or blank."""
    if not isinstance(schema, str) or not schema.strip():
        return None
    import json

    try:
        return json.loads(schema)
    except ValueError:
        return schema.strip()


def _prompt(context: object, schema: object, assignment: str) -> str:
    parts = []
    if isinstance(context, str) and context.strip():
        parts.append(f"<context>\n{context.strip()}\n</context>")
    parts.append(f"<assignment>\n{assignment.strip()}\n</assignment>")
    if isinstance(schema, str) and schema.strip():
        parts.append(f"End with your answer as JSON matching this schema (JTD):\n{schema.strip()}")
    return "\n\n".join(parts)


def _parameters(agents: list[AgentDefinition]) -> dict[str, Any]:
    listing = "; ".join(f"{a.name}: {a.description}" for a in agents)
    return {
        "type": "object",
        "properties": {
            "agent": {
                "type": "string",
                "description": f"Agent type for every task of this call. Available: {listing}",
            },
            "context": {
                "type": "string",
                "description": "Background shared by every task (goal, constraints, conventions, paths); put it here once.",
            },
            "schema": {
                "type": "string",
                "description": "Optional JTD schema (JSON text) the answers must follow.",
            },
            "tasks": {
                "type": "array",
                "minItems": 1,
                "description": "Tasks run in parallel, each by its own subagent. Keep each small and self-contained.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {
                            "type": "string",
                            "maxLength": 48,
                            "description": "Short CamelCase identifier.",
                        },
                        "description": {
                            "type": "string",
                            "description": "One-line label for display (not sent to the subagent).",
                        },
                        "assignment": {
                            "type": "string",
                            "description": "Complete instructions for this subagent: target, change, edge cases, how to check it.",
                        },
                    },
                    "required": ["id", "description", "assignment"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["agent", "tasks"],
        "additionalProperties": False,
    }


_DESCRIPTION = (
    "Delegate work to subagents that run in parallel, each with its own fresh context and tools, and get "
    "back their final answers. Use it for independent pieces of a larger job (exploring several areas, "
    "changing separate files) or to keep long investigations out of your context. Subagents see only "
    "`context` and their `assignment`, not this conversation, so make both complete. Do not give two tasks "
    "overlapping files to edit."
)


def project_models(parent: AgentSession, grant: bool) -> ProjectModels:
    """The policy on project definitions' models for ``parent``'s project: trusted by name
    (``--trust`` on this run — ``grant`` —, ``trust.projects``, or a stored, unchanged trust)."""
    agent_dir = parent.config.agent_dir

    def trusted() -> bool:
        from xcsh.coding import trust  # only once a project definition sets a model or level

        listed = parent.settings.get_user(trust.PROJECTS_SETTING) or []
        dirs = [str(d) for d in listed] if isinstance(listed, list) else []
        return trust.named_by_user(parent.cwd, agent_dir, grant=grant, trusted_dirs=dirs)

    how = f"To allow it, run with --trust or add {parent.cwd} to trust.projects in {agent_dir / 'config.yml'}"
    return ProjectModels(trusted, how)


def create_task_tool(
    parent: AgentSession,
    depth: int = 0,
    current: AgentDefinition | None = None,
    loader: AgentLoader | None = None,
    *,
    models: ProjectModels | None = None,
) -> AgentTool:
    """The ``task`` tool of ``parent`` at nesting ``depth`` (0 = the top session).

    ``models``: whether project definitions may choose their model (default: only when the
    user trusted the project by name, :func:`project_models`); nested tools share it."""

    project = parent.config.project
    session_discovery = project.discovered if project is not None else None
    # where the session looked (its home and --plugin-dir folders), so every walk sees the same places
    home = session_discovery.context.home if session_discovery is not None else Path.home()
    plugin_dirs = session_discovery.context.plugin_dirs if session_discovery is not None else ()
    trust = session_discovery.context.trust if session_discovery is not None else None

    policy = models if models is not None else project_models(parent, grant=trust is not None and trust.grant)

    def load(known: Discovered | None = None) -> list[AgentDefinition]:
        if loader is not None:
            return policy.apply(loader())
        disabled = parent.settings.get("task.disabledAgents") or []
        found = load_agents(
            parent.cwd,
            home,
            parent.config.agent_dir,
            [str(d) for d in disabled],
            plugin_dirs=plugin_dirs,
            known=known,
            trust=trust,
        )
        return policy.apply(found)

    # the definitions the tool's schema lists: from the session's own discovery when it was made for
    # the same context (load_agents checks); every call walks again, as files may have changed since
    listed = load(session_discovery)

    def nested(session: AgentSession, definition: AgentDefinition, child_depth: int) -> AgentTool:
        return create_task_tool(session, child_depth, definition, loader, models=policy)

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        from xcsh.coding.subagents.child import ChildSpec, Progress, run_child  # the runner: loaded on use

        agents = {a.name: a for a in load()}
        definition, tasks = _validate(args, agents)
        if current is not None:
            if definition.name == current.name:
                raise ToolError(
                    f"Cannot spawn {current.name} from within itself (recursion prevention). Use another agent."
                )
            if not current.may_spawn(definition.name):
                allowed = "*" if current.spawns == "*" else ", ".join(current.spawns) or "none"
                raise ToolError(f"Cannot spawn '{definition.name}' from {current.name}. Allowed: {allowed}")
        max_depth = parent.settings.get_int("task.maxRecursionDepth", 2)
        limit = max(1, parent.settings.get_int("task.maxConcurrency", 32))
        spec = ChildSpec(
            parent=parent, definition=definition, depth=depth, max_depth=max_depth, make_task_tool=nested
        )
        progress = [Progress(i, t["id"], definition.name, t["description"]) for i, t in enumerate(tasks)]
        started = time.monotonic()

        def push() -> None:
            running = sum(1 for p in progress if p.status == "running")
            done = sum(1 for p in progress if p.status in ("completed", "failed", "aborted"))
            text = f"Running {len(tasks)} {definition.name} agent{'s' if len(tasks) != 1 else ''}: {running} running, {done} done"
            on_update(
                {
                    "content": [{"type": "text", "text": text}],
                    "details": {"progress": [p.as_dict() for p in progress]},
                }
            )

        gate = asyncio.Semaphore(limit)

        async def one(index: int) -> ChildResult:
            async with gate:
                prompt = _prompt(args.get("context"), args.get("schema"), tasks[index]["assignment"])
                schema = _output_schema(args.get("schema"))
                return await run_child(spec, progress[index], prompt, signal, push, schema)

        push()
        results = await asyncio.gather(*(one(i) for i in range(len(tasks))))
        total_ms = int((time.monotonic() - started) * 1000)
        usage: dict[str, Any] = {}
        for result in results:
            for key, value in result.usage.items():
                if isinstance(value, int | float):
                    usage[key] = usage.get(key, 0) + value
                elif isinstance(value, dict):
                    into = usage.setdefault(key, {})
                    for k, v in value.items():
                        into[k] = into.get(k, 0) + v
        details: dict[str, Any] = {
            "results": [
                {
                    **{
                        k: v
                        for k, v in r.progress.as_dict().items()
                        if k in ("index", "id", "agent", "description", "durationMs", "tokens", "sessionFile")
                    },
                    "status": _status(r),
                    "output": r.output,
                    **({"error": r.error} if r.error else {}),
                }
                for r in results
            ],
            "totalDurationMs": total_ms,
        }
        if usage:
            details["usage"] = usage
        return {"content": [{"type": "text", "text": _summary(list(results), total_ms)}], "details": details}

    return AgentTool(
        name="task",
        label="Task",
        description=_DESCRIPTION,
        parameters=_parameters(listed),
        execute=execute,
        concurrency="exclusive",
        abortable=True,
    )
