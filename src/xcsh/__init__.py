"""xcsh: a coding agent driven over a JSON-lines RPC protocol."""

from typing import TYPE_CHECKING

from xcsh.version import __version__

if TYPE_CHECKING:
    from xcsh.api import Session, open_session

__all__ = ["Session", "__version__", "open_session"]


def __getattr__(name: str) -> object:
    # lazy, so ``import xcsh`` stays cheap: the API pulls in the whole agent
    if name in ("open_session", "Session"):
        from xcsh import api

        return getattr(api, name)
    raise AttributeError(f"module 'xcsh' has no attribute {name!r}")
