"""Regular expressions compiled on first use, so importing a module does not compile them.

Compiling a pattern costs 30–300 µs; a module-level ``re.compile`` is paid by every start-up
that imports the module, even when nothing matches anything before the first answer
(docs/performance.md, "Fifth session: start-up").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


class LazyPattern:
    """``re.compile(source, flags)`` on the first call of any method; the methods are ``re.Pattern``'s."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet)."""
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.pattern.search(text, pos)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.pattern.match(text, pos)

    def fullmatch(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.pattern.fullmatch(text, pos)

    def finditer(self, text: str, pos: int = 0) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text, pos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.pattern.sub(repl, text, count)
