"""Finding session files: per-project directories, most recent session, ``--session`` lookup, listings."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import msgspec

from xcsh.coding.paths import session_dir_for as session_dir_for  # its historical home
from xcsh.coding.sessions.entries import SessionError
from xcsh.coding.sessions.headers import header_from, read_header
from xcsh.coding.sessions.info_cache import InfoCache

logger = logging.getLogger(__name__)


class SessionNotFoundError(SessionError, LookupError):
    """No session (or more than one) matches a ``--session`` id prefix."""


class SessionInfo(msgspec.Struct, kw_only=True):
    """What a session picker shows about one file."""

    path: Path
    id: str
    cwd: str
    title: str | None
    parent_session: str | None
    created: str
    modified: float
    message_count: int
    first_message: str


def session_header_cwd(path: Path) -> str | None:
    """The ``cwd`` a session file's header names (None: no session there, or no ``cwd``)."""
    header = read_header(path)
    cwd = header.get("cwd") if header is not None else None
    return cwd if isinstance(cwd, str) and cwd else None


def _session_files(directory: Path, *, projects: bool = False) -> list[Path]:
    """The session files directly in ``directory``; with ``projects``, ``directory`` is the
    sessions root and the files are those of its project folders (``<root>/*/*.jsonl``).

    Never deeper: a session's sub-folder holds its artifacts (session-format §1), among
    them the sessions of its sub-agents, which are not sessions of the project.
    """
    try:
        pattern = "*/*.jsonl" if projects else "*.jsonl"
        return [p for p in Path(directory).glob(pattern) if p.is_file()]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def same_project(header_cwd: object, cwd: Path) -> bool:
    """Whether a session whose header says ``header_cwd`` belongs to ``cwd``.

    Per-project session folders are named by an encoding of the cwd (session-format §2) that
    two paths can share (``/a/b`` and ``/a-b`` both give ``--a-b--``), so listings of "this
    project" also compare the header's ``cwd`` (resolved, as the encoding is). A header without
    a ``cwd`` is kept: nothing says it is another project's.
    """
    if not isinstance(header_cwd, str) or not header_cwd:
        return True
    if os.path.normpath(header_cwd) == os.path.normpath(cwd):
        return True
    return os.path.realpath(header_cwd) == os.path.realpath(cwd)


def recent_sessions(directory: Path, cwd: Path | None = None) -> list[Path]:
    """The valid session files of ``directory``, most recently modified first; with ``cwd``,
    only sessions whose header names that directory (:func:`same_project`)."""
    candidates = [
        (p, _mtime(p))
        for p in _session_files(directory)
        if (header := read_header(p)) is not None and (cwd is None or same_project(header.get("cwd"), cwd))
    ]
    candidates.sort(key=lambda item: item[1], reverse=True)
    return [p for p, _ in candidates]


def find_most_recent(directory: Path, cwd: Path | None = None) -> Path | None:
    """The most recently modified valid session file of ``directory`` (None when there is none);
    with ``cwd``, only sessions whose header names that directory (:func:`same_project`)."""
    found = recent_sessions(directory, cwd)
    return found[0] if found else None


def read_session_info(path: Path, cache: InfoCache | None = None) -> SessionInfo | None:
    """Listing metadata of one file (session-format §8), or None when it is not a session.

    With ``cache``, only the part of the file it has not counted yet is read
    (:mod:`xcsh.coding.sessions.info_cache`); the answer is the same.
    """
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            found = header_from(handle)
            if found is None:
                return None
            header, head = found
            counts = (cache or InfoCache(None)).body_counts(path, handle, st, head)
    except OSError:
        return None
    title = header.get("title")
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=str(header.get("cwd") or ""),
        title=title if isinstance(title, str) else counts.short_summary,
        parent_session=parent if isinstance(parent, str) else None,
        created=str(header.get("timestamp") or ""),
        modified=st.st_mtime,
        message_count=counts.message_count,
        first_message=counts.first_message or "(no messages)",
    )


def _collect(
    paths: list[Path], cache_file: Path | None, directory: Path, *, recursive: bool = False
) -> list[SessionInfo]:
    cache = InfoCache(cache_file)
    infos = [info for info in (read_session_info(p, cache) for p in paths) if info is not None]
    cache.flush(directory, recursive=recursive)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def list_sessions(directory: Path, *, cache_file: Path | None = None) -> list[SessionInfo]:
    """Every session of ``directory``, most recently modified first.

    ``cache_file``: where the files' counts are kept between listings
    (:func:`xcsh.coding.sessions.info_cache.cache_path_for`); None reads every file whole.
    """
    return _collect(_session_files(directory), cache_file, directory)


def _matches(path: Path, session_id: str, prefix: str) -> bool:
    prefix = prefix.lower()
    stem = path.name[: -len(".jsonl")].lower()
    after_underscore = stem.rsplit("_", 1)[1] if "_" in stem else None
    return (
        session_id.lower().startswith(prefix)
        or stem.startswith(prefix)
        or (after_underscore is not None and after_underscore.startswith(prefix))
    )


def _find_matches(paths: list[Path], prefix: str) -> list[Path]:
    found: list[tuple[Path, float]] = []
    for path in paths:
        header = read_header(path)
        if header is not None and _matches(path, str(header["id"]), prefix):
            found.append((path, _mtime(path)))
    found.sort(key=lambda item: item[1], reverse=True)
    return [p for p, _ in found]


def is_path_argument(value: str) -> bool:
    """True when a ``--session`` value names a file rather than an id prefix (rpc-protocol §2.1)."""
    return "/" in value or "\\" in value or value.endswith(".jsonl")


def resolve_session_arg(value: str, session_dir: Path, sessions_root: Path | None) -> Path:
    """The session file a ``--session <id|path>`` value designates.

    A path is returned absolute, whether or not it exists. Otherwise ``value`` is a
    case-insensitive prefix of a header id, a file name or the part after ``_``,
    looked for in ``session_dir`` and then, when ``sessions_root`` is given, in every
    project. Raises :class:`SessionNotFoundError` when nothing or more than one
    session matches within the scope searched.
    """
    if is_path_argument(value):
        return Path(os.path.abspath(os.path.expanduser(value)))
    if not value.strip():
        raise SessionNotFoundError(f'No session found matching "{value}"')
    local = _session_files(session_dir)
    scopes = [local]
    if sessions_root is not None:
        local_set = {p.resolve() for p in local}
        scopes.append(
            [p for p in _session_files(sessions_root, projects=True) if p.resolve() not in local_set]
        )
    for paths in scopes:
        matches = _find_matches(paths, value)
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(p.name for p in matches[:5]) + (", …" if len(matches) > 5 else "")
            raise SessionNotFoundError(f'Multiple sessions match "{value}": {names}; give a longer prefix')
    raise SessionNotFoundError(f'No session found matching "{value}"')


def list_all_sessions(root: Path, *, cache_file: Path | None = None) -> list[SessionInfo]:
    """Every session of every project folder of ``root`` (``<root>/*/*.jsonl``, not the
    sub-agent sessions among a session's artifacts), most recently modified first
    (``cache_file`` as for :func:`list_sessions`; kept entries of any other file below
    ``root`` are dropped, as they are not listed)."""
    return _collect(_session_files(root, projects=True), cache_file, root, recursive=True)
