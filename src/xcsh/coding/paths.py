"""Where the agent keeps its data, under the environment variables the reference reads.

- agent dir: ``$PI_CODING_AGENT_DIR``, else ``~/<$PI_CONFIG_DIR or .xcsh>/agent``;
- sessions root: ``<agent dir>/sessions`` — except that for the default profile on
  Linux/macOS an existing ``$XDG_DATA_HOME/xcsh`` holds the data directories instead;
- per-project session directory: ``<sessions root>/<encoded cwd>`` (session-format §1).

Every function takes an optional ``env`` mapping (default: ``os.environ``) so callers
and tests can resolve paths for an environment other than the process's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

CONFIG_DIR_NAME = ".xcsh"
APP_NAME = "xcsh"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$HOME`` from ``env`` when set there, else the user's home directory."""
    home = _env(env).get("HOME")
    return Path(home) if home else Path.home()


def config_root(env: Mapping[str, str] | None = None) -> Path:
    """``~/<$PI_CONFIG_DIR or .xcsh>``."""
    values = _env(env)
    return home_dir(values) / (values.get("PI_CONFIG_DIR") or CONFIG_DIR_NAME)


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """The agent directory: ``$PI_CODING_AGENT_DIR``, else ``<config root>/agent``."""
    values = _env(env)
    override = values.get("PI_CODING_AGENT_DIR")
    if override:
        return Path(os.path.abspath(os.path.expanduser(override)))
    return config_root(values) / "agent"


def work_tmp_dir(env: Mapping[str, str] | None = None) -> Path:
    """The private folder xcsh works in when started in the home directory without a ``~/tmp``
    of the user's own: ``<config root>/tmp`` (``~/.xcsh/tmp``), or ``<agent dir>/tmp`` when
    ``$PI_CODING_AGENT_DIR`` moves the agent dir (its parent may be any folder, even a shared
    one; the agent dir is the one place the user gave xcsh)."""
    values = _env(env)
    if values.get("PI_CODING_AGENT_DIR"):
        return agent_dir(values) / "tmp"
    return config_root(values) / "tmp"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Base of the data directories (sessions, blobs): the agent dir, or ``$XDG_DATA_HOME/xcsh``.

    The XDG location is used only for the default profile, on Linux/macOS, when it exists.
    """
    values = _env(env)
    agent = agent_dir(values)
    is_default = agent == config_root(values) / "agent"
    xdg = values.get("XDG_DATA_HOME")
    if is_default and xdg and sys.platform in ("linux", "darwin"):
        candidate = Path(xdg) / APP_NAME
        if candidate.is_dir():
            return candidate
    return agent


def sessions_root(env: Mapping[str, str] | None = None) -> Path:
    """Directory holding one sub-directory of session files per project."""
    return data_dir(env) / "sessions"


def blobs_dir(env: Mapping[str, str] | None = None) -> Path:
    """Content-addressed store for externalised images (``<sha256 hex>`` files)."""
    return data_dir(env) / "blobs"


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def _relative_to(root: Path, path: Path) -> str | None:
    try:
        relative = path.relative_to(root)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts else ""


def _encode(text: str) -> str:
    return text.replace("/", "-").replace("\\", "-").replace(":", "-")


def encode_cwd(cwd: Path, *, home: Path | None = None, temp_root: Path | None = None) -> str:
    """The session directory name for ``cwd`` (resolved through symlinks first).

    Inside home: ``-`` + the home-relative path with ``/``, ``\\`` and ``:`` replaced by
    ``-`` (home itself → ``-``). Inside the temp dir: ``-tmp-`` + relative path (the temp
    root itself → ``-tmp``). Elsewhere: ``--`` + the absolute path without its leading
    separator, encoded the same way, + ``--``.
    """
    resolved = _resolve(cwd)
    home_root = _resolve(home if home is not None else Path.home())
    in_home = _relative_to(home_root, resolved)
    if in_home is not None:
        return "-" + _encode(in_home)
    if temp_root is None:
        # only for a cwd outside home: tempfile's import (~11 M instructions, with shutil and
        # random) and gettempdir()'s probe file are not paid by a start in a home project
        import tempfile

        temp_root = Path(tempfile.gettempdir())
    temp = _resolve(temp_root)
    in_temp = _relative_to(temp, resolved)
    if in_temp is not None:
        return "-tmp-" + _encode(in_temp) if in_temp else "-tmp"
    absolute = str(resolved)
    if absolute[:1] in ("/", "\\"):
        absolute = absolute[1:]
    return f"--{_encode(absolute)}--"


def session_dir_for(cwd: Path, sessions_root: Path, *, home: Path | None = None) -> Path:
    """``<sessions root>/<encoded cwd>`` (not created); see :func:`encode_cwd`."""
    return Path(sessions_root) / encode_cwd(cwd, home=home)


def project_sessions_dir(cwd: Path, env: Mapping[str, str] | None = None) -> Path:
    """``<sessions root>/<encoded cwd>`` — where sessions for ``cwd`` live by default."""
    values = _env(env)
    return sessions_root(values) / encode_cwd(cwd, home=home_dir(values))
