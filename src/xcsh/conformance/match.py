"""Frame patterns: an expected frame lists only the keys it asserts (scenarios.md §0.3).

A pattern matches a value when:

- it is a dict: every key of the pattern is present in the value and matches
  (:data:`ABSENT` requires the key to be missing; other keys of the value are allowed);
- it is a list: same length, element by element;
- it is :data:`ANY`: any present value; a :class:`Pred`: its predicate holds;
- otherwise: equality (``True`` never equals ``1``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _Any:
    def __repr__(self) -> str:
        return "<any>"


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ANY: Any = _Any()
ABSENT: Any = _Absent()


@dataclass(frozen=True, slots=True)
class Pred:
    """A named predicate, shown as ``<description>`` in reports."""

    description: str
    test: Callable[[Any], bool]

    def __repr__(self) -> str:
        return f"<{self.description}>"


def non_empty_string() -> Any:
    return Pred("non-empty string", lambda v: isinstance(v, str) and bool(v))


def matches(pattern: Any, value: Any) -> bool:
    """Whether ``value`` matches ``pattern`` (see the module docstring)."""
    if pattern is ANY:
        return True
    if isinstance(pattern, Pred):
        try:
            return bool(pattern.test(value))
        except Exception:  # a predicate failing on an unexpected shape is a mismatch
            return False
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            return False
        for key, sub in pattern.items():
            if sub is ABSENT:
                if key in value:
                    return False
            elif key not in value or not matches(sub, value[key]):
                return False
        return True
    if isinstance(pattern, list):
        return (
            isinstance(value, list)
            and len(value) == len(pattern)
            and all(matches(p, v) for p, v in zip(pattern, value, strict=True))
        )
    if isinstance(pattern, bool) or isinstance(value, bool):
        return type(pattern) is type(value) and pattern == value
    return bool(pattern == value)


def printable(pattern: Any) -> Any:
    """The pattern as plain JSON (sentinels and predicates become ``"<…>"`` strings)."""
    if isinstance(pattern, dict):
        return {k: printable(v) for k, v in pattern.items()}
    if isinstance(pattern, list):
        return [printable(v) for v in pattern]
    if pattern is ANY or pattern is ABSENT or isinstance(pattern, Pred):
        return repr(pattern)
    return pattern
