"""Strict validation of inbound commands against their ``TypedDict`` (the single check before any handler).

:func:`check_command` converts a decoded frame with msgspec (strict: no coercion), so a
handler only ever sees values of the declared types. A failure names the field, what it
accepts and what was sent. Two kinds, as the protocol distinguishes them
(docs/protocol.md, "Validation"):

- *structural* (a required field missing, a value of the wrong JSON type) → the
  ``parse`` error of rpc-protocol §3 (no ``id``);
- a value of the right type outside the accepted set or range (an unknown mode name)
  → ``success:false`` with the command's ``id``, like an invalid thinking level.

The wording of a failure is made by :mod:`xcsh.rpc.validation_errors`, imported with the first
invalid command: a valid one needs msgspec only, and a process's first command with fields
(an immediate prompt) should not wait for the explanation machinery (docs/performance.md,
"Fifth session: immediate prompt").
"""

from __future__ import annotations

from typing import Any

import msgspec


class Invalid(msgspec.Struct, frozen=True):
    """A rejected command: the error text and whether the answer keeps the command's id."""

    error: str
    with_id: bool
    path: str


def check_command(request: type, frame: dict[str, Any]) -> dict[str, Any] | Invalid:
    """``frame`` converted to ``request`` (unknown keys dropped), or why it is invalid."""
    try:
        value: dict[str, Any] = msgspec.convert(frame, type=request, strict=True)
    except msgspec.ValidationError as exc:
        return explain(request, frame, str(exc))
    except RecursionError:
        return Invalid("the command is nested too deeply", False, "(frame)")
    return value


def explain(request: type, frame: Any, message: str) -> Invalid:
    """Turn msgspec's ``message`` into an :class:`Invalid` (see :mod:`xcsh.rpc.validation_errors`)."""
    from xcsh.rpc import validation_errors

    return Invalid(*validation_errors.explain(request, frame, message))


def describe(tp: Any) -> str:
    """What a value of type ``tp`` looks like, in words (see :mod:`xcsh.rpc.validation_errors`)."""
    from xcsh.rpc import validation_errors

    return validation_errors.describe(tp)
