"""Who may read a written file, and who owns it afterwards: the staged copy of a replaced file
has the file's owner and mode before its first byte; a file that replacing would change in more
than its content (owner, group, other names, ACL) is written in place."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding.tools.as_user import run_unprivileged
from xcsh.coding.tools import ToolOptions, create_coding_tools
from xcsh.coding.tools.file_write import write_file

NOBODY = 65534

STAGE_AND_DIE = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    from xcsh.coding.tools.file_write import write_file

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # the first write past the limit ends the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))  # one byte lands, the second write kills
    write_file(Path(sys.argv[1]), b"the new secret\\n", "secret.txt")
    """
)


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_the_staged_copy_has_the_file_s_owner_and_mode_when_its_first_byte_is_written(
    tmp_path: Path, mode: int
) -> None:
    """The writer is stopped dead (SIGXFSZ) right after the first content byte reaches the staged
    copy: that copy must already be the file's (a private file's new content is never readable
    by others, not even while it is written). As root the file belongs to ``nobody``."""
    target = tmp_path / "secret.txt"
    target.write_text("the old secret\n")
    target.chmod(mode)
    if os.geteuid() == 0:
        os.chown(target, NOBODY, NOBODY)
    before = target.stat()
    done = subprocess.run(
        [sys.executable, "-c", STAGE_AND_DIE, str(target)], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    staged = [p for p in tmp_path.iterdir() if p != target]
    assert [p.name.endswith(".xcsh-tmp") for p in staged] == [True]
    info = staged[0].stat()
    assert staged[0].read_bytes() == b"t"  # the first byte of the new content
    assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (
        mode,
        before.st_uid,
        before.st_gid,
    )
    assert target.read_text() == "the old secret\n"


DEVS = 4242  # a group the editing user (nobody, as root runs it) belongs to

WRITE_AS_MEMBER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xcsh.coding.tools.file_write import write_file

    for name in sys.argv[2:]:
        write_file(Path(sys.argv[1]) / name, b"changed by a member of the group\\n", name)
    """
)


@pytest.fixture
def group_folder() -> Iterator[Path]:
    """A folder of group ``DEVS`` everyone may write to, outside pytest's private base folder."""
    if os.geteuid() != 0:
        pytest.skip("another user's file in a group folder can only be made by root")
    folder = Path(tempfile.mkdtemp(prefix="xcsh-group-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("setgid", [True, False], ids=["setgid-folder", "plain-folder"])
def test_another_user_s_file_in_a_group_folder_keeps_its_owner_group_and_inode(
    group_folder: Path, setgid: bool
) -> None:
    """A user of the group edits a colleague's 0664 file: nobody may give a new file away, so the
    file is written in place. The editor's own file (with a group of theirs) is still replaced
    whole, with its owner and group."""
    os.chown(group_folder, 0, DEVS)
    group_folder.chmod(0o2775 if setgid else 0o777)
    theirs, mine = group_folder / "theirs.txt", group_folder / "mine.txt"
    for path, owner in ((theirs, 0), (mine, NOBODY)):
        path.write_text("the old content, longer than the new one\n")
        os.chown(path, owner, DEVS)
        path.chmod(0o664)
    before = {path: path.stat() for path in (theirs, mine)}
    done = run_unprivileged(WRITE_AS_MEMBER, str(group_folder), "theirs.txt", "mine.txt", groups=(DEVS,))
    assert done.returncode == 0, done.stderr
    for path in (theirs, mine):
        after = path.stat()
        assert path.read_text() == "changed by a member of the group\n"
        assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (
            before[path].st_uid,
            DEVS,
            0o664,
        ), path.name
    assert theirs.stat().st_ino == before[theirs].st_ino  # written in place
    assert mine.stat().st_ino != before[mine].st_ino  # replaced whole
    assert sorted(p.name for p in group_folder.iterdir()) == ["mine.txt", "theirs.txt"]


async def test_a_file_with_several_hard_links_is_written_in_place_so_every_name_sees_it(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("one\ntwo\nthree\n")
    os.link(first, second)
    inode = first.stat().st_ino
    tools = create_coding_tools(tmp_path, ["edit"], ToolOptions(edit_mode="replace"))
    edit = {"path": "second.txt", "old_text": "two\nthree\n", "new_text": "2\n"}
    result = await tools[0].execute("c1", {"edits": [edit]}, None, lambda _: None)
    assert not result.get("isError"), result
    assert first.read_text() == second.read_text() == "one\n2\n"
    assert first.stat().st_ino == second.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.txt", "second.txt"]


def _acl(*named_users: int) -> bytes:
    """A POSIX access ACL as the kernel stores it (``system.posix_acl_access``): rw for the owner,
    the named users and the mask, r for the group and others."""
    undefined = 0xFFFFFFFF
    entries = [(0x01, 6, undefined), *((0x02, 6, uid) for uid in named_users)]
    entries += [(0x04, 4, undefined), (0x10, 6, undefined), (0x20, 4, undefined)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


def test_a_file_with_an_access_control_list_keeps_it(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    target.write_text("old\n")
    acl = _acl(DEVS)
    try:
        os.setxattr(target, "system.posix_acl_access", acl)
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no access control lists here: {exc}")
    inode = target.stat().st_ino
    write_file(target, b"new\n", "shared.txt")
    assert target.read_bytes() == b"new\n" and target.stat().st_ino == inode
    assert os.getxattr(target, "system.posix_acl_access") == acl


IN_PLACE_PAST_THE_LIMIT = textwrap.dedent(
    """
    import os, resource, sys
    from pathlib import Path
    from xcsh.coding.tools import ToolError
    from xcsh.coding.tools.file_write import FileBatch

    folder = Path(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (60000, 60000))  # files past 60 000 bytes: EFBIG
    try:
        with FileBatch() as batch:
            batch.write(folder / "plain.txt", b"changed\\n", "plain.txt")
            batch.write(folder / "small.txt", b"small, changed\\n", "small.txt")
            batch.write(folder / "big.txt", b"y" * 100_000, "big.txt")
            batch.commit()
    except ToolError as exc:
        print(exc)
    """
)


def test_files_written_in_place_get_their_room_before_any_file_of_the_call_changes(tmp_path: Path) -> None:
    """``big.txt`` (two names, so written in place) would pass the file size limit: the call
    fails before any byte changes, and the linked files keep their length."""
    for name in ("plain.txt", "small.txt", "big.txt"):
        (tmp_path / name).write_text(f"{name} as it was\n")
    os.link(tmp_path / "small.txt", tmp_path / "small-link.txt")
    os.link(tmp_path / "big.txt", tmp_path / "big-link.txt")
    done = subprocess.run(
        [sys.executable, "-c", IN_PLACE_PAST_THE_LIMIT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == (
        "Cannot write big.txt: the file would exceed the size limit for files. No file was changed."
    )
    for name in ("plain.txt", "small.txt", "big.txt"):
        assert (tmp_path / name).read_text() == f"{name} as it was\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "big-link.txt",
        "big.txt",
        "plain.txt",
        "small-link.txt",
        "small.txt",
    ]


WRITE_BOUND = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xcsh.coding.tools import ToolError
    from xcsh.coding.tools.file_write import FileBatch

    work = Path(sys.argv[1])
    try:
        with FileBatch() as batch:
            batch.write(work / "plain.txt", b"plain, changed\\n", "plain.txt")
            batch.write(work / "config.txt", b"bound, changed\\n", "config.txt")
            batch.commit()
        print("written")
    except ToolError as exc:
        print(exc)
    """
)


def test_a_bind_mounted_file_that_cannot_be_renamed_over_is_written_in_place(tmp_path: Path) -> None:
    """Docker's ``-v ./config.txt:/work/config.txt``: renaming over a mount point fails with
    EBUSY. The write runs in a mount namespace of its own, so the bind mount ends with it."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("a bind mount needs root (CAP_SYS_ADMIN), unshare and mount")
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, timeout=60
    )
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode(errors='replace')}")
    host, work = tmp_path / "host", tmp_path / "work"
    host.mkdir()
    work.mkdir()
    (host / "config.txt").write_text("bound, as it was\n")
    (work / "config.txt").write_text("the file under the mount\n")
    (work / "plain.txt").write_text("plain, as it was\n")
    script = 'mount --bind "$1" "$2/config.txt" && exec "$3" -c "$4" "$2"'
    arguments = [str(host / "config.txt"), str(work), sys.executable, WRITE_BOUND]
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "written"), done.stderr
    assert (host / "config.txt").read_text() == "bound, changed\n"
    assert (work / "plain.txt").read_text() == "plain, changed\n"
    assert (work / "config.txt").read_text() == "the file under the mount\n"
    assert sorted(p.name for p in work.iterdir()) == ["config.txt", "plain.txt"]
