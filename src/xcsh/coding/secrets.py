"""Keeping the credentials xcsh reads out of tool processes and out of frames.

* **Tool processes** (the ``bash`` tool, user ``bash``, anything else a tool launches)
  get :func:`tool_environment`: the process environment without the provider
  credentials xcsh itself reads — every built-in provider's key variables
  (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, …) and the variables ``models.yml``
  names as an ``apiKey``. The user setting ``tools.passProviderKeys: true`` passes
  them through (a project's ``.xcsh/config.yml`` cannot turn it on).
* **Frames** never carry the values of ``models.yml`` ``headers`` (they often hold
  tokens): :func:`public_model` is the copy of a model that hosts are shown.
* **Our own process** (Linux): :func:`forbid_dumps` makes it non-dumpable before the first
  tool process starts (and in the RPC mode's first quiet moment), so a tool's command cannot
  read the keys from ``/proc/<xcsh pid>/environ``; :func:`hide_from_cmdline` overwrites an
  ``--api-key`` in the process's command line (``/proc/<pid>/cmdline`` is readable by every user).

The withheld names are process-wide (one process serves one session; the
environment is process-wide too). :func:`configure` is called at start-up.
"""

from __future__ import annotations

import copy
import functools
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from xcsh.ai.catalog import builtin_providers

if TYPE_CHECKING:
    from xcsh.ai.types import Model

REDACTED = "[redacted]"
PASS_SETTING = "tools.passProviderKeys"

_lock = threading.Lock()
_extra_names: set[str] = set()
_pass_through = False
_dumps_forbidden = False
DUMPABLE_ENV = "XCSH_DUMPABLE"
_PR_SET_DUMPABLE = 4


def builtin_key_names() -> frozenset[str]:
    """Every environment variable a built-in provider reads its key from."""
    return frozenset(name for info in builtin_providers() for name in info.env_vars)


def configure(*, names: Iterable[str] = (), pass_through: bool = False) -> None:
    """Withhold ``names`` too (``models.yml`` key variables), or pass every credential through."""
    global _pass_through
    with _lock:
        _extra_names.update(names)
        _pass_through = pass_through


def withheld_names() -> frozenset[str]:
    """The variable names tool processes do not get (empty when passing through)."""
    with _lock:
        if _pass_through:
            return frozenset()
        return builtin_key_names() | _extra_names


def forbid_dumps() -> None:
    """Make this process non-dumpable (Linux ``prctl(PR_SET_DUMPABLE, 0)``), once; elsewhere a no-op.

    A non-dumpable process's ``/proc/<pid>/environ``, ``mem``, ``maps`` and ``fd`` can be
    read only by processes with ``CAP_SYS_PTRACE`` (root), not by the user's other processes —
    the tools' commands included — and it writes no core dump (which would hold the keys).
    ``cmdline`` stays readable by everyone (see :func:`hide_from_cmdline`).
    Children are not affected: ``execve`` makes a process dumpable again. Profilers that attach
    to us (``py-spy``) need ``CAP_SYS_PTRACE`` too; ``XCSH_DUMPABLE=1`` in the environment
    leaves the process dumpable for them (docs/security.md). Failures are ignored.
    """
    global _dumps_forbidden
    if _dumps_forbidden:
        return
    _dumps_forbidden = True
    if not sys.platform.startswith("linux") or os.environ.get(DUMPABLE_ENV) == "1":
        return
    try:
        import ctypes  # ~2 ms: never on the start-up path (first tool process, or RPC warm-up)

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


def hide_from_cmdline(secret: str) -> bool:
    """Overwrite ``secret`` with ``*`` in this process's original command line (Linux), once
    parsed: ``/proc/<pid>/cmdline`` — what ``ps`` shows every user of the machine, whatever
    the dumpable flag — then no longer holds an ``--api-key``. ``sys.argv`` is Python's own
    copy and keeps the value. Returns whether the value was found and overwritten.

    The argument strings lie between the ``arg_start`` and ``arg_end`` addresses the kernel
    reports in ``/proc/self/stat``; the region is checked against ``/proc/self/cmdline``
    before anything is written. Until this runs (the first ~0.1 s) the key is visible, so an
    environment variable or ``models.yml`` is the better place for it (docs/security.md).
    """
    if not secret or not sys.platform.startswith("linux"):
        return False
    try:
        with open("/proc/self/stat", "rb") as stat_file:
            stat = stat_file.read()
        with open("/proc/self/cmdline", "rb") as cmdline_file:
            cmdline = cmdline_file.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[45]), int(fields[46])  # fields 48 and 49 of proc(5)
        import ctypes  # only with --api-key

        region = (ctypes.c_char * (end - start)).from_address(start)
        if end <= start or region.raw != cmdline[: end - start]:
            return False
        raw, needle = region.raw, secret.encode()
        found = False
        at = raw.find(needle)
        while at >= 0:
            ctypes.memset(start + at, ord("*"), len(needle))
            found = True
            at = raw.find(needle, at + len(needle))
        return found
    except (OSError, ValueError, IndexError, ImportError):
        return False


def tool_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) without the withheld credentials.

    Every tool process starts with this environment, so the first call also makes this process
    non-dumpable (:func:`forbid_dumps`) before any tool's command can look at it.
    """
    forbid_dumps()
    source = os.environ if base is None else base
    hidden = withheld_names()
    return {name: value for name, value in source.items() if name not in hidden}


def public_model(model: Model) -> Model:
    """A copy of ``model`` for frames and listings: header values, a password in ``baseUrl``
    (``https://user:secret@host``) and its key-like query values (``?api-key=…``) replaced by
    ``[redacted]``."""
    headers = model.get("headers")
    url = model.get("baseUrl", "")
    url_shown = _redact_url(url)
    if not headers and url_shown == url:
        return model
    shown = copy.copy(model)
    if headers:
        shown["headers"] = dict.fromkeys(headers, REDACTED)
    shown["baseUrl"] = url_shown
    return shown


@functools.lru_cache(maxsize=64)
def _redact_url(url: str) -> str:
    if "@" not in url and "?" not in url:
        # no userinfo and no query, so nothing to redact: the error classifier (its patterns
        # compile on import) stays off the path to the first get_state answer
        return url
    from xcsh.ai.url_secrets import redact_url  # re only, not the error classifier

    return redact_url(url)
