"""``@path`` command-line arguments: text files become ``<file>`` blocks, images become attachments.

As in the reference, the blocks come before the first message; a file too large is
named with a "skipped" note instead of its content; an empty file is left out; a missing
file is a start-up error. Images are recognised by their first bytes, not their names,
and are attached as they are (no resizing).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

from xcsh.ai.types import ImageContent
from xcsh.coding.tools.read import image_mime_type  # the read tool's sniffing: one list of formats

MAX_TEXT_BYTES = 5 * 1024 * 1024
MAX_IMAGE_BYTES = 25 * 1024 * 1024


class FileArgError(Exception):
    """An ``@path`` argument cannot be attached (missing or unreadable)."""


@dataclass(slots=True)
class Attachments:
    text: str = ""
    images: list[ImageContent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _size_text(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def load_attachments(paths: list[str], cwd: Path) -> Attachments:
    """Read every ``@path`` (relative to ``cwd``, ``~`` expanded) into text blocks and images."""
    result = Attachments()
    for raw in paths:
        path = (cwd / Path(raw).expanduser()).resolve()
        try:
            stat = path.stat()
        except OSError:
            raise FileArgError(f"File not found: {path}") from None
        if not path.is_file():
            raise FileArgError(f"Not a file: {path}")
        try:
            with path.open("rb") as handle:
                head = handle.read(16)
        except OSError as exc:
            raise FileArgError(f"Cannot read {path}: {exc.strerror or exc}") from None
        mime = image_mime_type(head)
        limit = MAX_IMAGE_BYTES if mime else MAX_TEXT_BYTES
        if stat.st_size > limit:
            size = _size_text(stat.st_size)
            result.notes.append(f"{path} is too large ({size}); attached by name only")
            result.text += f'<file name="{path}">(skipped: too large, {size})</file>\n'
            continue
        if stat.st_size == 0:
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise FileArgError(f"Cannot read {path}: {exc.strerror or exc}") from None
        if mime is not None:
            encoded = base64.b64encode(data).decode("ascii")
            result.images.append({"type": "image", "data": encoded, "mimeType": mime})
            result.text += f'<file name="{path}"></file>\n'
        else:
            content = data.decode("utf-8", errors="replace")
            result.text += f'<file name="{path}">\n{content}\n</file>\n'
    return result
