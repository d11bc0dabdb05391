"""Tool failures.

Tools raise :class:`ToolError` (or a subclass); the agent loop turns the message
into an ``isError: true`` tool result whose text is :meth:`ToolError.render`.
"""

from __future__ import annotations


class ToolError(Exception):
    """A tool failed; the message is written for the model and says what to do next."""

    def render(self) -> str:
        """The text the model sees as the error result."""
        return str(self)


class ToolAbortedError(ToolError):
    """The tool call was aborted before it finished."""

    def __init__(self, message: str = "Operation aborted") -> None:
        super().__init__(message)
