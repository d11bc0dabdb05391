"""Settings files: reading the user's and the project's, and changing keys of the user's.

A user file that cannot be read stops start-up (:class:`SettingsError` names it); a project file
that cannot be read is ignored with a warning. Writes change only the keys being set, under an
exclusive lock on ``<file>.lock``, keeping the user's comments and key order, and replace the file
atomically (mode ``0600``).
"""

from __future__ import annotations

import copy
import fcntl
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xcsh.coding.private_fs import make_private_dirs, open_private, write_private_file
from xcsh.coding.yaml_cache import forget as forget_cached_yaml
from xcsh.coding.yaml_cache import read_config_bytes, read_yaml_file
from xcsh.coding.yaml_load import safe_load

logger = logging.getLogger(__name__)


class SettingsError(ValueError):
    """A settings file could not be read; the message names the file."""


def assign(tree: dict[str, Any], key: str, value: Any) -> None:
    """Set the dotted ``key`` in ``tree``, making the mappings on the way."""
    parts = key.split(".")
    node = tree
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def merge_into(target: dict[str, Any], source: dict[str, Any]) -> None:
    """Put ``source`` over ``target``: mappings in both are merged, anything else replaces (new
    dicts are made, so no layer is changed)."""
    for name, value in source.items():
        below = target.get(name)
        if isinstance(value, dict):
            merged: dict[str, Any] = dict(below) if isinstance(below, dict) else {}
            merge_into(merged, value)
            target[name] = merged
        else:
            target[name] = value


def load_settings_yaml(path: Path, cache_dir: Path | None = None) -> dict[str, Any]:
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


def _load_settings_json(path: Path) -> dict[str, Any]:
    """The mapping in a JSON settings file (the reference's ``.xcsh/settings.json``), read with the
    size and kind limits of every config file (:func:`xcsh.coding.yaml_cache.read_config_bytes`)."""
    import json

    try:
        data = json.loads(read_config_bytes(path).decode("utf-8"))
    # UnicodeDecodeError and JSONDecodeError are ValueErrors; nesting past ~990 levels is a
    # RecursionError, which stopped start-up (review 7 D1)
    except (OSError, ValueError, RecursionError) as exc:
        raise SettingsError(f"Could not read settings file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"Settings file {path} must contain a mapping at the top level")
    return data


def load_project_settings(paths: Sequence[Path], cache_dir: Path | None) -> dict[str, Any]:
    """The project's settings: the files of ``paths`` (``.json`` or YAML) merged, a later file's
    keys over an earlier one's (:func:`merge_into`). A file that cannot be read (invalid YAML or
    JSON, an alias bomb, not a mapping, too large) is ignored with a warning naming it, so a
    repository cannot stop xcsh from starting."""
    merged: dict[str, Any] = {}
    for path in paths:
        try:
            if path.suffix == ".json":
                data = _load_settings_json(path)
            else:
                data = load_settings_yaml(path, cache_dir)
        except SettingsError as exc:
            logger.warning("%s; the project's settings in it are ignored", exc)
            continue
        merge_into(merged, data)
    return merged


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
        tree = load_settings_yaml(path)
        for key, value in values.items():
            assign(tree, key, copy.deepcopy(value))
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
            assign(document, key, copy.deepcopy(value))
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
