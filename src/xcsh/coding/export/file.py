"""Export a session file to HTML without starting a session (``xcsh --export``)."""

from __future__ import annotations

import json
from pathlib import Path

from xcsh.coding.export.html import session_html_parts, write_html
from xcsh.coding.export.target import ExportTargetError, check_export_target
from xcsh.coding.paths import blobs_dir
from xcsh.coding.sessions.blobs import BlobStore
from xcsh.coding.sessions.entries import is_valid_header
from xcsh.coding.sessions.loading import read_session_file


class ExportError(Exception):
    """The session file cannot be exported (missing, not a session, unwritable output)."""


def default_output(source: Path) -> Path:
    """``xcsh-session-<file stem>.html`` in the current directory, the reference's default name."""
    return Path(f"xcsh-session-{source.name.removesuffix('.jsonl')}.html")


def export_session_file(source: Path, output: Path | None = None) -> Path:
    """Render ``source`` (read only, not locked or repaired) to ``output``; returns the path written.

    The current branch is the one ending at the file's last entry. An ``output`` that is a
    session file or a session's lock file is refused (:func:`check_export_target`).
    """
    source = source.expanduser()
    if not source.is_file():
        raise ExportError(f"File not found: {source}")
    if not _starts_with_header(source):
        raise ExportError(f"{source} is not a session file")
    target = output if output is not None else default_output(source)
    try:
        check_export_target(target, source)
    except ExportTargetError as exc:
        raise ExportError(str(exc)) from None
    try:
        loaded = read_session_file(source, BlobStore(blobs_dir()))
    except OSError as exc:
        raise ExportError(f"Cannot read {source}: {exc.strerror or exc}") from None
    if loaded is None:
        raise ExportError(f"{source} is not a session file")
    leaf = loaded.entries[-1]["id"] if loaded.entries else None
    parts = session_html_parts(header=loaded.header, entries=loaded.entries, leaf_id=leaf)
    try:
        write_html(target, parts)
    except OSError as exc:
        raise ExportError(f"Cannot write {target}: {exc.strerror or exc}") from None
    return target


def _starts_with_header(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            first = handle.readline()
        return is_valid_header(json.loads(first))
    except (OSError, ValueError, RecursionError):
        return False
