"""One async method per protocol command (rpc-protocol §5), building frames from :mod:`xcsh.rpc.commands`.

Each method sends its command, waits for the response (within the per-command timeout)
and returns the typed ``data`` (or None for commands without data), raising
:class:`~xcsh.rpc.client.RpcError` when the command fails. ``tests/rpc`` checks that every
command of the schema has a method here and on the sync client.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from xcsh.ai.types import ImageContent, Model
from xcsh.rpc import commands as c
from xcsh.rpc import results as r

Frame = dict[str, Any]
QueueMode = c.QueueModeField
ThinkingLevel = c.ThinkingLevelField


def _with(frame: Frame, **optional: Any) -> Frame:
    """``frame`` plus the optional fields that are set."""
    frame.update({k: v for k, v in optional.items() if v is not None})
    return frame


class AsyncCommands:
    """The command methods; the client provides :meth:`call`."""

    async def call(self, command: Frame, *, timeout: float | None = None) -> Any:
        raise NotImplementedError

    # ---- prompting (§5.1) ----------------------------------------------------------------------
    async def prompt(
        self,
        message: str,
        *,
        images: list[ImageContent] | None = None,
        streaming_behavior: Literal["steer", "followUp"] | None = None,
        locale: str | None = None,
    ) -> None:
        """Start a run (answered at once); follow it with :meth:`wait_for_idle` or the events."""
        frame = _with(
            {"type": "prompt", "message": message}, images=images, streamingBehavior=streaming_behavior
        )
        await self.call(_with(frame, locale=locale))

    async def steer(self, message: str, *, images: list[ImageContent] | None = None) -> None:
        await self.call(_with({"type": "steer", "message": message}, images=images))

    async def follow_up(self, message: str, *, images: list[ImageContent] | None = None) -> None:
        await self.call(_with({"type": "follow_up", "message": message}, images=images))

    async def abort(self) -> None:
        await self.call({"type": "abort"})

    async def abort_and_prompt(self, message: str, *, images: list[ImageContent] | None = None) -> None:
        await self.call(_with({"type": "abort_and_prompt", "message": message}, images=images))

    async def new_session(self, parent_session: str | None = None) -> r.CancelledResult:
        return cast(
            r.CancelledResult, await self.call(_with({"type": "new_session"}, parentSession=parent_session))
        )

    # ---- state (§5.2) --------------------------------------------------------------------------
    async def get_state(self) -> r.SessionState:
        return cast(r.SessionState, await self.call({"type": "get_state"}))

    async def set_todos(self, phases: list[c.TodoPhaseInput]) -> r.TodosResult:
        return cast(r.TodosResult, await self.call({"type": "set_todos", "phases": phases}))

    async def set_host_tools(self, tools: list[c.HostToolDefinition]) -> list[str]:
        """Register host tools (answer their calls with :meth:`on_host_tool`); returns their names."""
        data = cast(r.HostToolsResult, await self.call({"type": "set_host_tools", "tools": tools}))
        return list(data["toolNames"])

    async def get_integrations(self) -> r.IntegrationsResult:
        return cast(r.IntegrationsResult, await self.call({"type": "get_integrations"}))

    async def set_locale(self, locale: str) -> None:
        await self.call({"type": "set_locale", "locale": locale})

    # ---- model and thinking (§5.3–§5.4) ---------------------------------------------------------
    async def set_model(self, provider: str, model_id: str) -> Model:
        return cast(Model, await self.call({"type": "set_model", "provider": provider, "modelId": model_id}))

    async def cycle_model(self) -> r.CycleModelResult | None:
        return cast("r.CycleModelResult | None", await self.call({"type": "cycle_model"}))

    async def get_available_models(self) -> list[Model]:
        data = cast(r.ModelsResult, await self.call({"type": "get_available_models"}))
        return list(data["models"])

    async def set_thinking_level(self, level: ThinkingLevel) -> None:
        await self.call({"type": "set_thinking_level", "level": level})

    async def cycle_thinking_level(self) -> r.ThinkingLevelResult | None:
        return cast("r.ThinkingLevelResult | None", await self.call({"type": "cycle_thinking_level"}))

    # ---- queue modes (§5.5) ---------------------------------------------------------------------
    async def set_steering_mode(self, mode: QueueMode) -> None:
        await self.call({"type": "set_steering_mode", "mode": mode})

    async def set_follow_up_mode(self, mode: QueueMode) -> None:
        await self.call({"type": "set_follow_up_mode", "mode": mode})

    async def set_interrupt_mode(self, mode: Literal["immediate", "wait"]) -> None:
        await self.call({"type": "set_interrupt_mode", "mode": mode})

    # ---- compaction, retry, bash (§5.6–§5.8) -----------------------------------------------------
    async def compact(
        self, custom_instructions: str | None = None, *, timeout: float | None = None
    ) -> r.CompactionResult:
        frame = _with({"type": "compact"}, customInstructions=custom_instructions)
        return cast(r.CompactionResult, await self.call(frame, timeout=timeout))

    async def set_auto_compaction(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_compaction", "enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_retry", "enabled": enabled})

    async def abort_retry(self) -> None:
        await self.call({"type": "abort_retry"})

    async def bash(self, command: str, *, timeout: float | None = None) -> r.BashResult:
        """Run a shell command (answered when it ends: pass a ``timeout`` above its run time)."""
        return cast(r.BashResult, await self.call({"type": "bash", "command": command}, timeout=timeout))

    async def abort_bash(self) -> None:
        await self.call({"type": "abort_bash"})

    # ---- session and messages (§5.9–§5.10) -------------------------------------------------------
    async def get_session_stats(self) -> r.SessionStats:
        return cast(r.SessionStats, await self.call({"type": "get_session_stats"}))

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the HTML export; returns its path."""
        data = cast(r.ExportResult, await self.call(_with({"type": "export_html"}, outputPath=output_path)))
        return str(data["path"])

    async def switch_session(self, session_path: str) -> r.CancelledResult:
        return cast(
            r.CancelledResult, await self.call({"type": "switch_session", "sessionPath": session_path})
        )

    async def branch(self, entry_id: str) -> r.BranchResult:
        return cast(r.BranchResult, await self.call({"type": "branch", "entryId": entry_id}))

    async def get_branch_messages(self) -> list[r.BranchMessage]:
        data = cast(r.BranchMessagesResult, await self.call({"type": "get_branch_messages"}))
        return list(data["messages"])

    async def get_last_assistant_text(self) -> str | None:
        """The last assistant text, or None when there is none."""
        data = await self.call({"type": "get_last_assistant_text"})
        text = data.get("text") if isinstance(data, dict) else None
        return text if isinstance(text, str) else None

    async def set_session_name(self, name: str) -> None:
        await self.call({"type": "set_session_name", "name": name})

    async def get_messages(self) -> list[r.AgentMessage]:
        data = cast(r.MessagesResult, await self.call({"type": "get_messages"}))
        return list(data["messages"])

    # ---- beyond the reference (docs/host-commands.md) ----------------------------------------------
    async def get_commands(self) -> list[r.CommandInfo]:
        data = cast(r.CommandsResult, await self.call({"type": "get_commands"}))
        return list(data["commands"])

    async def clear_queue(self) -> r.ClearedQueue:
        """Drop the queued steering and follow-up messages; returns their texts."""
        return cast(r.ClearedQueue, await self.call({"type": "clear_queue"}))

    async def list_sessions(self, scope: str = "cwd") -> list[r.SessionInfo]:
        """Stored sessions (``scope`` ``cwd`` or ``all``), most recently modified first."""
        data = cast(r.SessionsResult, await self.call({"type": "list_sessions", "scope": scope}))
        return list(data["sessions"])

    async def get_tree(self) -> r.TreeResult:
        return cast(r.TreeResult, await self.call({"type": "get_tree"}))

    async def get_tools(self) -> list[r.ToolDetails]:
        data = cast(r.ToolsResult, await self.call({"type": "get_tools"}))
        return list(data["tools"])

    async def set_active_tools(self, tool_names: list[str]) -> list[str]:
        """Make exactly these registered tools active; returns the active names."""
        data = cast(r.HostToolsResult, await self.call({"type": "set_active_tools", "toolNames": tool_names}))
        return list(data["toolNames"])
