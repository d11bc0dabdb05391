"""A file written in place grows on a file system without fallocate (NFSv3, ext2/ext3, older ZFS):
glibc then emulates the reservation by reading and writing a byte of every block, so the file
must be open for reading too, and the reservation still meets a full disk before the file
changes (review 6 W2)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding.tools.as_user import code_path, nobody_python

# A file with a second hard link (so it is written in place) grows from 12 000 to 23 000 bytes;
# prints what happened. Arguments: the folder, then "write-only" (the file's mode is 0200) and
# "fill" (the file system is full first).
GROW = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from xcsh.coding.tools import ToolError
    from xcsh.coding.tools.file_write import write_file

    work = Path(sys.argv[1])
    old, new = b"old content\\n" * 1000, b"new and longer content\\n" * 1000
    (work / "notes.txt").write_bytes(old)
    os.link(work / "notes.txt", work / "notes-link.txt")
    if "write-only" in sys.argv:
        os.chmod(work / "notes.txt", 0o200)
    if "fill" in sys.argv:  # fill the file system to its last block
        with open(work / "filler", "wb") as filler:
            try:
                while True:
                    filler.write(b"x" * 4096)
                    filler.flush()
            except OSError:
                pass
    try:
        write_file(work / "notes.txt", new, "notes.txt")
        outcome = "written"
    except ToolError as exc:
        outcome = str(exc)
    os.chmod(work / "notes.txt", 0o600)
    link = (work / "notes-link.txt").read_bytes()
    print(json.dumps({"outcome": outcome, "new": link == new, "old": link == old}))
    """
)

BOUND_CHECK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xcsh.coding.tools import ToolError
    from xcsh.coding.tools.file_write import write_file

    mnt, work = Path(sys.argv[1]), Path(sys.argv[2])
    new = b"bound, and longer than it was\\n" * 500
    try:
        write_file(work / "config.txt", new, "config.txt")
        print("written")
    except ToolError as exc:
        print(exc)
    print((mnt / "config.txt").read_bytes() == new)
    """
)


@pytest.fixture
def ext2(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A fresh 2 MiB ext2 image and a mount point anyone may reach, or skip where a loop mount
    in a private mount namespace is not permitted."""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "mount", "mkfs.ext2")):
        pytest.skip("an ext2 loop mount needs root (CAP_SYS_ADMIN), unshare, mount and mkfs.ext2")
    image = tmp_path / "ext2.img"
    with image.open("wb") as f:
        f.truncate(2 * 1024 * 1024)
    made = subprocess.run(["mkfs.ext2", "-q", "-F", str(image)], capture_output=True, timeout=60, check=False)
    if made.returncode != 0:
        pytest.skip(f"mkfs.ext2 failed: {made.stderr.decode(errors='replace')}")
    base = Path(tempfile.mkdtemp(prefix="xcsh-ext2-"))  # tmp_path is closed to other users
    try:
        base.chmod(0o755)
        mnt = base / "mnt"
        mnt.mkdir()
        probe = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "mount", "-o", "loop", str(image), str(mnt)],
            capture_output=True,
            timeout=60,
            check=False,
        )
        if probe.returncode != 0:
            reason = probe.stderr.decode(errors="replace")
            pytest.skip(f"no loop mount in a private mount namespace here: {reason}")
        yield image, mnt
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _on_ext2(
    ext2: tuple[Path, Path], script: str, *arguments: str, setup: str = "", as_nobody: bool = False
) -> str:
    """Run ``script`` with the mount point and ``arguments`` while the ext2 image is mounted in a
    mount namespace of its own (the mount ends with it), after the shell commands ``setup``
    (``$mnt`` names the mount point), as root or as ``nobody``; its standard output."""
    image, mnt = ext2
    python = [sys.executable]
    env = dict(os.environ)
    if as_nobody:
        python = nobody_python("running as nobody needs setpriv and /usr/bin/python3")
        env["PYTHONPATH"] = code_path()
    shell = (
        'image=$1 mnt=$2 script=$3; shift 3; mount -o loop "$image" "$mnt" && '
        f'{setup} exec "$@" -P -c "$script" "$mnt" {" ".join(map(shlex.quote, arguments))}'
    )
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", shell, "sh"]
    done = subprocess.run(
        [*command, str(image), str(mnt), script, *python],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_hard_linked_file_grows_on_a_file_system_without_fallocate(ext2: tuple[Path, Path]) -> None:
    out = json.loads(_on_ext2(ext2, GROW).splitlines()[-1])
    assert out == {"outcome": "written", "new": True, "old": False}


def test_a_write_only_hard_linked_file_grows_on_a_file_system_without_fallocate(
    ext2: tuple[Path, Path],
) -> None:
    """A file its writer may not read cannot be reserved by glibc's emulation (EBADF): the free
    space is checked instead."""
    out = json.loads(_on_ext2(ext2, GROW, "write-only", setup='chmod 1777 "$mnt" &&', as_nobody=True))
    assert out == {"outcome": "written", "new": True, "old": False}


def test_a_write_only_hard_linked_file_that_would_not_fit_stays_whole_on_a_file_system_without_fallocate(
    ext2: tuple[Path, Path],
) -> None:
    setup = 'chmod 1777 "$mnt" &&'
    out = json.loads(_on_ext2(ext2, GROW, "write-only", "fill", setup=setup, as_nobody=True))
    refused = "Cannot write notes.txt: no space left on the device. No file was changed."
    assert out == {"outcome": refused, "new": False, "old": True}


def test_a_hard_linked_file_that_would_not_fit_stays_whole_on_a_file_system_without_fallocate(
    ext2: tuple[Path, Path],
) -> None:
    """The emulated reservation meets the full disk before any byte of the file changes."""
    out = json.loads(_on_ext2(ext2, GROW, "fill"))
    refused = "Cannot write notes.txt: no space left on the device. No file was changed."
    assert out == {"outcome": refused, "new": False, "old": True}


def test_a_bind_mounted_file_grows_on_a_file_system_without_fallocate(
    tmp_path: Path, ext2: tuple[Path, Path]
) -> None:
    """Renaming over a bind-mounted file fails (EBUSY), so it is written in place from its staged
    copy; the file bound is on the ext2 file system, the mount point on another."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.txt").write_text("the file under the mount\n")
    bound = 'head -c 9000 /dev/zero | tr "\\0" x > "$mnt/config.txt"'  # 9 000 bytes grow to 15 000
    bind = f'{bound} && mount --bind "$mnt/config.txt" "{work}/config.txt" &&'
    shell_out = _on_ext2(ext2, BOUND_CHECK, str(work), setup=bind)
    assert shell_out.splitlines() == ["written", "True"]
    assert (work / "config.txt").read_text() == "the file under the mount\n"


def test_a_hard_linked_file_grows_where_fallocate_is_refused(tmp_path: Path) -> None:
    """The same without root: strace makes every fallocate answer EOPNOTSUPP, as NFSv3 does."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed")
    probe = subprocess.run(
        [strace, "-qq", "-o", "/dev/null", "true"], capture_output=True, timeout=60, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode(errors='replace')}")
    inject = [strace, "-f", "-qq", "-o", "/dev/null", "-e", "inject=fallocate:error=EOPNOTSUPP"]
    done = subprocess.run(
        [*inject, sys.executable, "-c", GROW, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"outcome": "written", "new": True, "old": False}
