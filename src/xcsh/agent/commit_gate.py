"""The choice, made once, between a tool call changing files and its being abandoned.

A tool call still running :data:`~xcsh.agent.tool_calls.ABANDON_AFTER_S` after an abort is
abandoned: the host and the model are told it was aborted, and a thread it waits on is left to
itself. That thread must then never change a file. Each tool call therefore runs with a
:class:`CommitGate` of its own, reached through :func:`current_commit_gate` (a context variable:
the call's task and every thread it starts with ``asyncio.to_thread`` see it). Code about to make
a change that cannot be undone (``FileBatch.commit`` renaming staged files over their targets)
first calls :meth:`CommitGate.claim`; abandoning the call calls :meth:`CommitGate.close`. Both
take one lock, so exactly one of them wins:

- ``close`` first: every later ``claim`` is refused, and the writer discards what it staged;
- ``claim`` first: the change is under way (or done), so ``close`` says so and the call is
  given a little longer to finish, and if it still does not, its result says its files may
  have changed.

A call made inside another (a subagent's tool call inside ``task``) gets a gate whose parent is
the outer call's gate: abandoning the outer call refuses the inner call's claims too. A call's
gate is also closed when the call ends, so a thread it left behind changes nothing after its
result; but that close does not reach calls nested under it. Such a call can only come from
work the ended call merely scheduled (an extension's background task that later starts a run):
it is not part of the call, and refusing its writes would report an abort nobody made.
Work that is never part of the call that schedules it (an extension's actions and event
handlers) runs :func:`outside_commit_gates` anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token


class CommitGate:
    """One tool call's permission to change files; see the module docstring."""

    __slots__ = ("_abandoned", "_claimed", "_closed", "_lock", "_parent")

    def __init__(self, parent: CommitGate | None = None) -> None:
        self._lock = threading.Lock()
        self._closed = False
        self._abandoned = False
        self._claimed = False
        self._parent = parent

    @property
    def closed(self) -> bool:
        """Whether this call ended or was abandoned, or a call this one runs inside was abandoned."""
        if self._closed:
            return True
        gate = self._parent
        while gate is not None:
            if gate._abandoned:
                return True
            gate = gate._parent
        return False

    def claim(self) -> bool:
        """Called (from any thread) right before a change that cannot be undone: True means go
        ahead, False means the call ended or was abandoned and nothing may change."""
        if self._parent is not None and not self._parent._claim_inside():
            return False
        with self._lock:
            if self._closed:
                return False
            self._claimed = True
            return True

    def _claim_inside(self) -> bool:
        """A claim of a call nested under this one: refused once this call (or one it runs
        inside) was abandoned; after this call ended normally the nested one is on its own."""
        if self._parent is not None and not self._parent._claim_inside():
            return False
        with self._lock:
            if self._abandoned:
                return False
            if not self._closed:
                self._claimed = True
            return True

    def close(self, *, finished: bool = False) -> bool:
        """Refuse every later claim; True when no claim was granted before (nothing changed).
        ``finished``: the call ended with its result, rather than being abandoned (or cancelled),
        so calls nested under it are not refused (see the module docstring)."""
        with self._lock:
            self._closed = True
            if not finished:
                self._abandoned = True
            return not self._claimed


_current: ContextVar[CommitGate | None] = ContextVar("xcsh_commit_gate", default=None)


def current_commit_gate() -> CommitGate | None:
    """The gate of the tool call this code runs for, or None outside a tool call."""
    return _current.get()


def enter_commit_gate() -> tuple[CommitGate, Token[CommitGate | None]]:
    """Give the current context a new gate (inside the current one, if any); returns it and
    the token for :func:`leave_commit_gate`."""
    gate = CommitGate(_current.get())
    return gate, _current.set(gate)


def leave_commit_gate(token: Token[CommitGate | None]) -> None:
    """Put back the gate :func:`enter_commit_gate` replaced."""
    _current.reset(token)


@contextmanager
def outside_commit_gates() -> Iterator[None]:
    """Run the block, and every task or thread it starts, as part of no tool call: for work that
    the current call only schedules (a run an extension starts, its event handlers), which
    must not share the call's fate (its writes refused after the call ended or was abandoned)."""
    token = _current.set(None)
    try:
        yield
    finally:
        _current.reset(token)
