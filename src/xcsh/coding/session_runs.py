"""The session's run chain: prompts, queued messages and what happens after each run.

A collaborator of :class:`~xcsh.coding.session.AgentSession` (part of the session core).
A prompt starts a *chain*: after each run the after-run hooks (retry, compaction, TTSR,
reminders, in :data:`~xcsh.coding.hooks.AFTER_RUN_ORDER`) may continue it; the session
reports ``is_streaming`` until the whole chain ends. ``abort`` bumps a generation counter
so that nothing scheduled before it (a back-off, a continuation) runs after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from xcsh.agent.agent import Agent
from xcsh.coding.errors import BUSY_TEXT, PROMPT_ABORTED_TEXT, BusyError, CommandError, PromptAborted
from xcsh.coding.hooks import RunAction, SessionHooks
from xcsh.coding.messages import user_message

if TYPE_CHECKING:
    from xcsh.agent.types import AgentEvent, AgentMessage
    from xcsh.ai.types import ImageContent
    from xcsh.coding.commands import CommandRegistry
    from xcsh.coding.hooks import SlashCommand


class RunChain:
    """Starts and continues the runs of one session; holds what waits for the next prompt."""

    def __init__(
        self,
        agent: Agent,
        *,
        hooks: SessionHooks,
        commands: CommandRegistry,
        cwd: Path,
        require_model: Callable[[], None],
        is_compacting: Callable[[], bool],
        record: Callable[[AgentMessage], None],
    ) -> None:
        self._agent = agent
        self._hooks = hooks
        self._commands = commands
        self._cwd = cwd
        self._require_model = require_model
        self._is_compacting = is_compacting
        self._record = record  # append to the live context and persist (the session's operation)
        self._busy = False
        # the host's run has not reached its agent_end yet (a second prompt is refused);
        # after it, runs the agent starts by itself never make a prompt fail (rpc-protocol §5.1)
        self._host_run_open = False
        self._between_runs = True
        # (text for the model, images, what the host typed: the only text whose @mentions are read,
        # and the future the caller holds: it ends with the chain that ran the prompt, or fails
        # with PromptAborted when an abort comes first)
        self._next_prompt: tuple[str, list[ImageContent] | None, str, asyncio.Future[None]] | None = None
        self._chain: asyncio.Task[None] | None = None
        # the last prompt's task: accepted, but its run may not have started yet (abort waits for it)
        self._starting: asyncio.Task[None] | None = None
        self._generation = 0
        self._hidden_next_turn: list[AgentMessage] = []
        self._pending_bash: list[AgentMessage] = []

    @property
    def busy(self) -> bool:
        """A prompt or chain is in flight (the session's ``is_streaming``)."""
        return self._busy

    @property
    def hidden_count(self) -> int:
        return len(self._hidden_next_turn)

    def on_agent_event(self, event: AgentEvent) -> None:
        """Track run boundaries (called by the session for every agent event)."""
        if event["type"] == "agent_start":
            self._between_runs = False
        elif event["type"] == "agent_end":
            self._between_runs = True
            self._host_run_open = False

    # ---- prompts -------------------------------------------------------------------------
    def start_prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        streaming_behavior: str | None = None,
        *,
        read_mentions: bool = True,
    ) -> asyncio.Future[None] | None:
        """Accept a prompt synchronously; returns the future of its run chain (None when queued).

        Raises :class:`BusyError` when busy without a streaming behaviour, or
        :class:`CommandError` when the model is not available. Slash commands and the
        rest of the work happen in the returned task. The future fails with
        :class:`PromptAborted` when an abort comes before the prompt's run starts: an accepted
        prompt is either run or reported, never silently dropped.

        ``@path`` mentions are read from ``text`` as the host sent it, never from the body a
        slash command, prompt template or skill expands to (a repository's command file must
        not make us read and send ``/proc/self/environ`` or a credentials file); with
        ``read_mentions=False`` (a prompt the model wrote, e.g. a subagent's assignment) none are.
        """
        if not isinstance(text, str):
            raise CommandError("message must be a string")
        command = self.find_command(text)
        if command is not None:
            return asyncio.ensure_future(command.run(text))
        if self._busy:
            if streaming_behavior == "steer":
                self.steer(text, images)
                return None
            if streaming_behavior == "followUp":
                self.follow_up(text, images)
                return None
            if self._host_run_open:
                raise BusyError(BUSY_TEXT)
            self._require_model()
            return self._supersede_continuation(text, images, text if read_mentions else "")
        self._require_model()
        self._busy = True
        self._host_run_open = True
        self._starting = asyncio.ensure_future(
            self._prompt(self._commands.expand(text), images, text if read_mentions else "", self._generation)
        )
        return self._starting

    def _supersede_continuation(
        self, text: str, images: list[ImageContent] | None, typed: str
    ) -> asyncio.Future[None] | None:
        """A prompt after the host's ``agent_end`` while the agent continues by itself.

        A continuation run already streaming finishes and takes the prompt as a follow-up;
        one not started yet (a retry back-off, a reminder or the continue after a
        compaction) is dropped and the prompt runs in its place (rpc-protocol §5.1 decision).
        A compaction in progress finishes first. Returns the prompt's future (None when it
        joined the streaming run as a follow-up): an abort before the prompt's run starts
        fails it with :class:`PromptAborted`, so the host hears of it (rpc-protocol §5.1).
        """
        if not self._between_runs:
            self.follow_up(text, images)
            return None
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._next_prompt = (self._commands.expand(text), images, typed, done)
        self._host_run_open = True
        if not self._is_compacting():
            for hook in self._hooks.after_run_hooks():
                hook.cancel()
        return done

    def _drop_next_prompt(self) -> None:
        """The prompt waiting for its run will not get one (an abort): fail its future."""
        pending, self._next_prompt = self._next_prompt, None
        if pending is not None and not pending[3].done():
            pending[3].set_exception(PromptAborted(PROMPT_ABORTED_TEXT))

    def find_command(self, text: str) -> SlashCommand | None:
        """The extension command that runs ``text``, or None."""
        return self._commands.runnable_for(text)

    async def _prompt(
        self, text: str, images: list[ImageContent] | None, typed: str, generation: int
    ) -> None:
        try:
            if generation != self._generation:  # aborted before the prompt got to run
                raise PromptAborted(PROMPT_ABORTED_TEXT)
            initial = await self._prompt_messages(text, images, typed)
            if generation != self._generation:  # aborted while the pre-prompt checks ran
                raise PromptAborted(PROMPT_ABORTED_TEXT)
            await self._run_chain(initial)
        finally:
            if self._chain is None:
                self._busy = False
                self._host_run_open = False

    async def _prompt_messages(
        self, text: str, images: list[ImageContent] | None, typed: str
    ) -> list[AgentMessage]:
        """The initial messages of a prompt's run (pre-prompt checks run first); ``text`` is
        the expanded prompt, ``typed`` what the host sent (its ``@`` mentions are read)."""
        self._flush_pending_bash()
        for check in self._hooks.pre_prompt_checks():
            await check()
        initial: list[AgentMessage] = []
        for contribute in self._hooks.before_user_message:
            initial.extend(contribute(text))
        initial.append(user_message(text, images))
        initial.extend(self._hidden_next_turn)
        self._hidden_next_turn = []
        if "@" in typed:  # every mention starts with one; without it the module is not needed
            from xcsh.coding.file_mentions import build_file_mention

            mention = build_file_mention(typed, self._cwd)
            if mention is not None:
                initial.append(mention)
        for contribute in self._hooks.after_user_message:
            initial.extend(contribute(text))
        return initial

    async def run_chain_now(self, initial: list[AgentMessage]) -> None:
        """Start a run chain from feature code (e.g. a continuation prompt) when idle."""
        if self._busy:
            raise BusyError(BUSY_TEXT)
        self._busy = True
        try:
            await self._run_chain(initial)
        finally:
            self._busy = self._chain is not None

    async def _run_chain(self, initial: list[AgentMessage]) -> None:
        generation = self._generation
        self._chain = asyncio.current_task()
        carried: list[asyncio.Future[None]] = []  # host prompts this chain took: done when it ends
        try:
            added = await self._agent.prompt(initial)
            while generation == self._generation:
                action = await self._after_run(added)
                if generation != self._generation:
                    break
                if self._next_prompt is not None:
                    # a host prompt that arrived after agent_end replaces the continuation
                    text, images, typed, done = self._next_prompt
                    self._next_prompt = None
                    try:
                        initial = await self._prompt_messages(text, images, typed)
                    except asyncio.CancelledError:
                        done.cancel()
                        raise
                    except Exception as exc:  # a pre-prompt check failed: the prompt's own error
                        if not done.done():
                            done.set_exception(exc)
                        raise
                    if generation != self._generation:
                        if not done.done():
                            done.set_exception(PromptAborted(PROMPT_ABORTED_TEXT))
                        break
                    carried.append(done)
                    added = await self._agent.prompt(initial)
                    continue
                if action is None:
                    break
                if action.kind == "continue":
                    added = await self._agent.continue_run()
                else:
                    added = await self._agent.prompt(action.messages)
        finally:
            self._chain = None
            self._busy = False
            self._host_run_open = False
            self._drop_next_prompt()
            for done in carried:
                if not done.done():
                    done.set_result(None)

    async def _after_run(self, added: list[AgentMessage]) -> RunAction | None:
        for hook in self._hooks.after_run_hooks():
            action = await hook.after_run(added)
            if action is not None:
                return action
        return None

    # ---- queued messages ------------------------------------------------------------------
    def _queueable(self, text: str) -> None:
        command = self.find_command(text)
        if command is not None:
            name = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
            raise ValueError(
                f'Extension command "/{name}" cannot be queued. Use prompt() or execute the command when not streaming.'
            )

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self._queueable(text)
        self._agent.steer(user_message(self._commands.expand(text), images))

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self._queueable(text)
        self._agent.follow_up(user_message(self._commands.expand(text), images))

    def queue_hidden_next_turn(self, message: AgentMessage) -> None:
        """Deliver ``message`` with the next user prompt (after the user message)."""
        self._hidden_next_turn.append(message)

    def drop_held(self, *, bash: bool = True) -> None:
        """Forget the hidden next-turn messages (and the held-back bash results with ``bash``)."""
        self._hidden_next_turn = []
        if bash:
            self._pending_bash = []

    def _flush_pending_bash(self) -> None:
        """Record user-bash results held back during a run (keeps tool pairs adjacent)."""
        for message in self._pending_bash:
            self._record(message)
        self._pending_bash = []

    def record_bash_message(self, message: AgentMessage) -> None:
        """Record a user-bash result: at once when idle, else held back until the next prompt."""
        if self._busy:
            self._pending_bash.append(message)
        else:
            self._record(message)

    # ---- stopping --------------------------------------------------------------------------
    async def abort(self) -> None:
        """Cancel pending continuations and the active run; return once idle."""
        self._generation += 1
        self._drop_next_prompt()  # reported to its host (late error), not silently forgotten
        for hook in self._hooks.after_run_hooks():
            hook.cancel()
        self._agent.abort("aborted")
        current = asyncio.current_task()
        # a prompt accepted in this loop turn has not reached its run yet: it still counts as
        # busy until its task sees the new generation and ends (so a prompt after us is not refused)
        waits = {task for task in (self._chain, self._starting) if task is not None and not task.done()}
        waits.discard(current)  # type: ignore[arg-type]
        if waits:
            await asyncio.wait(waits)
        self._starting = None
        await self._agent.wait_for_idle()
