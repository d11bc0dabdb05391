"""``@path`` mentions in a prompt become a ``fileMention`` message with the files' content.

Only what the user or host typed is searched for mentions (coding/session_runs.py): never the
body of a slash command, prompt template or skill, nor a prompt the model wrote. A mention is
read only when it names a regular file or a directory, outside ``/proc``, ``/sys`` and ``/dev``
(whose "files" hold the process's environment and the machine's devices: ``/proc/self/environ``
is a regular file of size 0 that holds every API key), and a relative mention is not followed
through a symbolic link inside the project to a place outside it (a cloned repository's
``notes.md`` may link to ``~/.aws/credentials``). An absolute or ``~`` mention is read wherever
it points: the user named that place (docs/security.md).
"""

from __future__ import annotations

import base64
import os
import re
import stat
import time
from pathlib import Path

from xcsh.agent.types import FileMentionMessage, MentionedFile
from xcsh.coding.private_fs import require_regular_or_missing

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
# kernel and device file systems: never read for a mention, whatever the link that leads there
_PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))


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
        try:
            path = _allowed_path(token, cwd)
            entry = _describe(path, token) if path is not None else None
        except (OSError, RuntimeError, UnicodeDecodeError):
            continue
        if entry is not None:
            files.append(entry)
    if not files:
        return None
    return {"role": "fileMention", "files": files, "timestamp": int(time.time() * 1000)}


def _allowed_path(token: str, cwd: Path) -> Path | None:
    """The resolved path ``token`` names, or None when a mention may not read it (module docstring)."""
    named = Path(token).expanduser()
    path = (cwd / named).resolve()
    if any(path == root or root in path.parents for root in _PSEUDO_ROOTS):
        return None
    if not named.is_absolute():
        project = cwd.resolve()
        lexical = Path(os.path.normpath(project / named))
        inside = lexical == project or project in lexical.parents
        if inside and path != project and project not in path.parents:
            return None  # a link inside the project leads out of it
    return path


def _describe(path: Path, token: str) -> MentionedFile | None:
    status = os.stat(path)
    if stat.S_ISDIR(status.st_mode):
        names = sorted((p.name + ("/" if p.is_dir() else "") for p in path.iterdir()), key=str.lower)
        return {"path": token, "content": "\n".join(names) or "(empty directory)"}
    require_regular_or_missing(path)  # a FIFO, socket or device: OSError, skipped
    size = status.st_size
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
