"""Lazy imports of optional libraries, failing as a tool error that names the extra to install.

Heavy or optional libraries (ast-grep-py, nbformat, jupyter-client, pypdf, markdownify)
live in the ``tools`` extra, which ``xcsh[local]`` and ``xcsh[dev]`` include. A tool
that needs one calls :func:`require` inside ``execute``; when the library is missing
the model gets an ``isError`` result saying what to install, and the process goes on.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from xcsh.coding.tools.errors import ToolError

EXTRA = "tools"


def require(module: str, package: str, tool: str) -> ModuleType:
    """Import ``module`` or raise ToolError naming ``package`` and the ``xcsh[tools]`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ToolError(
            f"The {tool} tool needs the Python package {package}, which is not installed. "
            f"Install the extra with: pip install 'xcsh[{EXTRA}]' (or pip install {package})."
        ) from exc
