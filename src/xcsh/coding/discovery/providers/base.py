"""The provider contract."""

from __future__ import annotations

from abc import ABC, abstractmethod

from xcsh.coding.discovery.base import Found, LoadContext


class Provider(ABC):
    """One configuration source. Higher ``priority`` wins when two sources define the same item."""

    id: str
    name: str
    priority: int
    description: str

    @abstractmethod
    def load(self, ctx: LoadContext) -> Found:
        """Everything this source defines for ``ctx`` (missing files are simply absent)."""
