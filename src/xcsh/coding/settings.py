"""Settings: built-in defaults, overlaid by user and project ``config.yml``, plus runtime overrides.

Keys are dotted paths (``retry.baseDelayMs``). Files hold nested YAML mappings. Writes
(``set``) go to the user file (``<agent dir>/config.yml``): under an exclusive lock on
``config.yml.lock`` the file is read again, only the keys being set are changed (the user's
comments and key order are kept), and the result replaces the file atomically (mode ``0600``) —
so processes sharing an agent dir never undo each other's changes. Runtime overrides (RPC mode's reset of workflow
settings) are never persisted and win over files.
"""

from __future__ import annotations

import copy
import fcntl
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xcsh.coding.private_fs import foreign_status, make_private_dirs, open_private, write_private_file
from xcsh.coding.yaml_cache import cache_dir_for, read_yaml_file
from xcsh.coding.yaml_cache import forget as forget_cached_yaml
from xcsh.coding.yaml_load import safe_load

logger = logging.getLogger(__name__)

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


class SettingsError(ValueError):
    """A settings file could not be read; the message names the file."""


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


def _assign(tree: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


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


def _merge_into(target: dict[str, Any], source: dict[str, Any]) -> None:
    """Put ``source`` over ``target``: mappings in both are merged, anything else replaces (new
    dicts are made, so no layer is changed)."""
    for name, value in source.items():
        below = target.get(name)
        if isinstance(value, dict):
            merged: dict[str, Any] = dict(below) if isinstance(below, dict) else {}
            _merge_into(merged, value)
            target[name] = merged
        else:
            target[name] = value


def _load_yaml(path: Path, cache_dir: Path | None = None) -> dict[str, Any]:
    """The mapping in ``path`` ({} when absent); with ``cache_dir``, an unchanged file's parse
    comes from there (:mod:`xcsh.coding.yaml_cache`)."""
    if not path.is_file():
        forget_cached_yaml(path, cache_dir)
        return {}

    def parse(text: str) -> Any:
        import yaml

        try:
            return safe_load(text)
        except yaml.YAMLError as exc:
            raise SettingsError(f"Could not read settings file {path}: {exc}") from exc

    try:
        data = read_yaml_file(path, parse, cache_dir)
    except OSError as exc:
        raise SettingsError(f"Could not read settings file {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(f"Settings file {path} must contain a mapping at the top level")
    return data


def _load_project_yaml(path: Path, cache_dir: Path | None) -> dict[str, Any]:
    """The project's settings; a file that cannot be read (invalid YAML, an alias bomb, not a
    mapping) is ignored with a warning naming it, so a repository cannot stop xcsh from starting."""
    try:
        return _load_yaml(path, cache_dir)
    except SettingsError as exc:
        logger.warning("%s; the project's settings are ignored", exc)
        return {}


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
        """``cache_dir``: where unchanged files' parses are kept (:mod:`xcsh.coding.yaml_cache`)."""
        self.user_file = user_file
        self.project_file = project_file
        self._user = _load_yaml(user_file, cache_dir) if user_file else {}
        self._project = _load_project_yaml(project_file, cache_dir) if project_file else {}
        self._overrides: dict[str, Any] = {}
        self.version = 0
        # get()'s lookups (where the key was found, its value) since the last change
        self._found: dict[str, tuple[int, Any]] = {}
        self._found_version = 0

    @classmethod
    def load(cls, agent_dir: Path, cwd: Path | None = None, *, grant: bool = False) -> Settings:
        """The user's settings and cwd's ``.xcsh/config.yml``, unless ``.xcsh/`` or cwd is a folder
        another user controls (:func:`xcsh.coding.private_fs.foreign_status`) and the user has not
        trusted cwd (``grant``: this run's ``--trust``; ``trust.projects``; a recorded ``--trust``);
        then a warning names the file, why, and how to trust cwd. A shared folder like ``/tmp``
        (writable by every user, sticky) is never trusted so."""
        cache_dir = cache_dir_for(agent_dir)
        settings = cls(user_file=agent_dir / "config.yml", cache_dir=cache_dir)
        project = cwd / ".xcsh" / "config.yml" if cwd is not None else None
        if cwd is None or project is None or not project.is_file():
            return settings
        for folder in (project.parent, cwd):
            verdict = foreign_status(folder)
            if verdict is None:
                continue
            from xcsh.coding import trust

            if not verdict.shared and trust.named_by_user(
                cwd, agent_dir, grant=grant, trusted_dirs=settings.trusted_dirs()
            ):
                continue
            remedy = "" if verdict.shared else f"; {trust.remedy(cwd, agent_dir)}"
            logger.warning("skipped %s: %s is %s, not yours%s", project, folder, verdict.reason, remedy)
            return settings
        settings.project_file = project
        settings._project = _load_project_yaml(project, cache_dir)
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
            _merge_into(merged, mapping)
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
            _assign(self._user, key, copy.deepcopy(value))
        if self.user_file is None:
            return
        try:
            self._user = update_settings_file(self.user_file, values)
            self.version += 1
        except (OSError, SettingsError) as exc:
            logger.warning("could not persist settings %s to %s: %s", ", ".join(values), self.user_file, exc)


def settings_lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def update_settings_file(path: Path, values: Mapping[str, Any]) -> dict[str, Any]:
    """Change only ``values`` in the YAML mapping at ``path``, under an exclusive ``flock``.

    The lock file (``<path>.lock``, mode ``0600``) is kept; the settings file is
    replaced atomically with mode ``0600``. Returns the new content. Raises
    :class:`SettingsError` when the existing file is not a readable mapping (it is
    then not touched) and ``OSError`` on I/O failures.
    """
    import yaml

    make_private_dirs(path.parent)
    fd = open_private(settings_lock_path(path), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        tree = _load_yaml(path)
        for key, value in values.items():
            _assign(tree, key, copy.deepcopy(value))
        text = _rewrite_keeping_comments(path, values, tree)
        if text is None:
            text = yaml.safe_dump(tree, sort_keys=False, allow_unicode=True)
        write_private_file(path, text.encode("utf-8"))
        return tree
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _rewrite_keeping_comments(path: Path, values: Mapping[str, Any], expected: dict[str, Any]) -> str | None:
    """The file's text with ``values`` set and its comments, key order and indentation kept (ruamel.yaml).

    The indentation is guessed from the file (one width for its blocks, one offset for list
    dashes): a file that indents its blocks inconsistently comes back indented one way.

    None when the file is empty or absent (nothing to keep), or when the round-trip text would not
    read back, through the reader every load uses (PyYAML), exactly as ``expected``: the two
    libraries follow different YAML versions (``yes`` is a boolean to one and a string to the
    other), so the caller then writes a plain dump instead, losing comments rather than meaning.
    """
    try:
        original = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not original.strip():
        return None
    import io

    import yaml
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError as RoundTripError
    from ruamel.yaml.util import load_yaml_guess_indent

    editor = YAML(typ="rt")
    editor.width = 4096  # never fold a long value the user wrote on one line
    try:
        document, indent, dash_offset = load_yaml_guess_indent(original)
        if not isinstance(document, dict):
            return None
        if indent is not None:  # the file's own indentation, not ruamel's default of two
            editor.indent(mapping=indent, sequence=indent, offset=dash_offset or 0)
        for key, value in values.items():
            _assign(document, key, copy.deepcopy(value))
        out = io.StringIO()
        editor.dump(document, out)
    except (RoundTripError, ValueError, TypeError):
        return None
    text = out.getvalue()
    try:
        if safe_load(text) != expected:
            return None
    except yaml.YAMLError:
        return None
    return text
