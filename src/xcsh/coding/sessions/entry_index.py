"""EntryIndex: a session's entries in memory, indexed for the lookups the store answers.

The entries in file order, by id, by position, by the message object they hold; the labels; the
leaf new entries attach to; and the last branch walked. It knows nothing of files: the
:class:`~xcsh.coding.sessions.store.SessionStore` owns one and persists what it adds.
"""

from __future__ import annotations

from xcsh.coding.sessions.context import path_to
from xcsh.coding.sessions.entries import SessionEntry, SessionError, generate_entry_id


class EntryIndex:
    """The entries of one session and their indexes; :meth:`add` makes an entry the leaf."""

    def __init__(self, entries: list[SessionEntry]) -> None:
        self._entries: list[SessionEntry] = []
        self._by_id: dict[str, SessionEntry] = {}
        self._positions: dict[str, int] = {}  # entry id → index in entries (the last one with it)
        self._by_message: dict[int, SessionEntry] = {}  # id() of a message entry's message → entry
        self._labels: dict[str, str] = {}
        self._leaf_id: str | None = None
        # the last branch walked (leaf id, root → leaf): resuming reads it twice (the context,
        # then the todos); forgotten whenever an entry, the leaf or an id's entry changes
        self._branch: tuple[str, list[SessionEntry]] | None = None
        self._has_message = False
        for entry in entries:
            self.add(entry)

    @property
    def entries(self) -> list[SessionEntry]:
        """All entries in file order (the live list: callers only read it)."""
        return self._entries

    @property
    def leaf_id(self) -> str | None:
        """The entry new entries attach to (moved by :meth:`set_leaf` and :meth:`add`)."""
        return self._leaf_id

    @property
    def has_message(self) -> bool:
        """Whether any entry holds a message (the file is written from the first one on)."""
        return self._has_message

    def new_id(self) -> str:
        """An entry id no entry has yet."""
        return generate_entry_id(self._by_id)

    def get(self, entry_id: str) -> SessionEntry | None:
        return self._by_id.get(entry_id)

    def entry_of_message(self, message: object) -> SessionEntry | None:
        """The ``message`` entry holding this very message object, or None."""
        entry = self._by_message.get(id(message))
        return entry if entry is not None and entry.get("message") is message else None

    def label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def branch_to(self, leaf_id: str | None) -> list[SessionEntry]:
        """Entries from the root to ``leaf_id`` (empty for None or an unknown id); the cached
        list itself, which callers only read."""
        if leaf_id is None:
            return []
        branch = self._branch
        if branch is not None and branch[0] == leaf_id:
            return branch[1]
        leaf = self._by_id.get(leaf_id)
        if leaf is None:
            return []
        path = path_to(self._by_id, leaf)
        self._branch = (leaf_id, path)
        return path

    def set_leaf(self, entry_id: str | None) -> None:
        """Move the leaf; raises :class:`SessionError` for an unknown id."""
        if entry_id is not None and entry_id not in self._by_id:
            raise SessionError(f"Entry {entry_id} not found")
        self._leaf_id = entry_id
        self._branch = None

    def add(self, entry: SessionEntry) -> None:
        """Index ``entry`` after the others and make it the leaf."""
        self._branch = None
        self._positions[entry["id"]] = len(self._entries)
        self._entries.append(entry)
        self._by_id[entry["id"]] = entry
        self._leaf_id = entry["id"]
        kind = entry.get("type")
        if kind == "message":
            self._by_message[id(entry.get("message"))] = entry
            self._has_message = True
        elif kind == "label":
            label, target = entry.get("label"), entry.get("targetId", "")
            if not isinstance(target, str):
                pass  # a hand-edited entry naming no entry labels nothing
            elif label and isinstance(label, str):
                self._labels[target] = label
            else:
                self._labels.pop(target, None)
        elif kind == "custom_message":
            self._has_message = True

    def replace(self, entry_id: str, new_entry: SessionEntry) -> None:
        """Put ``new_entry`` (same id) where entry ``entry_id`` stands."""
        if entry_id not in self._positions:
            raise SessionError(f"Entry {entry_id} not found")
        if new_entry.get("id") != entry_id:
            raise ValueError("a replacement entry must keep its id")
        position = self._positions[entry_id]
        old = self._entries[position]
        if old.get("type") == "message" and self._by_message.get(id(old.get("message"))) is old:
            del self._by_message[id(old.get("message"))]
        if new_entry.get("type") == "message":
            self._by_message[id(new_entry.get("message"))] = new_entry
        self._entries[position] = new_entry
        self._by_id[entry_id] = new_entry
        self._branch = None
