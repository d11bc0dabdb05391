"""The ``xcsh`` command and ``python -m xcsh``: pause the collector for RPC mode, then run the CLI.

Importing :mod:`xcsh.cli.main` itself (flags, ``msgspec``, ``typing``, ``logging`` …) already
triggers ~20 collections; an RPC process pauses the collector before that
(:mod:`xcsh.modes.rpc.gc_pause`), judging by ``--mode rpc`` in the arguments. The CLI parses
the flags properly afterwards and turns collection back on if this was not RPC mode after all.
"""

from __future__ import annotations

import io
import os
import sys
from itertools import pairwise


def wants_rpc(argv: list[str]) -> bool:
    """Whether ``argv`` asks for RPC mode (``--mode rpc``; the parser takes no ``--mode=rpc``), at a glance.

    A subcommand (``conformance``, ``fake-llm`` …: a first argument that is not a flag) is
    never taken for RPC mode.
    """
    if not argv or not argv[0].startswith("-"):
        return False
    return any(arg == "--mode" and value == "rpc" for arg, value in pairwise(argv))


def drop_working_dir_from_path() -> None:
    """Remove every ``sys.path`` entry that is the working directory (``''`` included).

    ``python -m xcsh`` puts the working directory first on ``sys.path``, and an empty entry in
    ``PYTHONPATH`` (``src:``) does too: a repository's ``msgspec.py`` or ``json.py`` would then
    be imported in place of the real module, before any trust check. xcsh never imports from
    the project directory (project extensions load by path), so those entries go before any
    module beyond this one and :mod:`xcsh.version` is imported. The shipped client spawns
    ``python -P -m xcsh`` as well (docs/security.md).
    """
    cwd = os.getcwd()
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != cwd]


def reopen_closed_stdio() -> None:
    """Open ``/dev/null`` on whichever of fds 0–2 is closed, and give Python a stream for it.

    A daemon or supervisor may start xcsh with a closed stdin, stdout or stderr (``2>&-``).
    Python then sets ``sys.stderr`` (…) to ``None``, which every write, flush or ``isatty``
    trips over, and the next file xcsh opens would take that number (a session file as fd 2
    would receive log lines). Children inherit the ``/dev/null`` descriptors.
    """
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        os.set_inheritable(fd, True)
        if getattr(sys, name) is None:
            raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
            buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
            errors = "backslashreplace" if fd == 2 else "strict"
            stream = io.TextIOWrapper(buffered, encoding="utf-8", errors=errors, line_buffering=fd == 2)
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)


def main() -> int:
    reopen_closed_stdio()
    drop_working_dir_from_path()
    if wants_rpc(sys.argv[1:]):
        from xcsh.modes.rpc.gc_pause import pause

        pause()
    try:
        from xcsh.cli.main import main as run

        return run()
    except KeyboardInterrupt:
        # SIGINT before the mode installed its stop handlers (start-up): the stop status, quietly;
        # nothing was started that must be ended (docs/cli.md)
        return 130
