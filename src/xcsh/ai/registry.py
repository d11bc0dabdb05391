"""api name → provider; ``stream()`` runs one provider call under the streaming contract.

A provider is an ``async def run(model, context, options, builder)`` that translates
its vendor wire into :class:`MessageBuilder` calls. This module owns what every
provider shares: the stream is returned at once, an abort closes the HTTP stream
promptly (the provider task is cancelled), and no exception escapes — failures end
the stream with ``stopReason`` ``error`` or ``aborted``.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.options import StreamOptions
from xcsh.ai.stream import AssistantMessageStream
from xcsh.ai.types import AssistantMessage, Context, Model

logger = logging.getLogger(__name__)

ProviderRun = Callable[[Model, Context, StreamOptions, MessageBuilder], Awaitable[None]]

# Built-in providers are imported on first use so that `import xcsh.ai` pulls in no SDK.
_BUILTIN_MODULES: dict[str, str] = {
    "anthropic-messages": "xcsh.ai.providers.anthropic_messages",
    "openai-completions": "xcsh.ai.providers.openai_completions",
    "openai-responses": "xcsh.ai.providers.openai_responses",
    "google-generative-ai": "xcsh.ai.providers.google",
    "local-llamacpp": "xcsh.ai.providers.local",
}
_custom: dict[str, ProviderRun] = {}
# how an error message names each built-in wire ("Malformed response from <provider> (<wire> stream)")
WIRE_NAMES: dict[str, str] = {
    "anthropic-messages": "Anthropic Messages",
    "openai-completions": "OpenAI chat completions",
    "openai-responses": "OpenAI Responses",
    "google-generative-ai": "Gemini",
    "local-llamacpp": "local model",
}
# what reading a wrongly shaped event raises in code that did not check its shape first
_UNREADABLE = (TypeError, AttributeError, KeyError, IndexError, RecursionError)


def register_provider(api: str, run: ProviderRun) -> None:
    """Register (or replace) the provider for ``api``."""
    _custom[api] = run


def known_apis() -> list[str]:
    return sorted({*_BUILTIN_MODULES, *_custom})


def get_provider(api: str) -> ProviderRun:
    if api in _custom:
        return _custom[api]
    module_name = _BUILTIN_MODULES.get(api)
    if module_name is None:
        raise KeyError(f"No provider registered for api '{api}'")
    run: ProviderRun = importlib.import_module(module_name).run
    return run


def stream(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessageStream:
    """Start a model call; returns its event stream at once. Never raises after returning."""
    opts = options or StreamOptions()
    out = AssistantMessageStream()
    builder = MessageBuilder(model, out)
    out.task = asyncio.get_running_loop().create_task(_drive(model, context, opts, builder))
    return out


async def complete(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
    """Run a model call to completion and return the final message."""
    s = stream(model, context, options)
    async for _ in s:
        pass
    result = await s.result()
    if s.task is not None:
        # the provider may still be reading the rest of the answer's body (transport.EventStream)
        await asyncio.wait({s.task})
    return result


async def _drive(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    signal = options.signal
    if signal is not None and signal.aborted:
        builder.fail("", aborted=True)
        return
    try:
        run = get_provider(model["api"])
    except (KeyError, ImportError) as exc:
        builder.fail(str(exc))
        return
    # the provider runs in this task, and an abort cancels it (which closes the provider's HTTP
    # response) through a signal callback: no task of its own, no task waiting on the signal
    task = asyncio.current_task()
    running, interrupted = [True], [False]

    def interrupt() -> None:
        if running[0] and task is not None:
            interrupted[0] = True
            task.cancel()

    unlink = signal.add_callback(interrupt) if signal is not None else None
    failure: BaseException | None = None
    try:
        await run(model, context, options, builder)
    except asyncio.CancelledError as exc:
        if interrupted[0] and task is not None and task.uncancel() == 0:
            pass  # the abort's cancellation ends here (a cancellation from outside as well goes on)
        elif task is not None and task.cancelling():
            if not builder.stream.ended:  # cancelled from outside: the stream ends aborted
                builder.fail("", aborted=True)
            raise
        else:
            failure = exc  # the provider's own
    except Exception as exc:
        failure = exc
    finally:
        running[0] = False
        if unlink is not None:
            unlink()
    if builder.stream.ended:
        # over before the provider returned (it reads the rest of the body after ending the
        # message): an abort or failure since concerns the connection, not the answer
        return
    if interrupted[0]:
        builder.fail("", aborted=True)
        return
    if failure is None:
        builder.finish()
    elif signal is not None and signal.aborted:
        builder.fail("", aborted=True)
    else:
        logger.debug("provider %s failed", model["api"], exc_info=failure)
        builder.fail(_failure_text(failure, model, options, builder))


def _failure_text(
    failure: BaseException, model: Model, options: StreamOptions, builder: MessageBuilder
) -> str:
    """The errorMessage for a provider's failure: :func:`~xcsh.ai.errors.describe_error`'s
    sentence, naming the wire; a Python error raised once the answer had started (a shape the
    provider did not check) reads as a malformed response rather than as the bare exception."""
    # its patterns compile on import: only on an error, never before a first answer
    from xcsh.ai.errors import describe_error, redact_credentials
    from xcsh.ai.wire_shape import MalformedStreamError

    if isinstance(failure, _UNREADABLE) and builder.started:
        detail = f"an event could not be read ({type(failure).__name__}: {failure})"
        failure = MalformedStreamError(detail)
    received = bool(builder.snapshot().get("content"))
    wire = WIRE_NAMES.get(model["api"], model["api"])
    text = describe_error(failure, model["provider"], received=received, wire=wire)
    return redact_credentials(text, model, options)
