"""The summariser: prompts, conversation serialisation and the model calls (agent-behaviour §7.4).

Messages are serialised as plain ``[User]: …`` / ``[Assistant]: …`` lines inside
``<conversation>`` so the summariser reads a transcript instead of continuing it.
Up to three calls, all with the summariser system prompt and high reasoning effort:
the history summary, the turn-prefix summary (only when a turn is split), and a
2–3 sentence short summary of the kept messages. They run one after another so the
order of requests is deterministic.

A call that fails with a transient error (same classification and back-off as a run's
retries, §6) is tried again, silently, within the retry budget; a back-off longer than
:data:`MAX_SUMMARY_RETRY_DELAY_MS` ends the compaction instead (§7.4: with no fallback
candidate, "skip to the next candidate" is a failure).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, cast

from xcsh.agent.types import AgentMessage
from xcsh.ai.abort import AbortSignal
from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Context, Model
from xcsh.coding.compaction.errors import (
    CompactionCancelledError,
    CompactionError,
)
from xcsh.coding.compaction.prepare import CompactionPreparation
from xcsh.coding.messages import convert_to_llm, now_ms
from xcsh.coding.retry import RetryPolicy
from xcsh.coding.sessions.context import content_text

TOOL_RESULT_LIMIT = 2000
MAX_LISTED_FILES = 20
NO_PRIOR_HISTORY = "No prior history."
MAX_SUMMARY_RETRY_DELAY_MS = 30_000
SPLIT_TURN_HEADER = "**Turn Context (split turn):**"

SUMMARIZER_SYSTEM_PROMPT = (
    "You are a context summarization assistant. You read a transcript of a conversation between a "
    "user and an AI coding assistant and write a summary that another model will use to continue the "
    "work without the original messages. Do not continue the conversation, do not answer questions "
    "from it, and do not call tools. Output only the summary."
)

_FORMAT = """## Goal
[What the user wants to achieve; several items if the session covers several tasks]

## Constraints & Preferences
- [Requirements and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Completed work]

### In Progress
- [ ] [Current work]

### Blocked
- [Open problems, if any]

## Key Decisions
- **[Decision]**: [Why]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, references or examples needed to continue, or "(none)"]

Keep every section short. Keep exact file paths, function names and error messages."""

SUMMARY_PROMPT = (
    "The transcript above is a conversation to summarize. Write a structured checkpoint summary "
    "that lets another model carry on with the work.\n\nUse exactly this format:\n\n" + _FORMAT
)

UPDATE_SUMMARY_PROMPT = (
    "The transcript above holds NEW messages to merge into the existing summary in "
    "<previous-summary>. Keep everything still relevant from the previous summary, add the new "
    "progress, decisions and context, move finished items from In Progress to Done, and update the "
    "next steps.\n\nUse exactly this format:\n\n" + _FORMAT
)

TURN_PREFIX_PROMPT = """The transcript above is the BEGINNING of a turn that was too long to keep; its end is kept verbatim.
Summarize this beginning so that the kept end can be understood:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Work done and decisions made in this beginning]

## Context for Suffix
- [What is needed to understand the kept recent work]

Be brief; cover only what the kept end depends on."""

SHORT_SUMMARY_PROMPT = (
    "Write a 2-3 sentence recap of the recent work in the transcript above, in the style of a pull "
    "request description: what was being done and where it stands. Output only those sentences."
)


class CompactionDetails(TypedDict):
    readFiles: list[str]
    modifiedFiles: list[str]


class CompactionResult(TypedDict):
    """The ``compact`` response data and ``auto_compaction_end.result`` (rpc-protocol §5.6)."""

    summary: str
    shortSummary: NotRequired[str]
    firstKeptEntryId: str
    tokensBefore: int
    details: NotRequired[CompactionDetails]
    preserveData: NotRequired[dict[str, Any]]


# ---------------------------------------------------------------------------- serialisation


def _tool_call_text(block: Mapping[str, Any]) -> str:
    args = block.get("arguments")
    pairs = args.items() if isinstance(args, Mapping) else []
    rendered = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in pairs)
    return f"{block.get('name', '')}({rendered})"


def _truncate_tool_result(text: str) -> str:
    if len(text) <= TOOL_RESULT_LIMIT:
        return text
    more = len(text) - TOOL_RESULT_LIMIT
    return f"{text[:TOOL_RESULT_LIMIT]}\n[... {more} more characters truncated]"


def serialize_conversation(messages: Sequence[AgentMessage]) -> str:
    """The transcript of ``messages`` (converted for the model first), one block per line group."""
    parts: list[str] = []
    for converted in convert_to_llm(list(messages)):
        message = cast(Mapping[str, Any], converted)
        role = message["role"]
        if role in ("user", "developer"):
            text = content_text(message["content"])
            if text:
                parts.append(f"[{'User' if role == 'user' else 'Developer'}]: {text}")
        elif role == "assistant":
            thinking: list[str] = []
            texts: list[str] = []
            calls: list[str] = []
            for block in message["content"]:
                kind = block.get("type")
                if kind == "thinking":
                    thinking.append(str(block.get("thinking", "")))
                elif kind == "text":
                    texts.append(str(block.get("text", "")))
                elif kind == "toolCall":
                    calls.append(_tool_call_text(block))
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            text = content_text(message["content"])
            if text:
                parts.append(f"[Tool result]: {_truncate_tool_result(text)}")
    return "\n\n".join(parts)


def build_summary_prompt(
    messages: Sequence[AgentMessage],
    *,
    instructions: str,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
) -> str:
    """``<conversation>`` transcript, optional ``<previous-summary>``, then the instructions."""
    prompt = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    prompt += instructions
    if custom_instructions:
        prompt += f"\n\nAdditional focus: {custom_instructions}"
    return prompt


_FILE_BLOCKS_RE = re.compile(r"\n*<(read-files|modified-files)>.*?</\1>", re.DOTALL)


def _file_block(tag: str, paths: list[str]) -> str:
    shown = paths[:MAX_LISTED_FILES]
    lines = list(shown)
    if len(paths) > len(shown):
        lines.append(f"… ({len(paths) - len(shown)} more files omitted)")
    return f"<{tag}>\n" + "\n".join(lines) + f"\n</{tag}>"


def with_file_operations(summary: str, read_files: list[str], modified_files: list[str]) -> str:
    """``summary`` with its ``<read-files>``/``<modified-files>`` blocks replaced by these lists."""
    base = summary
    if "<read-files>" in summary or "<modified-files>" in summary:
        base = _FILE_BLOCKS_RE.sub("", summary).rstrip("\n")
    blocks = []
    if read_files:
        blocks.append(_file_block("read-files", read_files))
    if modified_files:
        blocks.append(_file_block("modified-files", modified_files))
    return base + "".join(f"\n\n{b}" for b in blocks)


# ---------------------------------------------------------------------------- model calls


@dataclass(slots=True, kw_only=True)
class Summarizer:
    """Runs the summariser calls against ``model`` with ``api_key``; ``signal`` aborts them.

    With ``retry`` (enabled), a transient failure is retried after ``sleep`` (seconds; returns
    False when the wait was cancelled, which cancels the compaction).
    """

    model: Model
    api_key: str | None
    reserve_tokens: int
    signal: AbortSignal | None = None
    retry: RetryPolicy | None = None
    sleep: Callable[[float], Awaitable[bool]] | None = None

    async def _call(self, prompt: str, max_tokens: int, failure: str) -> str:
        from xcsh.ai.registry import complete

        context: Context = {
            "systemPrompt": SUMMARIZER_SYSTEM_PROMPT,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": now_ms()}
            ],
        }
        options = StreamOptions(
            api_key=self.api_key, signal=self.signal, max_tokens=max(1, max_tokens), reasoning="high"
        )
        attempt = 0
        while True:
            reply = await complete(self.model, context, options)
            if reply["stopReason"] == "aborted" or self._aborted:
                raise CompactionCancelledError()
            if reply["stopReason"] != "error":
                return "\n".join(b["text"] for b in reply["content"] if b["type"] == "text")
            error = reply.get("errorMessage") or "Unknown error"
            attempt += 1
            delay_ms = self._retry_delay_ms(attempt, error)
            if delay_ms is None:
                raise CompactionError(f"{failure}: {error}")
            assert self.sleep is not None
            if not await self.sleep(delay_ms / 1000) or self._aborted:
                raise CompactionCancelledError()

    @property
    def _aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def _retry_delay_ms(self, attempt: int, error: str) -> int | None:
        """The back-off before retry ``attempt`` of ``error``; None when it is not retried."""
        policy = self.retry
        if policy is None or self.sleep is None or not policy.enabled:
            return None
        from xcsh.ai.errors import is_retryable  # its patterns compile on import: only on an error

        if not is_retryable(error) or attempt > policy.budget_for(error):
            return None
        delay_ms = policy.delay_ms(attempt, error)
        return delay_ms if delay_ms <= MAX_SUMMARY_RETRY_DELAY_MS else None

    async def history(
        self, messages: Sequence[AgentMessage], previous_summary: str | None, custom_instructions: str | None
    ) -> str:
        instructions = UPDATE_SUMMARY_PROMPT if previous_summary else SUMMARY_PROMPT
        prompt = build_summary_prompt(
            messages,
            instructions=instructions,
            previous_summary=previous_summary,
            custom_instructions=custom_instructions,
        )
        return await self._call(prompt, int(0.8 * self.reserve_tokens), "Summarization failed")

    async def turn_prefix(self, messages: Sequence[AgentMessage]) -> str:
        prompt = build_summary_prompt(messages, instructions=TURN_PREFIX_PROMPT)
        return await self._call(prompt, int(0.5 * self.reserve_tokens), "Turn prefix summarization failed")

    async def short(self, messages: Sequence[AgentMessage], history_summary: str) -> str:
        prompt = build_summary_prompt(
            messages, instructions=SHORT_SUMMARY_PROMPT, previous_summary=history_summary
        )
        return await self._call(prompt, min(512, int(0.2 * self.reserve_tokens)), "Short summary failed")

    async def summarize(
        self, preparation: CompactionPreparation, custom_instructions: str | None = None
    ) -> CompactionResult:
        """Run the calls for ``preparation`` and assemble the :class:`CompactionResult`."""
        p = preparation
        if p.messages_to_summarize:
            summary = await self.history(p.messages_to_summarize, p.previous_summary, custom_instructions)
        elif p.is_split_turn:
            summary = NO_PRIOR_HISTORY
        else:
            summary = p.previous_summary or NO_PRIOR_HISTORY
        if p.is_split_turn and p.turn_prefix_messages:
            prefix = await self.turn_prefix(p.turn_prefix_messages)
            summary = f"{summary}\n\n---\n\n{SPLIT_TURN_HEADER}\n\n{prefix}"
        short = await self.short(p.recent_messages, summary)
        read_files, modified_files = p.file_ops.file_lists()
        return {
            "summary": with_file_operations(summary, read_files, modified_files),
            "shortSummary": short,
            "firstKeptEntryId": p.first_kept_entry_id,
            "tokensBefore": p.tokens_before,
            "details": {"readFiles": read_files, "modifiedFiles": modified_files},
            "preserveData": {},
        }
