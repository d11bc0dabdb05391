"""The session's working directory when xcsh is started in the home directory.

The reference moves out of the home directory unless ``--allow-home`` is given. xcsh moves to
``~/tmp`` when it is the user's own folder, else to xcsh's private ``tmp`` folder
(:func:`xcsh.coding.paths.work_tmp_dir`, created ``0700``), never to a shared ``/tmp`` whose
files other users place. Sessions made in the home directory before that move (or with
``--allow-home``) stay reachable: ``--continue`` stays in the home directory when its most recent
session is newer than the moved folder's, and ``--resume``/``--session`` stays there for a
session whose header names the home directory (docs/decisions.md, "Started in the home
directory").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from xcsh.cli.args import CliArgs


def working_dir(args: CliArgs, note: Callable[[str], None]) -> Path:
    """The session's cwd for this start; ``note`` gets the stderr line about a move (or a stay)."""
    cwd = Path.cwd()
    if args.allow_home:
        return cwd
    try:
        home = Path.home()
        if cwd.resolve() != home.resolve():
            return cwd
    except (OSError, RuntimeError):
        return cwd
    from xcsh.coding.paths import work_tmp_dir
    from xcsh.coding.private_fs import foreign_directory, make_private_dirs

    own_tmp = home / "tmp"
    mine = own_tmp.is_dir() and foreign_directory(own_tmp) is None and own_tmp.resolve() != cwd.resolve()
    candidate = own_tmp if mine else work_tmp_dir()
    if _continues_in_home(args, home, candidate):
        note(
            f"started in the home directory; staying there to go on with a session made there ({_how(args)})"
        )
        return cwd
    if not mine:
        try:
            make_private_dirs(candidate)
        except OSError as exc:
            note(f"started in the home directory; cannot create {candidate} ({exc.strerror}): staying")
            return cwd
        if foreign_directory(candidate) is not None:
            return cwd
    note(f"started in the home directory; working in {candidate} (--allow-home to stay)")
    return candidate


def _how(args: CliArgs) -> str:
    return "--continue" if args.continue_ else "--resume"


def _continues_in_home(args: CliArgs, home: Path, moved: Path) -> bool:
    """Whether this start goes on with a session whose cwd is the home directory: the most recent
    one ``--continue`` finds (home's against the moved folder's), or the one ``--session`` names."""
    if args.no_session or args.fork or not (args.continue_ or args.session):
        return False
    from xcsh.coding.paths import session_dir_for, sessions_root
    from xcsh.coding.sessions.listing import (
        find_most_recent,
        resolve_session_arg,
        same_project,
        session_header_cwd,
    )

    root = sessions_root()
    custom = Path(args.session_dir).expanduser().resolve() if args.session_dir else None
    try:
        if args.session:
            path = resolve_session_arg(args.session, custom or session_dir_for(moved, root), root)
            header_cwd = session_header_cwd(path)
            return header_cwd is not None and same_project(header_cwd, home)
        if custom is not None:
            recent = find_most_recent(custom)
            header_cwd = session_header_cwd(recent) if recent is not None else None
            return header_cwd is not None and same_project(header_cwd, home)
        at_home = find_most_recent(session_dir_for(home, root), home)
        if at_home is None:
            return False
        there = find_most_recent(session_dir_for(moved, root), moved)
        return there is None or at_home.stat().st_mtime >= there.stat().st_mtime
    except (OSError, ValueError, LookupError):
        return False  # the session start reports what is wrong with the argument
