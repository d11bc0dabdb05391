"""A bounded history of received frames, indexed by absolute position.

Frames are numbered from 0 in arrival order for the life of a client; only the most
recent ones are kept (at most ``max_frames`` frames and about ``max_bytes`` of JSON),
so a long session does not keep every ``message_update`` forever. ``log[mark:]`` is
every retained frame from absolute position ``mark`` on; ``len(log)`` counts every frame
ever received, so it is also the next frame's position.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any, overload

Frame = dict[str, Any]


class FrameLog:
    """Retained frames with absolute indices (older frames are dropped first)."""

    def __init__(self, max_frames: int | None = 10_000, max_bytes: int | None = 64 << 20) -> None:
        self._frames: deque[tuple[Frame, int]] = deque()
        self._dropped = 0
        self._bytes = 0
        self.max_frames = max_frames
        self.max_bytes = max_bytes

    @property
    def first(self) -> int:
        """Absolute position of the oldest retained frame."""
        return self._dropped

    def append(self, frame: Frame, size: int = 0) -> None:
        """Add a frame (``size``: its encoded length, for the byte bound)."""
        self._frames.append((frame, size))
        self._bytes += size
        while self._frames and (
            (self.max_frames is not None and len(self._frames) > self.max_frames)
            or (self.max_bytes is not None and self._bytes > self.max_bytes and len(self._frames) > 1)
        ):
            _, dropped = self._frames.popleft()
            self._bytes -= dropped
            self._dropped += 1

    def __len__(self) -> int:
        return self._dropped + len(self._frames)

    def __iter__(self) -> Iterator[Frame]:
        return (frame for frame, _ in self._frames)

    @overload
    def __getitem__(self, index: int) -> Frame: ...

    @overload
    def __getitem__(self, index: slice) -> list[Frame]: ...

    def __getitem__(self, index: int | slice) -> Frame | list[Frame]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            start = max(start, self._dropped)
            return [
                self._frames[i - self._dropped][0] for i in range(start, stop, step) if i >= self._dropped
            ]
        position = index + len(self) if index < 0 else index
        if not self._dropped <= position < len(self):
            raise IndexError(f"frame {index} is not retained (kept: {self._dropped}..{len(self) - 1})")
        return self._frames[position - self._dropped][0]

    def index(self, frame: Frame, start: int = 0) -> int:
        """Absolute position of ``frame`` (the same object) among the retained frames."""
        for same in (lambda kept: kept is frame, lambda kept: kept == frame):
            for offset, (kept, _) in enumerate(self._frames):
                position = self._dropped + offset
                if position >= start and same(kept):
                    return position
        raise ValueError("frame not retained")
