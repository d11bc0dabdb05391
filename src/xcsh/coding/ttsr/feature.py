"""TTSR in the session: watch the stream, interrupt on a rule match, inject the rule, continue.

On a match whose interrupt mode applies (agent-behaviour §12.3) the run is aborted and
``ttsr_triggered`` emitted; when the run has ended, the aborted assistant message is
dropped from the live context (``ttsr.contextMode`` ``discard``), a hidden
``ttsr-injection`` custom message is appended and persisted with a ``ttsr_injection``
entry, and the agent continues. A match that does not interrupt is injected as a
follow-up once the assistant message completes.

Imported by :func:`.setup.install` only when the session has rules (docs/performance.md,
profile 16): the matcher is not needed to start a session without any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from xcsh.agent.types import AgentEvent, AgentMessage, AssistantMessage, MessageUpdateEvent
from xcsh.coding.hooks import RunAction
from xcsh.coding.messages import custom_message
from xcsh.coding.ttsr.matcher import MatchContext, TtsrMatcher, path_candidates, should_interrupt
from xcsh.coding.ttsr.rules import Rule

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession

INJECTION_TYPE = "ttsr-injection"
INTERRUPT_TEMPLATE = (
    '<system-interrupt reason="rule_violation" rule="{name}" path="{path}">\n'
    "Your previous output was stopped because it broke a rule set for this project.\n"
    "This notice comes from the coding agent itself, not from a tool or a file. Follow the rule:\n"
    "\n"
    "{content}\n"
    "</system-interrupt>"
)


def injection_text(rules: list[Rule]) -> str:
    """The content of a ``ttsr-injection`` message: one ``<system-interrupt>`` block per rule."""
    return "\n\n".join(
        INTERRUPT_TEMPLATE.format(name=r["name"], path=r["path"], content=r["content"]) for r in rules
    )


def injection_message(rules: list[Rule]) -> AgentMessage:
    return custom_message(
        INJECTION_TYPE,
        injection_text(rules),
        display=False,
        details={"rules": [r["name"] for r in rules]},
    )


def injected_names(entries: list[Any]) -> list[str]:
    """Rule names recorded by the session's ``ttsr_injection`` entries."""
    names: list[str] = []
    for entry in entries:
        rules = entry.get("injectedRules") if entry.get("type") == "ttsr_injection" else None
        if isinstance(rules, list):  # a hand-edited entry may hold anything
            names.extend(n for n in rules if isinstance(n, str))
    return names


class TtsrFeature:
    """Stream watcher (an agent listener) and post-run handler of one session."""

    def __init__(self, session: AgentSession, matcher: TtsrMatcher) -> None:
        self.session = session
        self.matcher = matcher
        self.pending: list[Rule] = []
        self.interrupting = False
        self._target: int | None = None

    # ---- stream watching -------------------------------------------------------------
    def on_agent_event(self, event: AgentEvent) -> None:
        """Agent listener (runs after the session has forwarded the event to hosts)."""
        if event["type"] == "turn_start":
            self.matcher.reset_buffers()
        elif event["type"] == "turn_end":
            self.matcher.count_turn()
        elif event["type"] == "message_update":
            if not self.interrupting:
                self._check(event)
        elif event["type"] == "message_end":
            self._message_end(event["message"])

    def _context(self, update: Mapping[str, Any], message: AssistantMessage) -> MatchContext | None:
        kind = update.get("type")
        if kind == "text_delta":
            return MatchContext(source="text")
        if kind == "thinking_delta":
            return MatchContext(source="thinking")
        if kind != "toolcall_delta":
            return None
        index = update.get("contentIndex", -1)
        content = message.get("content") or []
        block = content[index] if isinstance(index, int) and 0 <= index < len(content) else None
        if not isinstance(block, dict) or block["type"] != "toolCall":
            return MatchContext(source="tool")
        name = str(block.get("name") or "")
        key = f"toolcall:{block['id']}" if block.get("id") else f"tool:{name}:{index}"
        return MatchContext(
            source="tool",
            tool_name=name,
            stream_key=key,
            file_paths=path_candidates(block.get("arguments"), str(self.session.cwd)),
        )

    def _check(self, event: MessageUpdateEvent) -> None:
        update = event["assistantMessageEvent"]
        context = self._context(update, event["message"])
        if context is None:
            return
        matches = self.matcher.check(str(update.get("delta", "")), context)
        if not matches:
            return
        known = {r["name"] for r in self.pending}
        self.pending.extend(r for r in matches if r["name"] not in known)
        mode = str(self.session.settings.get("ttsr.interruptMode", "always"))
        if not should_interrupt(matches, context.source, mode):
            return
        self.interrupting = True
        self._target = event["message"]["timestamp"]
        self.session.interrupt_run("ttsr")
        self.session.emit({"type": "ttsr_triggered", "rules": matches})

    def _message_end(self, message: AgentMessage) -> None:
        if message["role"] == "custom" and message.get("customType") == INJECTION_TYPE:
            # a deferred injection was delivered (and persisted by the session)
            details = message.get("details") or {}
            self._record([n for n in details.get("rules") or [] if isinstance(n, str)])
            return
        if message["role"] != "assistant" or self.interrupting or not self.pending:
            return
        rules, self.pending = self.pending, []
        if message.get("stopReason") in ("aborted", "error"):
            return
        self.session.queue_follow_up(injection_message(rules))

    def _record(self, names: list[str]) -> None:
        names = list(dict.fromkeys(n.strip() for n in names if n.strip()))
        if names:
            self.matcher.mark_injected(names)
            self.session.store.append_ttsr_injection(names)

    # ---- post-run ------------------------------------------------------------------------
    async def after_run(self, added: list[AgentMessage]) -> RunAction | None:
        session = self.session
        if not self.interrupting:
            return None
        self.interrupting = False
        rules, self.pending = self.pending, []
        target = self._target_message()
        if target is None or not rules:
            return None
        if session.settings.get("ttsr.contextMode", "discard") == "discard":
            session.truncate_context_at(target)
        session.append_message(injection_message(rules))
        self._record([r["name"] for r in rules])
        return RunAction("continue")

    def _target_message(self) -> AssistantMessage | None:
        """The interrupted assistant message (the newest one with the recorded timestamp)."""
        for message in self.session.messages[::-1]:
            if message["role"] == "assistant" and (
                self._target is None or message["timestamp"] == self._target
            ):
                return message
        return None

    def cancel(self) -> None:
        """An abort (or session switch) drops any scheduled injection."""
        self.interrupting = False
        self.pending = []

    # ---- session changes -----------------------------------------------------------------
    def restore(self) -> None:
        self.matcher.forget_injections()
        self.matcher.restore_injected(injected_names(list(self.session.store.entries)))

    def on_session_change(self, reason: str) -> None:
        self.cancel()
        self.restore()
