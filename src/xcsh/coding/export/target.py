"""Where an export may not be written: over a session file or a session's lock file.

An export replaces its output file (a new inode). Over the open session file, the session's
later entries went to the unlinked old file and were lost; over another session, that session
was gone; over a session's ``.lock`` file, the lock was void and a second writer got in. A
mistyped ``outputPath`` or ``xcsh --export a.jsonl a.jsonl`` is enough, so such targets are
refused before anything is written (docs/decisions.md, Sessions).
"""

from __future__ import annotations

import os
from pathlib import Path

from xcsh.coding.errors import CommandError
from xcsh.coding.sessions.headers import read_header

_LOCK_SUFFIX = ".lock"


class ExportTargetError(CommandError):
    """The export's output path names a session file or a session's lock file (over RPC:
    ``success:false`` with the request's id, as a project refusal)."""


def _same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_export_target(target: Path, session_file: Path | None = None) -> None:
    """Raise :class:`ExportTargetError` when writing ``target`` would destroy a session.

    Refused: ``session_file`` itself (the open session, on disk or not yet), any existing
    session file (its first JSON object is a session header), and the ``.lock`` file of
    either. Paths are compared after resolving symlinks, and hard links by inode.
    """
    real = os.path.realpath(target)
    own = os.path.realpath(session_file) if session_file is not None else None
    if own is not None and _same_file(real, own):
        raise ExportTargetError(f"Refusing to export to {target}: it is this session's file")
    if read_header(Path(real)) is not None:
        raise ExportTargetError(f"Refusing to export to {target}: it is a session file")
    if real.endswith(_LOCK_SUFFIX):
        locked = real.removesuffix(_LOCK_SUFFIX)
        if (own is not None and _same_file(locked, own)) or read_header(Path(locked)) is not None:
            raise ExportTargetError(f"Refusing to export to {target}: it is a session's lock file")
