"""Who may read a written file, and who owns it afterwards: the staged copy of a replaced file
has the file's owner and mode before its first byte."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
