"""The cyclic garbage collector rests while ``xcsh --mode rpc`` starts (docs/performance.md,
"Fifth session: immediate prompt").

Start-up and a first request import some 500 modules. The collector runs every 700 new
container objects, so by the time an immediate prompt's request leaves it has run ~90 times
(about 84 young and 8 middle-generation passes, each middle one walking everything imported
so far): 12–25 ms of CPU before the first token, on the one thread the whole path runs on,
and it reclaims almost nothing (~600 objects of import-time cycles, ~0.2 MB).

So the CLI's RPC mode turns automatic collection off as soon as it knows its mode
(:func:`pause`; ``xcsh.cli.entry`` already before importing the CLI), and
:data:`RESUME_AFTER_S` after its event loop starts (``XCSH_GC_RESUME_MS`` overrides it) — long
after the first answer or an immediate prompt's request in any ordinary start — :func:`resume` freezes
what exists (the start-up heap: modules, classes, the session, which live as long as the
process; later collections skip them) and turns collection back on. The unreachable objects
of start-up are frozen with the rest and stay allocated. Explicit ``gc.collect()`` calls work
throughout. Only the CLI does this: a program that imports xcsh (``xcsh.open_session``) keeps
its collector as it is.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

RESUME_AFTER_S = 1.0

_paused = False


def resume_after_s(env: Mapping[str, str]) -> float:
    """:data:`RESUME_AFTER_S`, or ``XCSH_GC_RESUME_MS`` from ``env`` (milliseconds; tests use 0)."""
    raw = env.get("XCSH_GC_RESUME_MS", "")
    try:
        return max(0.0, float(raw) / 1000) if raw else RESUME_AFTER_S
    except ValueError:
        return RESUME_AFTER_S


def pause() -> None:
    """Turn automatic collection off, if it is on (the RPC mode's start-up)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def cancel() -> None:
    """Turn automatic collection back on without freezing, if :func:`pause` turned it off."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


def resume() -> None:
    """Freeze what exists and turn automatic collection back on, if :func:`pause` turned it off."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
