"""Holding a session-file rewrite at a known point, with real objects.

The standard-library encoder asks a ``dict`` subclass for its ``items()``, so a replacement
entry (or header) holding :class:`HeldOpen` stops the rewrite inside its encoding until the test
releases it. Import as ``coding.sessions.held`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import threading
from typing import Any

BOUND_S = 30  # every wait is bounded; a rewrite that ran on the caller's thread fails the test


class HeldOpen(dict[str, Any]):
    """A mapping whose first encoding signals ``entered``, then waits for ``release`` (bounded);
    later encodings (the test's own, a whole write) go through at once."""

    def __init__(self, entered: threading.Event, release: threading.Event, **values: Any) -> None:
        super().__init__(**values)
        self.entered = entered
        self.release = release

    def items(self) -> Any:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(BOUND_S)
        return super().items()


class HeldOnceArmed(HeldOpen):
    """:class:`HeldOpen` that lets every encoding through until :meth:`arm` is called."""

    def __init__(self, entered: threading.Event, release: threading.Event, **values: Any) -> None:
        super().__init__(entered, release, **values)
        self.armed = False

    def arm(self) -> None:
        self.armed = True

    def items(self) -> Any:
        return super().items() if self.armed else dict.items(self)
