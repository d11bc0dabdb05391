"""Outbound frames added beyond the reference (docs/host-commands.md)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class SettledFrame(TypedDict):
    """Opt-in (``--protocol-fixes``): the run chain that carried a prompt, steer or follow-up ended."""

    type: Literal["settled"]
    id: NotRequired[Any]
    command: Literal["prompt", "steer", "follow_up", "abort_and_prompt"]
    outcome: Literal["completed", "aborted", "error", "cleared"]
    error: NotRequired[str]
