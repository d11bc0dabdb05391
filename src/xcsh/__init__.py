"""xcsh: a coding agent driven over a JSON-lines RPC protocol."""

from xcsh.version import __version__

# not ``typing.TYPE_CHECKING``: ``python -m xcsh`` imports this package before the RPC mode
# pauses the garbage collector (xcsh.cli.entry), and ``typing`` is better imported after that
TYPE_CHECKING = False

if TYPE_CHECKING:
    from xcsh.api import Session, open_session

__all__ = ["Session", "__version__", "open_session"]


def __getattr__(name: str) -> object:
    # lazy, so ``import xcsh`` stays cheap: the API pulls in the whole agent
    if name in ("open_session", "Session"):
        from xcsh import api

        return getattr(api, name)
    raise AttributeError(f"module 'xcsh' has no attribute {name!r}")
