"""The process-group watchdog: what this process started dies with it, even when it is SIGKILLed.

SIGTERM, SIGHUP, SIGINT and stdin EOF are handled in-process (``xcsh.modes.signals``), but
SIGKILL, the OOM killer or a crash cannot be caught. So the first time a child process group
is started (:func:`guard`), one small ``bash`` process is started beside us:

- in its own session, so ``kill -9 -<our process group>`` does not reach it;
- its stdin is the read end of a pipe whose write end only this process holds (``os.pipe``
  is close-on-exec, so no child inherits it; a Python-level ``fork`` closes it in the child);
- stdout and stderr are ``/dev/null`` and its cwd is ``/``: nothing of it reaches the
  protocol, and it keeps no directory busy;
- its command line ends in ``xcsh-watchdog <our pid>``, so ``ps`` shows whom it serves.

We write ``+PGID`` when a group starts and ``-PGID`` when it is gone. When the pipe reaches
EOF — this process ended, by any means — the watchdog sends SIGTERM to every group it
holds and to the sessions they lead (``pkill -s``, so a ``timeout`` that moved to a group of
its own is reached too), SIGKILL to what is left after :data:`GRACE_S`, and exits. Until
then it only wakes to read a line; it has no timer and holds nothing else.

A group whose leader ended may still hold processes (``server &`` in a command that
finished): :func:`release` keeps it registered until it is empty. Every guarded group —
released or not, so also one whose owner never got to release it — is checked every
:data:`PRUNE_INTERVAL_S` by a daemon thread (:func:`prune`) and forgotten once it is empty.
The thread runs while groups are guarded and :data:`IDLE_PRUNES` checks longer. So a group
id handed back to the system is forgotten within that interval, and the watchdog never
signals a group that a later, unrelated process may have taken the id of. A group whose leader is a zombie nobody has
reaped yet counts as not empty: the zombie keeps its id from being reused, so it stays ours.

Lives in ``ai`` (the lowest layer) because the local model runtime (``ai/local``) guards its
process too, beside the shells and the python kernel of ``coding``. Thread-safe.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

MARK = "xcsh-watchdog"
"""``$0`` of the watchdog's shell: its command line is ``bash -c <script> xcsh-watchdog <pid>``."""
GRACE_S = 0.5
"""Time between the watchdog's SIGTERM and SIGKILL (the script polls in five 0.1 s steps)."""
PRUNE_INTERVAL_S = 2.0
IDLE_PRUNES = 15
"""The pruning thread ends after this many checks in a row found no group guarded (30 s): an
agent's next command usually comes sooner, and starting the thread is most of a first
``guard``'s cost (≈0.25 ms of CPU)."""

# $1 (our pid) is only for people reading `ps`. A line is "+N" or "-N" with N a decimal
# process-group id > 1 (anything else is ignored: the value is used as an array index). Every
# guarded group leads its own session too, so at EOF `pkill -s` (procps, BSD) also reaches
# processes that moved to another group of that session (`timeout` does: setpgid).
# Only what bash 3.2 (macOS) has too: indexed arrays, `${!g[@]}`, plain `read` (no `read -t`).
_SCRIPT = r"""trap '' INT HUP
g=()
while read -r line; do
  p=${line#[+-]}
  case $p in ''|0*|1|*[!0-9]*) continue ;; esac
  case $line in +*) g[p]=1 ;; -*) unset "g[p]" ;; esac
done
((${#g[@]})) || exit 0
ids=$(IFS=,; echo "${!g[*]}")
signal_all() {
  for p in "${!g[@]}"; do kill -"$1" -- "-$p" 2>/dev/null; done
  command -v pkill >/dev/null && pkill -"$1" -s "$ids" 2>/dev/null
}
signal_all TERM
for _ in 1 2 3 4 5; do
  for p in "${!g[@]}"; do kill -0 -- "-$p" 2>/dev/null || unset "g[p]"; done
  ((${#g[@]})) || { command -v pgrep >/dev/null && pgrep -s "$ids" >/dev/null; } || exit 0
  sleep 0.1
done
signal_all KILL
"""

_lock = threading.Lock()
_process: subprocess.Popen[bytes] | None = None
_fd: int | None = None  # the pipe's write end
_changed = threading.Condition(_lock)  # notified when a group is guarded or forgotten
_guarded: set[int] = set()  # groups the watchdog holds
_pruner: threading.Thread | None = None
_fork_hook_installed = False


def command(owner_pid: int) -> list[str]:
    """The watchdog's argv for the process ``owner_pid`` (its stdin must be the owner's pipe)."""
    import shutil

    return [shutil.which("bash") or "/bin/bash", "-c", _SCRIPT, MARK, str(owner_pid)]


def guard(pgid: int) -> None:
    """Have process group ``pgid`` ended if this process dies; starts the watchdog the first time.

    ``pgid`` must be a group we started, leading its own session (a child started with
    ``start_new_session=True``: its pid). Our own group and ids ≤ 1 raise ``ValueError``;
    nothing else is raised: if the watchdog cannot be started (no free file descriptor, no
    process slot), a warning is logged and the child runs unguarded — the group is still
    registered, and handed to a watchdog started by a later ``guard``.
    """
    if pgid <= 1 or pgid == os.getpgrp():
        raise ValueError(f"not a child process group: {pgid}")
    with _lock:
        _guarded.add(pgid)
        _send(f"+{pgid}\n", start=True)
        _start_pruner()
        _changed.notify_all()


def release(pgid: int) -> None:
    """The group's leader ended or was stopped: unregister it now if it is empty, else once it is.

    Optional for correctness (an empty group is forgotten within :data:`PRUNE_INTERVAL_S`
    anyway) but it forgets the group at once.
    """
    with _lock:
        if pgid in _guarded and not _group_alive(pgid):
            _forget(pgid)


def prune() -> frozenset[int]:
    """Forget every guarded group that is empty now; the groups forgotten.

    The pruning thread calls this every :data:`PRUNE_INTERVAL_S` while groups are guarded.
    """
    with _lock:
        return _prune_locked()


def guarded() -> frozenset[int]:
    """The process groups the watchdog holds now."""
    with _lock:
        return frozenset(_guarded)


def wait_until(predicate: Callable[[frozenset[int]], bool], timeout_s: float) -> bool:
    """Block until ``predicate(guarded groups)`` holds, at most ``timeout_s``; whether it does."""
    with _changed:
        return _changed.wait_for(lambda: predicate(frozenset(_guarded)), timeout=timeout_s)


def wait_unguarded(pgid: int, timeout_s: float) -> bool:
    """Block until group ``pgid`` is no longer guarded, at most ``timeout_s``; whether it is not."""
    return wait_until(lambda groups: pgid not in groups, timeout_s)


def watchdog_pid() -> int | None:
    """The running watchdog's pid, or None before the first :func:`guard`."""
    process = _process
    return process.pid if process is not None and process.poll() is None else None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the id now names someone else's group: not ours any more
        return False
    return True


def _forget(pgid: int) -> None:
    _guarded.discard(pgid)
    _send(f"-{pgid}\n", start=False)
    _changed.notify_all()


def _prune_locked() -> frozenset[int]:
    empty = frozenset(g for g in _guarded if not _group_alive(g))
    for pgid in empty:
        _forget(pgid)
    return empty


def _send(line: str, *, start: bool) -> None:
    """Write ``line`` to the watchdog (lock held); restart it once if it died."""
    for _attempt in (1, 2):
        if _fd is None:
            if not start:
                return
            if not _start():
                return
            if line.startswith("+"):
                return  # _start sent every guarded group, this one included
        assert _fd is not None
        try:
            os.write(_fd, line.encode())
            return
        except BlockingIOError:
            logger.warning("the process watchdog is not reading; process group not (un)registered")
            return
        except OSError:  # it died (EPIPE): start a new one with every group
            logger.warning("the process watchdog exited; starting a new one")
            _stop()
            start = True


def _start() -> bool:
    """Start the watchdog and send it every guarded group (lock held); False if it cannot start."""
    global _process, _fd, _fork_hook_installed
    read_end = write_end = -1
    try:
        read_end, write_end = os.pipe()  # close-on-exec; Popen makes the read end the child's fd 0
        process = subprocess.Popen(
            command(os.getpid()),
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env={"PATH": os.environ.get("PATH") or os.defpath, "LC_ALL": "C"},
            start_new_session=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:  # EMFILE, EAGAIN (no process slot) …
        if write_end >= 0:
            os.close(write_end)
        logger.warning("could not start the process watchdog (%s): children may outlive a SIGKILL", exc)
        return False
    finally:
        if read_end >= 0:
            os.close(read_end)
    os.set_blocking(write_end, False)
    _process, _fd = process, write_end
    if not _fork_hook_installed:
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _fork_hook_installed = True
    if _guarded:
        try:
            os.write(write_end, "".join(f"+{g}\n" for g in sorted(_guarded)).encode())
        except OSError:
            logger.warning("the new process watchdog did not take the process groups")
    return True


def _stop() -> None:
    """Drop the pipe and reap the old watchdog if it is gone (lock held)."""
    global _process, _fd
    if _fd is not None:
        os.close(_fd)
    if _process is not None:
        _process.poll()
    _process, _fd = None, None


def _after_fork_in_child() -> None:
    """A forked child (multiprocessing, ``os.fork``) is not us: it must not keep the pipe open."""
    global _lock, _changed, _process, _fd, _pruner
    _lock = threading.Lock()  # another thread may have held it at the fork
    _changed = threading.Condition(_lock)
    if _fd is not None:
        os.close(_fd)
    _process, _fd, _pruner = None, None, None
    _guarded.clear()


def _start_pruner() -> None:
    """Start the pruning thread unless it runs (lock held)."""
    global _pruner
    if _pruner is None:
        pruner = threading.Thread(target=_prune_periodically, name="xcsh-watchdog-prune", daemon=True)
        try:
            pruner.start()
        except RuntimeError as exc:  # no thread can be started now; the next guard tries again
            logger.warning("could not start the watchdog's pruning thread (%s)", exc)
            return
        _pruner = pruner


def _prune_periodically() -> None:
    """Every :data:`PRUNE_INTERVAL_S`, forget the guarded groups that are empty.

    Ends once :data:`IDLE_PRUNES` checks in a row found none guarded.
    """
    global _pruner
    idle = 0
    while True:
        time.sleep(PRUNE_INTERVAL_S)
        with _lock:
            _prune_locked()
            idle = 0 if _guarded else idle + 1
            if idle >= IDLE_PRUNES:
                _pruner = None
                return
