"""Where the shells' full output goes when it is too long to return: one private directory per
process (``xcsh-bash-*`` in the temp directory).

The directory is made on the first spill. It stays while anyone holds it
(:func:`hold_spill_files`: a top-level session holds it from its start to its shutdown, so a
path named in a bash notice can be read for as long as the session lives) and is removed with
every file in it when the last holder lets go, or at a normal interpreter exit.
Thread-safe; imports nothing heavy (it is installed at session start).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

_lock = threading.Lock()
_directory: str | None = None
_holders = 0
_atexit_registered = False


def new_spill_file() -> tuple[int, str]:
    """A new spill file ``(fd, path)`` (mode 0600, in a 0700 directory). Raises ``OSError``."""
    global _directory, _atexit_registered
    import tempfile

    with _lock:
        if _directory is None or not os.path.isdir(_directory):
            _directory = tempfile.mkdtemp(prefix="xcsh-bash-")
            if not _atexit_registered:
                import atexit

                atexit.register(remove_spill_files)
                _atexit_registered = True
        return tempfile.mkstemp(prefix="output-", suffix=".log", dir=_directory)


def remove_spill_files() -> None:
    """Remove the spill directory and every file in it (a new spill makes a new one)."""
    global _directory
    with _lock:
        directory, _directory = _directory, None
    if directory is not None:
        import shutil

        shutil.rmtree(directory, ignore_errors=True)


def hold_spill_files() -> Callable[[], None]:
    """Keep the spill files while the caller lives; the returned function lets go (once; later
    calls do nothing). The last holder to let go removes them."""
    global _holders
    with _lock:
        _holders += 1
    released = False

    def release() -> None:
        global _holders
        nonlocal released
        with _lock:
            if released:
                return
            released = True
            _holders -= 1
            last = _holders == 0
        if last:
            remove_spill_files()

    return release
