"""Auto-retry of transient provider failures (agent-behaviour §6).

A post-run handler: when a run ends with a retryable error (overloaded, rate limit,
5xx, connection reset, cut stream…) it announces ``auto_retry_start``, drops the
failed assistant message from the live context (the session file keeps it), sleeps
the back-off (``baseDelayMs × 2^(attempt−1)`` capped at ``maxDelayMs``, or a longer
``retry-after`` hint) and asks the session to continue. The chain's first successful assistant message is
followed, right after its ``message_end``, by ``auto_retry_end {success:true}``.
Exhaustion and cancellation end the chain with ``auto_retry_end {success:false}``.

This is the only retry policy: the provider SDKs' own retries are off, so
``retry.enabled = false`` means exactly one request per run. To survive what the
reference survives with those hidden retries, failures of the kind the SDKs retried
(HTTP 408/409/429/5xx/529, connection errors; :func:`~xcsh.ai.errors.is_transport_failure`)
get the larger budget ``retry.transientMaxRetries`` (default 8); other retryable errors
(a 400 whose text says "overloaded") keep ``retry.maxRetries`` (default 3). Every
retry is still announced, with ``maxAttempts`` = the budget of the error at hand.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from xcsh.coding.auto_settings import auto_retry_enabled
from xcsh.coding.hooks import RunAction
from xcsh.coding.messages import last_assistant

if TYPE_CHECKING:
    from xcsh.agent.types import AgentEvent, AgentMessage
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession
    from xcsh.coding.settings import Settings

logger = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]
RETRY_CANCELLED = "Retry cancelled"


def backoff_delay_ms(
    attempt: int, base_delay_ms: int, error_message: str, max_delay_ms: int | None = None
) -> int:
    """``base × 2^(attempt−1)`` (at most ``max_delay_ms``), replaced by the provider's retry hint
    when that is longer (hints are honoured whole)."""
    delay = base_delay_ms * 2 ** max(0, min(attempt - 1, 40))
    if max_delay_ms is not None:
        delay = min(delay, max_delay_ms)
    from xcsh.ai.errors import retry_hint_ms  # its patterns compile on import: only on an error

    hint = retry_hint_ms(error_message)
    return hint if hint is not None and hint > delay else delay


class CancellableSleep:
    """An injected ``sleep`` that :meth:`cancel` can cut short (one sleep at a time)."""

    def __init__(self, sleep: Sleep = asyncio.sleep) -> None:
        self._sleep = sleep
        self._sleeper: asyncio.Future[Any] | None = None

    @property
    def pending(self) -> bool:
        return self._sleeper is not None and not self._sleeper.done()

    async def __call__(self, seconds: float) -> bool:
        """Sleep; False when :meth:`cancel` cut it short. Cancelling the caller cancels the sleep too."""
        sleeper = asyncio.ensure_future(self._sleep(seconds))
        self._sleeper = sleeper
        try:
            await asyncio.wait({sleeper})
        except asyncio.CancelledError:
            sleeper.cancel()
            raise
        finally:
            self._sleeper = None
        return not sleeper.cancelled()

    def cancel(self) -> bool:
        """Cancel a pending sleep; True when one was pending."""
        sleeper = self._sleeper
        if sleeper is None or sleeper.done():
            return False
        sleeper.cancel()
        return True


class RetryPolicy(msgspec.Struct, frozen=True):
    """The ``retry.*`` settings as one value: whether to retry, the budgets, the back-off bounds.

    Shared by the run's retry handler and by compaction's summary calls, so both classify
    and space their retries alike (agent-behaviour §6, §7.4).
    """

    enabled: bool
    max_retries: int
    transient_max_retries: int
    base_delay_ms: int
    max_delay_ms: int

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        max_retries = max(0, settings.get_int("retry.maxRetries", 3))
        base_delay_ms = max(0, settings.get_int("retry.baseDelayMs", 2000))
        return cls(
            enabled=auto_retry_enabled(settings),
            max_retries=max_retries,
            transient_max_retries=max(max_retries, settings.get_int("retry.transientMaxRetries", 8)),
            base_delay_ms=base_delay_ms,
            max_delay_ms=max(base_delay_ms, settings.get_int("retry.maxDelayMs", 16000)),
        )

    def budget_for(self, error_message: str) -> int:
        """Retries allowed for a chain whose latest error is ``error_message``."""
        from xcsh.ai.errors import is_transport_failure

        return self.transient_max_retries if is_transport_failure(error_message) else self.max_retries

    def delay_ms(self, attempt: int, error_message: str) -> int:
        """The back-off before retry number ``attempt`` (1-based) of ``error_message``."""
        return backoff_delay_ms(attempt, self.base_delay_ms, error_message, self.max_delay_ms)


class RetryHandler:
    """The auto-retry post-run handler of one session.

    ``sleep`` (seconds) is injected so tests can record the back-off instead of
    waiting; a pending sleep is abandoned by :meth:`abort_retry` or :meth:`cancel`.
    """

    def __init__(self, session: AgentSession, *, sleep: Sleep = asyncio.sleep) -> None:
        self._session = session
        self._back_off = CancellableSleep(sleep)
        self.attempt = 0
        self._unsubscribe = session.subscribe_after(self._on_agent_event)

    # ---- settings ------------------------------------------------------------------------
    @property
    def policy(self) -> RetryPolicy:
        """The retry settings as they are now (read at each decision: they can change mid-session)."""
        return RetryPolicy.from_settings(self._session.settings)

    @property
    def is_sleeping(self) -> bool:
        return self._back_off.pending

    # ---- success is announced as soon as the message ends --------------------------------
    def _on_agent_event(self, event: AgentEvent) -> None:
        # Subscribed after the session's own listener, so the message_end is already out.
        if event["type"] != "message_end" or self.attempt == 0:
            return
        message = event["message"]
        if message["role"] != "assistant" or message["stopReason"] in ("error", "aborted"):
            return
        attempt, self.attempt = self.attempt, 0
        self._session.emit({"type": "auto_retry_end", "success": True, "attempt": attempt})

    # ---- PostRunHandler --------------------------------------------------------------------
    async def after_run(self, added: list[AgentMessage]) -> RunAction | None:
        session = self._session
        message = last_assistant(added)
        if message is None or message["stopReason"] != "error":
            return None
        error = message.get("errorMessage") or ""
        from xcsh.ai.errors import is_retryable  # its patterns compile on import: only on an error

        policy = self.policy
        if not policy.enabled or not is_retryable(error):
            self._finish(error)
            return None
        budget = policy.budget_for(error)
        self.attempt += 1
        if self.attempt > budget:
            self.attempt = budget
            self._finish(error)
            return None
        delay_ms = policy.delay_ms(self.attempt, error)
        session.emit(
            {
                "type": "auto_retry_start",
                "attempt": self.attempt,
                "maxAttempts": budget,
                "delayMs": delay_ms,
                "errorMessage": error,
            }
        )
        # only the failed turn's synthetic tool results can follow the message
        session.truncate_context_at(message)
        if not await self._back_off(delay_ms / 1000):
            self._finish(RETRY_CANCELLED)
            return None
        return RunAction("continue")

    def _finish(self, final_error: str) -> None:
        """End a retry chain that is in progress with ``success:false``; no-op otherwise."""
        if self.attempt == 0:
            return
        attempt, self.attempt = self.attempt, 0
        self._session.emit(
            {"type": "auto_retry_end", "success": False, "attempt": attempt, "finalError": final_error}
        )

    def abort_retry(self) -> bool:
        """Cancel a sleeping back-off (``abort_retry``); True when one was pending."""
        return self._back_off.cancel()

    def cancel(self) -> None:
        """Abort/new session: cancel the back-off, and close a chain whose continuation is running."""
        if not self.abort_retry():
            self._finish(RETRY_CANCELLED)

    def detach(self) -> None:
        """Stop listening to the agent (used when the handler is replaced)."""
        self._unsubscribe()


def retry_handler_for(session: AgentSession) -> RetryHandler | None:
    """The session's installed retry handler, if any."""
    return session.features.get(RetryHandler)


def abort_retry(session: AgentSession) -> None:
    """The ``abort_retry`` operation: cancel a pending back-off (a no-op without one or without retry)."""
    handler = retry_handler_for(session)
    if handler is not None:
        handler.abort_retry()


class RetryConfig(msgspec.Struct, frozen=True):
    """The retry feature's config: the back-off sleep (injected by tests)."""

    sleep: Sleep = asyncio.sleep


def configure(options: StartupOptions) -> RetryConfig:
    return RetryConfig()


def install(session: AgentSession, config: RetryConfig) -> RetryHandler:
    """Install (or replace) the session's retry handler (after-run hook ``retry``)."""
    handler = RetryHandler(session, sleep=config.sleep)
    old = session.features.get(RetryHandler)
    if old is not None:
        old.detach()
    session.features.put(handler)
    session.hooks.set_after_run("retry", handler)
    return handler


def install_retry(session: AgentSession, *, sleep: Sleep = asyncio.sleep) -> RetryHandler:
    """Install (or replace) the retry handler with an injected ``sleep``."""
    return install(session, RetryConfig(sleep=sleep))
