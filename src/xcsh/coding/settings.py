"""Settings: built-in defaults, overlaid by the user's ``config.yml`` and the project's settings
(``.xcsh/settings.json``, ``.xcsh/config.yml``), plus runtime overrides.

Keys are dotted paths (``retry.baseDelayMs``). Files hold nested mappings (:mod:`xcsh.coding.settings_files`). Writes
(``set``) go to the user file (``<agent dir>/config.yml``): under an exclusive lock on
``config.yml.lock`` the file is read again, only the keys being set are changed (the user's
comments and key order are kept), and the result replaces the file atomically (mode ``0600``) —
so processes sharing an agent dir never undo each other's changes. Runtime overrides (RPC mode's reset of workflow
settings) are never persisted and win over files.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xcsh.coding.private_fs import foreign_status
from xcsh.coding.settings_files import (
    SettingsError,
    assign,
    load_project_settings,
    load_settings_yaml,
    merge_into,
    settings_lock_path,
    update_settings_file,
)
from xcsh.coding.yaml_cache import cache_dir_for

__all__ = [
    "DEFAULTS",
    "RPC_RESET_KEYS",
    "Settings",
    "SettingsError",
    "settings_lock_path",
    "update_settings_file",
]

logger = logging.getLogger(__name__)

PROJECT_FILES = (os.path.join(".xcsh", "settings.json"), os.path.join(".xcsh", "config.yml"))
"""cwd's project settings files, in merge order: the reference reads ``.xcsh/settings.json``;
xcsh's own ``.xcsh/config.yml`` (the user file's format) wins over it key by key."""

DEFAULTS: dict[str, Any] = {
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "interruptMode": "wait",
    "defaultThinkingLevel": "xhigh",
    "retry": {
        "enabled": True,
        "maxRetries": 3,
        "transientMaxRetries": 8,
        "baseDelayMs": 2000,
        "maxDelayMs": 16000,
    },
    "compaction": {
        "enabled": True,
        "strategy": "context-full",
        "thresholdPercent": -1,
        "thresholdTokens": -1,
        "reserveTokens": 16384,
        "keepRecentTokens": 20000,
        "autoContinue": True,
        "idleEnabled": False,
        "pruneProtectTokens": 40000,
        "pruneMinimumSavings": 20000,
    },
    "todo": {"enabled": True, "reminders": True, "reminders.max": 3, "eager": False},
    "tasks": {"todoClearDelay": 60},
    "async": {"enabled": False, "maxJobs": 100},
    "bash": {"autoBackground": {"enabled": False, "thresholdMs": 60000}},
    "task": {
        "isolation": {"mode": "none", "merge": "patch", "commits": "generic"},
        "eager": False,
        "maxConcurrency": 32,
        "maxRecursionDepth": 2,
        "disabledAgents": [],
        "agentModelOverrides": {},
    },
    "tools": {"intentTracing": True, "passProviderKeys": False},
    "edit": {"mode": "hashline"},
    "readHashLines": True,
    "readLineNumbers": False,
    "thinkingBudgets": {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768},
    "ttsr": {
        "enabled": True,
        "interruptMode": "always",
        "repeatMode": "once",
        "repeatGap": 10,
        "contextMode": "discard",
    },
}

CHOICES: dict[str, tuple[str, ...]] = {
    "steeringMode": ("all", "one-at-a-time"),
    "followUpMode": ("all", "one-at-a-time"),
    "interruptMode": ("immediate", "wait"),
}
"""The keys whose value must be one of a few words (the ``get_state`` schema): see :meth:`Settings.choice`."""

# Reset to built-in defaults in RPC mode (rpc-protocol §2.2), with eager todos on.
RPC_RESET_KEYS = (
    "todo.enabled",
    "todo.reminders",
    "todo.reminders.max",
    "todo.eager",
    "async.enabled",
    "async.maxJobs",
    "bash.autoBackground.enabled",
    "bash.autoBackground.thresholdMs",
    "task.isolation.mode",
    "task.isolation.merge",
    "task.isolation.commits",
    "task.eager",
    "task.maxConcurrency",
    "task.maxRecursionDepth",
    "task.disabledAgents",
    "task.agentModelOverrides",
)


def _lookup(tree: Any, key: str) -> tuple[bool, Any]:
    """Find ``key`` in a nested mapping; a literal dotted key (``reminders.max``) also matches."""
    if not isinstance(tree, dict):
        return False, None
    if key in tree:
        return True, tree[key]
    head, sep, rest = key.partition(".")
    while sep:
        if head in tree and isinstance(tree[head], dict):
            found, value = _lookup(tree[head], rest)
            if found:
                return True, value
        nxt, sep, rest = rest.partition(".")
        head = f"{head}.{nxt}"
    return False, None


def _flatten(tree: dict[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for name, value in tree.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict) and value:
            keys.extend(_flatten(value, key + "."))
        else:
            keys.append(key)
    return keys


def _without(tree: dict[str, Any], prefixes: tuple[str, ...], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in tree.items():
        key = f"{prefix}{name}"
        if any(key == p or key.startswith(p + ".") for p in prefixes):
            continue
        out[name] = _without(value, prefixes, key + ".") if isinstance(value, dict) else value
    return out


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})
_NOWHERE, _OVERRIDE, _LAYER = 0, 1, 2  # where get() found a key


class Settings:
    """Layered settings: overrides > project file > user file > defaults (a mapping value merged
    key by key over the layers below, :meth:`_find`).

    ``version`` grows with every change made through this object (the layers are private and
    changed only here), so a reader may keep a value derived from settings until it moves.
    """

    def __init__(
        self,
        *,
        user_file: Path | None = None,
        project_file: Path | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        """``project_file``: a project settings file (YAML, or JSON when named ``*.json``);
        ``cache_dir``: where unchanged files' parses are kept (:mod:`xcsh.coding.yaml_cache`)."""
        self.user_file = user_file
        self.project_files: list[Path] = [project_file] if project_file is not None else []
        """The project settings files read, in merge order (later wins)."""
        self._user = load_settings_yaml(user_file, cache_dir) if user_file else {}
        self._project = load_project_settings(self.project_files, cache_dir)
        self._overrides: dict[str, Any] = {}
        self.version = 0
        # get()'s lookups (where the key was found, its value) since the last change
        self._found: dict[str, tuple[int, Any]] = {}
        self._found_version = 0

    @classmethod
    def load(cls, agent_dir: Path, cwd: Path | None = None, *, grant: bool = False) -> Settings:
        """The user's settings and cwd's project settings (:data:`PROJECT_FILES`: the reference's
        ``.xcsh/settings.json``, then ``.xcsh/config.yml`` over it), unless ``.xcsh/`` or cwd is a
        folder another user controls (:func:`xcsh.coding.private_fs.foreign_status`) and the user
        has not trusted cwd (``grant``: this run's ``--trust``; ``trust.projects``; a recorded
        ``--trust``); then a warning names the files, why, and how to trust cwd. A shared folder
        like ``/tmp`` (writable by every user, sticky) is never trusted so."""
        cache_dir = cache_dir_for(agent_dir)
        settings = cls(user_file=agent_dir / "config.yml", cache_dir=cache_dir)
        if cwd is None:
            return settings
        files = [cwd / name for name in PROJECT_FILES if os.path.isfile(cwd / name)]
        if not files:
            return settings
        for folder in (files[0].parent, cwd):
            verdict = foreign_status(folder)
            if verdict is None:
                continue
            from xcsh.coding import trust

            if not verdict.shared and trust.named_by_user(
                cwd, agent_dir, grant=grant, trusted_dirs=settings.trusted_dirs()
            ):
                continue
            remedy = "" if verdict.shared else f"; {trust.remedy(cwd, agent_dir)}"
            named = ", ".join(str(f) for f in files)
            logger.warning("skipped %s: %s is %s, not yours%s", named, folder, verdict.reason, remedy)
            return settings
        settings.project_files = files
        settings._project = load_project_settings(files, cache_dir)
        return settings

    def get(self, key: str, default: Any = None) -> Any:
        if self._found_version != self.version:
            self._found.clear()  # found again after any change
            self._found_version = self.version
        found = self._found.get(key)
        if found is None:
            found = self._find(key)
            self._found[key] = found
        where, value = found
        if where == _NOWHERE:
            return default
        if where == _OVERRIDE or type(value) in _IMMUTABLE:
            return value
        return copy.deepcopy(value)  # a caller may change what it gets

    def _find(self, key: str) -> tuple[int, Any]:
        """An override as given; else the project's, user's or default value, where a mapping is
        merged key by key over the mappings below it (the reference's deep merge: a project's
        ``bash.environment`` adds to the user's). An untrusted project's protected keys were
        dropped from its layer (:meth:`drop_project_keys`), so they never enter a merge."""
        if key in self._overrides:
            return _OVERRIDE, self._overrides[key]
        mappings: list[dict[str, Any]] = []
        for layer in (self._project, self._user, DEFAULTS):
            found, value = _lookup(layer, key)
            if not found:
                continue
            if not isinstance(value, dict):
                if not mappings:
                    return _LAYER, value
                break  # a mapping above replaced this value whole
            mappings.append(value)
        if not mappings:
            return _NOWHERE, None
        merged: dict[str, Any] = {}
        for mapping in reversed(mappings):
            merge_into(merged, mapping)
        return _LAYER, merged

    def is_configured(self, key: str) -> bool:
        """True when ``key`` is set by an override, the project file or the user file (not a default)."""
        return key in self._overrides or any(_lookup(layer, key)[0] for layer in (self._project, self._user))

    def get_user(self, key: str, default: Any = None) -> Any:
        """A value from overrides, the user file or the defaults — never the project file.

        For settings that weaken a protection (passing credentials to tools, trusting
        project code): a repository must not be able to grant itself those.
        """
        if key in self._overrides:
            return self._overrides[key]
        for layer in (self._user, DEFAULTS):
            found, value = _lookup(layer, key)
            if found:
                return copy.deepcopy(value)
        return default

    def trusted_dirs(self) -> tuple[str, ...]:
        """The user's ``trust.projects`` (``trust.PROJECTS_SETTING``; never the project file's):
        the directories the user trusts whatever their content."""
        value = self.get_user("trust.projects")
        return tuple(str(d) for d in value) if isinstance(value, list) else ()

    def get_user_bool(self, key: str, default: bool) -> bool:
        """:meth:`get_user` for a boolean (``default`` when the value is not one)."""
        value = self.get_user(key, default)
        return value if isinstance(value, bool) else default

    def has_project_settings(self) -> bool:
        """Whether the project file sets anything at all."""
        return bool(self._project)

    def project_keys(self, prefixes: tuple[str, ...]) -> list[str]:
        """Dotted keys the project file sets at or under any of ``prefixes``."""
        return [
            key
            for key in _flatten(self._project)
            if any(key == p or key.startswith(p + ".") for p in prefixes)
        ]

    def drop_project_keys(self, prefixes: tuple[str, ...]) -> None:
        """Ignore the project file's keys at or under ``prefixes`` (an untrusted project)."""
        self._project = _without(self._project, prefixes, "")
        self.version += 1

    def get_int(self, key: str, default: int) -> int:
        """The value as an int; ``default`` when it is not a number (``.inf`` and ``.nan`` included)."""
        value = self.get(key, default)
        try:
            return int(value)
        except (TypeError, ValueError, OverflowError):
            return default

    def choice(self, key: str) -> str:
        """The value of a :data:`CHOICES` key; its default, with a warning, when a settings file
        holds anything else (``steeringMode: bogus`` went out in ``get_state``: review 7 D3)."""
        value = self.get(key, DEFAULTS[key])
        if isinstance(value, str) and value in CHOICES[key]:
            return value
        default = str(DEFAULTS[key])
        logger.warning("setting %s: %.80r is not one of %s; %r is used", key, value, CHOICES[key], default)
        return default

    def get_bool(self, key: str, default: bool) -> bool:
        value = self.get(key, default)
        return value if isinstance(value, bool) else default

    def override(self, key: str, value: Any) -> None:
        """Set a runtime-only value (never persisted)."""
        self._overrides[key] = value
        self.version += 1

    def reset_to_defaults(self, keys: tuple[str, ...]) -> None:
        for key in keys:
            found, value = _lookup(DEFAULTS, key)
            if found:
                self._overrides[key] = copy.deepcopy(value)
        self.version += 1

    def set(self, key: str, value: Any) -> None:
        """Set ``key`` in the user settings file (read-modify-write under its lock) and in memory."""
        self.set_many({key: value})

    def set_many(self, values: Mapping[str, Any]) -> None:
        """Set several keys in one locked update of the user file; other keys on disk are kept.

        The in-memory user layer becomes the file's new content (so changes other
        processes made meanwhile are seen too). A file that cannot be read or written
        is left alone and the failure logged; the values still apply in memory.
        """
        self.version += 1
        for key, value in values.items():
            self._overrides.pop(key, None)
            assign(self._user, key, copy.deepcopy(value))
        if self.user_file is None:
            return
        try:
            self._user = update_settings_file(self.user_file, values)
            self.version += 1
        except (OSError, SettingsError) as exc:
            logger.warning("could not persist settings %s to %s: %s", ", ".join(values), self.user_file, exc)
