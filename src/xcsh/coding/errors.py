"""Errors raised by the coding layer; the RPC server turns them into responses in one place."""

from __future__ import annotations


class XcshError(Exception):
    """Base of xcsh's own errors."""


class CommandError(XcshError):
    """An explicit, expected command failure: answered as ``success:false`` with the request id."""


class BusyError(CommandError):
    """A prompt arrived while the agent was busy and no streaming behaviour was given."""


class PromptAborted(CommandError):
    """A prompt was accepted, but an abort came before its run started (reported, never dropped)."""


PROMPT_ABORTED_TEXT = "Prompt aborted before its run started"

BUSY_TEXT = (
    "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion."
)


def no_api_key_text(provider: str) -> str:
    return (
        f"No API key found for {provider}.\n\n"
        f"Set the provider's API key environment variable, pass --api-key, or add apiKey for "
        f'"{provider}" in models.yml.'
    )
