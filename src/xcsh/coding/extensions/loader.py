"""Finding and importing extensions.

An extension is a Python file (``guard.py``) or a package directory (``guard/`` with an
``__init__.py``) defining ``setup(xcsh)``. Sources, in load order: every ``-e PATH``,
then ``<project>/.xcsh/extensions/`` and ``<agent dir>/extensions/`` (skipped with
``--no-extensions``). Names starting with ``_`` or ``.`` are not discovered. A path
is loaded once even when it is reachable twice.

Extensions run from their **source**, never from bytecode: the module and every module of an
extension package (``guard/sub.py``, ``guard/inner/__init__.py``) is compiled from its ``.py``
file at import, no ``__pycache__`` file is read or written, and a bare ``.pyc`` is not
imported. What the trust store hashed (coding/trust.py: the ``.py`` files, not the caches) is
then what runs; a ``__pycache__/guard.cpython-311.pyc`` a repository ships (an unchecked hash
pyc runs whatever its author compiled) is ignored.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import itertools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

PROJECT_DIR = Path(".xcsh") / "extensions"
_counter = itertools.count(1)


class ExtensionLoadError(Exception):
    """An extension could not be imported or has no usable ``setup``."""


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A ``.py`` loader that compiles the source every time: no bytecode cache is read or written."""

    def get_code(self, fullname: str) -> Any:
        # SourceFileLoader.get_code would read __pycache__ first and write it after: neither
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


_roots: set[str] = set()
"""Resolved directories of the loaded extension packages: imports under them load from source."""


def _source_only_hook(path: str) -> importlib.machinery.FileFinder:
    """The ``sys.path_hooks`` entry: a source-only finder for directories under an extension
    package (its submodules and subpackages); ``ImportError`` elsewhere (the next hook decides)."""
    if _roots:
        real = os.path.realpath(path)
        if any(_inside(real, root) for root in _roots):
            loaders: list[tuple[type[Any], list[str]]] = [
                (SourceOnlyLoader, importlib.machinery.SOURCE_SUFFIXES),
                (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
            ]
            return importlib.machinery.FileFinder(path, *loaders)
    raise ImportError("not an extension package directory")


def _cover_package(directory: Path) -> None:
    """Make every import under ``directory`` use :class:`SourceOnlyLoader` (installs the hook once)."""
    if _source_only_hook not in sys.path_hooks:
        sys.path_hooks.insert(0, _source_only_hook)
    _roots.add(os.path.realpath(directory))
    # a finder made before the hook (same directory imported some other way) would bypass it
    root = os.path.realpath(directory)
    for cached in [p for p in sys.path_importer_cache if _inside(os.path.realpath(p), root)]:
        del sys.path_importer_cache[cached]


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _discover(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    found: list[Path] = []
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name.startswith(("_", ".")):
            continue
        if (entry.is_file() and entry.suffix == ".py") or (
            entry.is_dir() and (entry / "__init__.py").is_file()
        ):
            found.append(entry)
    return found


def _explicit(cwd: Path, raw: str) -> Path:
    path = Path(raw).expanduser()
    return path if path.is_absolute() else cwd / path


def project_extensions(cwd: Path) -> list[Path]:
    """The extensions discovered in ``<cwd>/.xcsh/extensions/`` (project code: needs trust)."""
    return _discover(cwd / PROJECT_DIR)


def extension_paths(
    *, cwd: Path, agent_dir: Path, explicit: Sequence[str], discover: bool = True, project: bool = True
) -> list[Path]:
    """The extension paths to load, in order, without duplicates (explicit ones resolved against cwd).

    ``project`` false leaves out the project's own extensions (an untrusted directory,
    see :mod:`xcsh.coding.trust`); explicit ``-e`` paths are always loaded.
    """
    candidates = [_explicit(cwd, raw) for raw in explicit]
    if discover:
        if project:
            candidates += project_extensions(cwd)
        candidates += _discover(agent_dir / "extensions")
    out: list[Path] = []
    seen: set[Path] = set()
    for path in candidates:
        resolved = path.resolve()
        if resolved not in seen:
            seen.add(resolved)
            out.append(resolved)
    return out


def import_extension(path: Path) -> Callable[[Any], Any]:
    """Import the extension at ``path`` under a private module name; return its ``setup``.

    Raises :class:`ExtensionLoadError` with a readable message for every failure,
    including exceptions raised by the module's own top-level code.
    """
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            raise ExtensionLoadError(f"{path} is a directory without __init__.py")
        _cover_package(path)
        name = _module_name(path)
        spec = importlib.util.spec_from_file_location(
            name, init, loader=SourceOnlyLoader(name, str(init)), submodule_search_locations=[str(path)]
        )
    elif path.is_file():
        name = _module_name(path)
        spec = importlib.util.spec_from_file_location(name, path, loader=SourceOnlyLoader(name, str(path)))
    else:
        raise ExtensionLoadError(f"Extension not found: {path}")
    if spec is None or spec.loader is None:
        raise ExtensionLoadError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # extension boundary: third-party module code may raise anything
        sys.modules.pop(spec.name, None)
        raise ExtensionLoadError(str(exc) or type(exc).__name__) from exc
    return _setup_of(module, path)


def _module_name(path: Path) -> str:
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"xcsh_extension_{next(_counter)}_{stem}"


def _setup_of(module: ModuleType, path: Path) -> Callable[[Any], Any]:
    setup = getattr(module, "setup", None)
    if not callable(setup):
        raise ExtensionLoadError(f"{path} does not define setup(xcsh)")
    return setup  # type: ignore[no-any-return]  # module attribute checked callable above
