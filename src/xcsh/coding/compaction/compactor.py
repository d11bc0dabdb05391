"""Compaction in the session: the ``compact`` command and automatic compaction (agent-behaviour §7).

:class:`Compactor` is both a post-run handler and a pre-prompt check:

* after a run, an overflowing reply (provider says the prompt was too long, or the
  usage exceeds the window) is dropped from the live context (also with automatic
  compaction off) and *overflow* compaction runs, then the agent continues after
  ~100 ms; otherwise old tool outputs are pruned (:mod:`.prune`) and a reply whose
  context, minus what pruning saved since it was measured, passes the threshold
  triggers *threshold* compaction followed, with ``compaction.autoContinue``, by a
  ``Continue if you have next steps.`` developer prompt;
* before a prompt the same checks run against the last assistant message of the
  live context (without continuing afterwards: the prompt's own run is the retry).

Automatic compaction is framed by ``auto_compaction_start``/``auto_compaction_end``;
manual compaction emits no events and raises :class:`CompactionError` instead.
The summaries come from the current model.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from xcsh.ai.abort import AbortController
from xcsh.coding.auto_settings import auto_compaction_enabled
from xcsh.coding.compaction.errors import (
    AlreadyCompactedError,
    CompactionCancelledError,
    CompactionError,
    NothingToCompactError,
)
from xcsh.coding.hooks import RunAction
from xcsh.coding.messages import developer_message, last_assistant
from xcsh.coding.retry import CancellableSleep, RetryPolicy
from xcsh.coding.sessions.entries import SessionError
from xcsh.coding.sessions.store import SessionWriteError

if TYPE_CHECKING:
    from xcsh.agent.types import AgentMessage
    from xcsh.ai.types import Model
    from xcsh.coding.compaction.prune import PruneSettings
    from xcsh.coding.compaction.summarize import CompactionResult
    from xcsh.coding.compaction.tokens import ThresholdSettings
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession

logger = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]
CONTINUE_TEXT = "Continue if you have next steps."
OVERFLOW_RETRY_DELAY_S = 0.1


class NoModelError(CompactionError):
    def __init__(self) -> None:
        super().__init__("No model selected")


class NoApiKeyError(CompactionError):
    def __init__(self, provider: str) -> None:
        super().__init__(f"No API key for {provider}")


# Outcomes reported as ``skipped`` rather than as failures (§7.6).
_SKIPPED = (NothingToCompactError, AlreadyCompactedError, NoModelError, NoApiKeyError)


def _number(value: Any) -> float:
    """A numeric setting; anything else counts as unset (-1)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return -1.0


def _is_before_compaction(message: AgentMessage, context: Sequence[AgentMessage]) -> bool:
    """True when ``message`` predates the latest compaction of the live context."""
    from xcsh.coding.compaction.facts import latest_summary_time  # with the first prompt (or warm-up)

    summarised = latest_summary_time(context)
    return summarised is not None and int(message.get("timestamp") or 0) < summarised


class Compactor:
    """Manual and automatic compaction for one session (see the module docstring)."""

    def __init__(self, session: AgentSession, *, sleep: Sleep = asyncio.sleep) -> None:
        self._session = session
        self._pause = CancellableSleep(sleep)
        self._controller: AbortController | None = None
        # what the last after-run check saw when it found nothing to do (see _checked_quiet)
        self._quiet: tuple[Any, ...] | None = None
        self._pruned_nothing = False

    # ---- settings ------------------------------------------------------------------------
    @property
    def auto_enabled(self) -> bool:
        return auto_compaction_enabled(self._session.settings)

    def _threshold_settings(self) -> ThresholdSettings:
        from xcsh.coding.compaction.tokens import ThresholdSettings

        settings = self._session.settings
        return ThresholdSettings(
            reserve_tokens=settings.get_int("compaction.reserveTokens", 16384),
            threshold_percent=_number(settings.get("compaction.thresholdPercent", -1)),
            threshold_tokens=settings.get_int("compaction.thresholdTokens", -1),
        )

    def _prune_settings(self) -> PruneSettings:
        from xcsh.coding.compaction.prune import MINIMUM_SAVINGS, PROTECT_TOKENS, PruneSettings

        settings = self._session.settings
        return PruneSettings(
            protect_tokens=settings.get_int("compaction.pruneProtectTokens", PROTECT_TOKENS),
            minimum_savings=settings.get_int("compaction.pruneMinimumSavings", MINIMUM_SAVINGS),
        )

    def _window(self, model: Model) -> int:
        return int(model.get("contextWindow") or 0)

    # ---- the compaction itself -----------------------------------------------------------
    def _credentials(self) -> tuple[Model, str | None]:
        session = self._session
        model = session.model
        if not model:
            raise NoModelError()
        if not session.registry.is_available(model):
            raise NoApiKeyError(model["provider"])
        return model, session.registry.api_key_for(model["provider"])

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Summarise the older part of the branch, append the entry, rebuild the live context.

        The caller makes sure no run is active. Raises :class:`CompactionError` with
        the protocol's error text.
        """
        with self._session.compacting():
            return await self._compact(custom_instructions)

    async def _compact(self, custom_instructions: str | None) -> CompactionResult:
        # what a compaction runs is imported when one runs: the hooks are in every session
        from xcsh.coding.compaction.prepare import prepare_compaction
        from xcsh.coding.compaction.summarize import Summarizer

        session = self._session
        model, api_key = self._credentials()
        store = session.store
        preparation = prepare_compaction(
            store.branch_path(store.leaf_id),
            keep_recent_tokens=session.settings.get_int("compaction.keepRecentTokens", 20000),
        )
        controller = AbortController()
        self._controller = controller
        summarizer = Summarizer(
            model=model,
            api_key=api_key,
            reserve_tokens=session.settings.get_int("compaction.reserveTokens", 16384),
            signal=controller.signal,
            retry=RetryPolicy.from_settings(session.settings),
            sleep=self._pause,
        )
        try:
            result = await summarizer.summarize(preparation, custom_instructions)
        finally:
            self._controller = None
        if controller.signal.aborted or session.store is not store:
            raise CompactionCancelledError()
        # a rewrite still running (pruning just before) ends first, off the loop; if it failed,
        # the compaction fails with its error as the append would (the store latched it)
        await asyncio.to_thread(store.flush)
        if session.store is not store:
            raise CompactionCancelledError()
        store.append_compaction(
            result["summary"],
            result["firstKeptEntryId"],
            result["tokensBefore"],
            result.get("shortSummary"),
            result.get("details"),
            result.get("preserveData"),
        )
        session.reload_context()
        return result

    # ---- automatic compaction -----------------------------------------------------------
    async def _auto(
        self, reason: Literal["threshold", "overflow"], *, will_retry: bool
    ) -> CompactionResult | None:
        """Compact with ``auto_compaction_*`` events; the result, or None when it did not happen."""
        session = self._session
        action = "context-full"
        session.emit({"type": "auto_compaction_start", "reason": reason, "action": action})
        end: Literal["auto_compaction_end"] = "auto_compaction_end"
        try:
            result = await self.compact()
        except CompactionCancelledError:
            session.emit({"type": end, "action": action, "aborted": True, "willRetry": False})
            return None
        except _SKIPPED:
            session.emit(
                {"type": end, "action": action, "aborted": False, "willRetry": False, "skipped": True}
            )
            return None
        except (CompactionError, SessionError) as exc:  # SessionError: the entry could not be written
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            message = f"{prefix}: {exc}"
            session.emit(
                {"type": end, "action": action, "aborted": False, "willRetry": False, "errorMessage": message}
            )
            return None
        session.emit(
            {"type": end, "action": action, "result": result, "aborted": False, "willRetry": will_retry}
        )
        return result

    def _overflowed(self, message: AgentMessage) -> bool:
        model = self._session.model
        if message.get("provider") != model["provider"] or message.get("model") != model["id"]:
            return False
        if message.get("stopReason") == "error":
            from xcsh.ai.errors import is_context_overflow  # patterns compiled on import: only on an error

            return is_context_overflow(str(message.get("errorMessage") or ""))
        from xcsh.coding.compaction.tokens import overflows_window

        return message.get("stopReason") != "aborted" and overflows_window(message, self._window(model))

    def _prune(self) -> None:
        """Prune old tool outputs of the live context and the session file (§7.2)."""
        from xcsh.coding.compaction.prune import apply_pruning, plan_pruning

        session = self._session
        context = list(session.messages)
        plan = plan_pruning(context, self._prune_settings())
        self._pruned_nothing = not plan.outputs
        if not plan.outputs:
            return
        try:
            apply_pruning(plan, context, session.store)
        except SessionWriteError:
            # memory is pruned below; the store latched the error and reports it on the next write
            logger.warning("could not rewrite the session file after pruning tool outputs", exc_info=True)
            return
        finally:
            session.replace_messages(
                {
                    i: new
                    for i, (new, old) in enumerate(zip(context, session.messages, strict=True))
                    if new is not old
                }
            )
        if plan.outputs:
            logger.info("pruned %d tool outputs (~%d tokens)", len(plan.outputs), plan.tokens_saved)

    def _inputs(self, message: AgentMessage, context: Sequence[AgentMessage]) -> tuple[Any, ...]:
        """Everything the checks of ``message`` read: the live context (its messages, compared
        by identity first), the settings and their version, and the model's fields they use."""
        session = self._session
        model = session.model
        settings = session.settings
        return (
            message,
            tuple(context),
            settings,
            settings.version,
            model.get("provider"),
            model.get("id"),
            model.get("contextWindow"),
        )

    def _checked_quiet(self, message: AgentMessage, context: Sequence[AgentMessage]) -> bool:
        """Whether the last after-run check already found nothing to do for exactly these inputs.

        The checks (overflow, pruning, the threshold) are pure functions of their inputs, so the
        pre-prompt check that follows a quiet after-run check with nothing changed in between
        (the usual next prompt) would find nothing either; it is skipped.
        """
        quiet = self._quiet
        if quiet is None or quiet[0] is not message:
            return False
        return quiet == self._inputs(message, context)

    def _over_threshold(self, message: AgentMessage) -> bool:
        """Prune, then compare the reply's context size, less what pruning saved since, with the threshold."""
        usage = message.get("usage")
        if message.get("stopReason") == "error" or not isinstance(usage, dict):
            return False
        self._prune()
        from xcsh.coding.compaction.prune import savings_since
        from xcsh.coding.compaction.tokens import context_tokens, exceeds_threshold

        tokens = max(0, context_tokens(usage) - savings_since(list(self._session.messages), message))
        return exceeds_threshold(tokens, self._window(self._session.model), self._threshold_settings())

    async def after_run(self, added: list[AgentMessage]) -> RunAction | None:
        """After-run hook: overflow recovery or threshold compaction, then the continuation."""
        session = self._session
        self._quiet = None
        message = last_assistant(added)
        if message is None:
            return None
        if self._overflowed(message):
            session.truncate_context_at(message)  # even with compaction off (§7.2)
            if not self.auto_enabled or await self._auto("overflow", will_retry=True) is None:
                return None
            session.truncate_context_at(message)  # the rebuilt context has it again
            if not await self._pause(OVERFLOW_RETRY_DELAY_S):
                return None
            return RunAction("continue")
        if not self.auto_enabled or message.get("stopReason") == "aborted":
            return None
        self._pruned_nothing = False
        if not self._over_threshold(message):
            if self._pruned_nothing:
                self._quiet = self._inputs(message, session.messages)
            return None
        if await self._auto("threshold", will_retry=False) is None:
            return None
        if session.settings.get_bool("compaction.autoContinue", True):
            return RunAction("prompt", [developer_message(CONTINUE_TEXT)])
        queued = session.take_queued()
        return RunAction("prompt", queued) if queued else None

    async def pre_prompt(self) -> None:
        """Pre-prompt check: compact first when the context is already full.

        Overflow compaction reports ``willRetry:true`` (§7.6): the prompt's run that
        follows is the retry. A reply older than the latest compaction triggers
        nothing, so the continuation prompt after a threshold compaction does not
        emit the reference's extra skipped pair (optional in scenario S47).
        """
        session = self._session
        context = list(session.messages)
        message = last_assistant(context)
        if message is None or self._checked_quiet(message, context):
            return
        if _is_before_compaction(message, context):
            return
        if self._overflowed(message):
            session.truncate_context_at(message)
            if self.auto_enabled and await self._auto("overflow", will_retry=True) is not None:
                session.truncate_context_at(message)
        elif self.auto_enabled and self._over_threshold(message):
            await self._auto("threshold", will_retry=False)

    def cancel(self) -> None:
        """Abort: stop a running summarisation and a pending overflow continuation."""
        if self._controller is not None:
            self._controller.abort("aborted")
        self._pause.cancel()


def compactor_for(session: AgentSession) -> Compactor | None:
    """The session's installed compactor, if any."""
    return session.features.get(Compactor)


async def compact_now(session: AgentSession, custom_instructions: str | None) -> CompactionResult:
    """The ``compact`` operation: stop any run, then compact (with or without auto-compaction installed)."""
    await session.abort()
    compactor = compactor_for(session) or install(session, CompactionConfig())
    return await compactor.compact(custom_instructions or None)


class CompactionConfig(msgspec.Struct, frozen=True):
    """The compaction feature's config: the pause before an overflow continuation (injected by tests)."""

    sleep: Sleep = asyncio.sleep


def configure(options: StartupOptions) -> CompactionConfig:
    return CompactionConfig()


def install(session: AgentSession, config: CompactionConfig) -> Compactor:
    """Install (or replace) the session's compactor: after-run hook and pre-prompt check ``compaction``."""
    compactor = Compactor(session, sleep=config.sleep)
    session.features.put(compactor)
    session.hooks.set_after_run("compaction", compactor)
    session.hooks.set_pre_prompt("compaction", compactor.pre_prompt)
    return compactor


def install_compaction(session: AgentSession, *, sleep: Sleep = asyncio.sleep) -> Compactor:
    """Install (or replace) the compactor with an injected ``sleep``."""
    return install(session, CompactionConfig(sleep=sleep))
