"""Rules for choosing models that the session applies: references, cycling, the remembered default.

Pure functions over models and setting values; :class:`~xcsh.coding.session.AgentSession`
applies them (``set_model``, ``cycle_model``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import msgspec

from xcsh.ai.thinking import parse_level

if TYPE_CHECKING:
    from xcsh.ai.types import Model, ThinkingLevel

T = TypeVar("T")


def model_ref(model: Model) -> str:
    """``provider/id``: how session entries and settings name a model."""
    return f"{model['provider']}/{model['id']}"


def same_model(a: Model, b: Model) -> bool:
    return a["provider"] == b["provider"] and a["id"] == b["id"]


def next_in_cycle(items: Sequence[T], current: Model, model_of: Callable[[T], Model]) -> T | None:
    """The entry after the one whose model is ``current`` (wrapping; the second when absent).

    None when there are fewer than two entries.
    """
    if len(items) < 2:
        return None
    index = next((i for i, item in enumerate(items) if same_model(model_of(item), current)), 0)
    return items[(index + 1) % len(items)]


def remembered_default(previous: object, model: Model) -> str:
    """The ``modelRoles.default`` value naming ``model``.

    An explicit ``:level`` suffix of the previous value is kept, as the reference does.
    """
    value = model_ref(model)
    if isinstance(previous, str):
        _, colon, suffix = previous.rpartition(":")
        if colon and parse_level(suffix) is not None:
            value = f"{value}:{suffix}"
    return value


class ModelCycle(msgspec.Struct, frozen=True):
    """The result of ``cycle_model``: the new model, its level (None = unset) and the list used."""

    model: Model
    thinking_level: ThinkingLevel | None
    is_scoped: bool
