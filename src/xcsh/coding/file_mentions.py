"""``@path`` mentions in a prompt become a ``fileMention`` message with the files' content."""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path

from xcsh.agent.types import FileMentionMessage, MentionedFile

_MENTION = re.compile(r"""(?:^|(?<=[\s(\[{"'`]))@([^\s]+)""")
_TRAILING = ".,;:!?)]}\"'`"
MAX_TEXT_BYTES = 5 * 1024 * 1024
MAX_IMAGE_BYTES = 25 * 1024 * 1024
_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def mention_paths(text: str) -> list[str]:
    """The ``@path`` tokens of ``text``, trailing punctuation stripped, in order, unique."""
    seen: list[str] = []
    for match in _MENTION.finditer(text):
        token = match.group(1).rstrip(_TRAILING)
        if token and token not in seen:
            seen.append(token)
    return seen


def build_file_mention(text: str, cwd: Path) -> FileMentionMessage | None:
    """A ``fileMention`` message for the readable mentioned paths, or None (unreadable ones are skipped)."""
    files: list[MentionedFile] = []
    for token in mention_paths(text):
        path = (cwd / Path(token).expanduser()).resolve()
        try:
            entry = _describe(path, token)
        except (OSError, UnicodeDecodeError):
            continue
        if entry is not None:
            files.append(entry)
    if not files:
        return None
    return {"role": "fileMention", "files": files, "timestamp": int(time.time() * 1000)}


def _describe(path: Path, token: str) -> MentionedFile | None:
    if path.is_dir():
        names = sorted((p.name + ("/" if p.is_dir() else "") for p in path.iterdir()), key=str.lower)
        return {"path": token, "content": "\n".join(names) or "(empty directory)"}
    if not path.is_file():
        return None
    size = path.stat().st_size
    mime = _IMAGE_TYPES.get(path.suffix.lower())
    if mime is not None:
        if size > MAX_IMAGE_BYTES:
            return {"path": token, "content": "", "byteSize": size, "skippedReason": "tooLarge"}
        data = base64.b64encode(path.read_bytes()).decode()
        return {
            "path": token,
            "content": "",
            "byteSize": size,
            "image": {"type": "image", "data": data, "mimeType": mime},
        }
    if size > MAX_TEXT_BYTES:
        return {"path": token, "content": "", "byteSize": size, "skippedReason": "tooLarge"}
    content = path.read_text(encoding="utf-8")
    return {"path": token, "content": content, "lineCount": content.count("\n") + 1, "byteSize": size}
