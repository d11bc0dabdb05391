"""New session files made from an existing store: a branch at a user message and a fork.

Both work on :class:`~xcsh.coding.sessions.store.SessionStore`'s public API and
build the new store with the same class (``type(store)``). The store does not import
this module (no import cycle): callers use these functions directly.
"""

from __future__ import annotations

import os
from pathlib import Path

from xcsh.coding.sessions.blobs import BlobStore
from xcsh.coding.sessions.entries import (
    NotASessionError,
    SessionEntry,
    SessionError,
    generate_entry_id,
    iso_now,
    new_header,
)
from xcsh.coding.sessions.lines import LineTable
from xcsh.coding.sessions.store import SessionStore


class InvalidBranchEntryError(SessionError):
    """The entry to branch from is not a user message entry."""

    def __init__(self) -> None:
        super().__init__("Invalid entry ID for branching")


def branch_to_new_file(store: SessionStore, entry_id: str, *, cwd: Path | None = None) -> SessionStore:
    """Start a new session from the user message ``entry_id`` (rpc-protocol §5.9 ``branch``).

    If the entry has a parent P, a new file (in the store's ``session_dir``, with
    ``parentSession`` = the store's file and ``cwd`` as its header's, by default the store's)
    is written at once with copies of root → P
    and fresh label entries for labels on those entries; its leaf is P (or the last
    label). A root entry yields a brand-new empty session instead. On success
    ``store`` is closed and the new one returned; raises
    :class:`InvalidBranchEntryError` for anything but a user message entry.
    """
    selected = store.get_entry(entry_id)
    if (
        selected is None
        or selected.get("type") != "message"
        or not isinstance(selected.get("message"), dict)
        or selected["message"].get("role") != "user"
    ):
        raise InvalidBranchEntryError()
    store_class = type(store)
    new_cwd = str(cwd) if cwd is not None else store.cwd
    parent_session = str(store.path) if store.path is not None else None
    parent_id = selected.get("parentId")
    if not isinstance(parent_id, str) or store.get_entry(parent_id) is None:
        if store.path is None or store.session_dir is None:
            new_store = store_class.in_memory(Path(new_cwd))
        else:
            new_store = store_class.create(
                store.session_dir,
                Path(new_cwd),
                parent_session=parent_session,
                blob_dir=store.blobs.directory if store.blobs else None,
            )
        store.close()
        return new_store

    header = new_header(new_cwd, parent_session=parent_session)
    new_store = store_class.from_entries(
        header,
        _path_with_labels(store, parent_id),
        session_dir=store.session_dir,
        blobs=store.blobs,
        lines_from=store,
    )
    store.close()
    return new_store


def _path_with_labels(store: SessionStore, leaf_id: str) -> list[SessionEntry]:
    """Root → ``leaf_id`` without label entries, then one fresh label entry per labelled entry.

    The entries are ``store``'s own objects, not copies: stored entries are never changed in
    place (a change replaces the entry), ``store`` is closed right after, and the new file
    copies their lines from ``store``'s instead of encoding them again.
    """
    path = [e for e in store.branch_path(leaf_id) if e.get("type") != "label"]
    ids = {e["id"] for e in path}
    last_id: str | None = path[-1]["id"] if path else None
    for entry in list(path):
        label = store.get_label(entry["id"])
        if label:
            new_id = generate_entry_id(ids)
            ids.add(new_id)
            path.append(
                {
                    "type": "label",
                    "id": new_id,
                    "parentId": last_id,
                    "timestamp": iso_now(),
                    "targetId": entry["id"],
                    "label": label,
                }
            )
            last_id = new_id
    return path


def fork_to(store: SessionStore, session_dir: Path, *, cwd: Path | None = None) -> SessionStore:
    """Copy every entry of ``store`` into a new session file in ``session_dir``, written at once (``--fork``).

    The new header keeps the store's title and records the store's **id** as
    ``parentSession``; ``cwd`` defaults to the store's. ``store`` stays open; the new store
    holds the same entry objects (stored entries are never changed in place), whose lines are
    copied from ``store``'s file.
    """
    header = new_header(str(cwd) if cwd is not None else store.cwd, parent_session=store.session_id)
    source = store.header
    if "title" in source:
        header["title"] = source["title"]
    if "titleSource" in source:
        header["titleSource"] = source["titleSource"]
    return type(store).from_entries(
        header, store.entries, session_dir=Path(session_dir), blobs=store.blobs, lines_from=store
    )


def fork_file(source: Path, session_dir: Path, *, blob_dir: Path | None = None) -> SessionStore:
    """``--fork <path>``: copy the session file ``source`` into a new session in ``session_dir``.

    The source is only read: not locked (a session open in another process can be forked),
    not created when missing, not migrated or repaired on disk (an older version is migrated
    in memory). Raises :class:`SessionError` ``Cannot fork: …`` for a missing, empty or
    header-less source, ``OSError`` when it cannot be read.
    """
    from xcsh.coding.sessions.loading import read_session_file  # --fork only, not a branch

    source = Path(os.path.abspath(os.path.expanduser(source)))
    blobs = BlobStore(blob_dir) if blob_dir is not None else None
    if not source.is_file():  # missing, or a directory, FIFO (that would block) …
        raise SessionError(f"Cannot fork: source session file is empty or invalid: {source}")
    try:
        loaded = read_session_file(source, blobs)
    except NotASessionError:
        raise SessionError(f"Cannot fork: source session has no header: {source}") from None
    if loaded is None:
        raise SessionError(f"Cannot fork: source session file is empty or invalid: {source}")
    # a store over the source that never writes (no lock, nothing appended): only so the new
    # file copies the source's unchanged lines instead of encoding every entry again
    reader = SessionStore(
        header=loaded.header,
        entries=loaded.entries,
        path=source,
        session_dir=None,
        blobs=blobs,
        flushed=True,
        lines=LineTable(loaded.ident, loaded=(list(loaded.entries), loaded.spans)),
        size=loaded.parsed.good_end + loaded.parsed.needs_newline,
    )
    try:
        return fork_to(reader, session_dir)
    finally:
        reader.close()
