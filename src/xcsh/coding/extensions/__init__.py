"""Python extensions: event handlers, tools, ``/commands`` and UI requests (docs/extensions.md).

An extension is a Python file or package that defines ``setup(xcsh)``; ``xcsh`` is an
:class:`ExtensionAPI`. Extension authors import the names below from here.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xcsh.coding.extensions.api import (
        ExtensionAPI,
        ExtensionContext,
        ExtensionSetupError,
        ExtensionUI,
        HeadlessUI,
        ToolInvocation,
    )

__all__ = [
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionSetupError",
    "ExtensionUI",
    "HeadlessUI",
    "ToolInvocation",
]


def __getattr__(name: str) -> Any:
    """The names above, from :mod:`.api` when first asked for (a session without extensions never is)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from xcsh.coding.extensions import api

    return getattr(api, name)
