"""Python extensions: event handlers, tools, ``/commands`` and UI requests (docs/extensions.md).

An extension is a Python file or package that defines ``setup(xcsh)``; ``xcsh`` is an
:class:`ExtensionAPI`. Extension authors import the names below from here.
"""

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
