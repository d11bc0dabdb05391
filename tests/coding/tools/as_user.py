"""Run a small piece of Python as an unprivileged user: what root may always do (read a closed
folder, write a read-only file) is only visible to someone else. Import as ``coding.tools.as_user``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest


def run_unprivileged(code: str, *args: str, groups: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (with ``args`` in ``sys.argv[1:]``) under this project's ``src``: as the test's
    own user, or as ``nobody`` (``setpriv``; member of ``groups`` besides its own) when the tests
    run as root; skips when root cannot."""
    src = str(Path(__file__).resolve().parents[3] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, sysconfig.get_paths()["purelib"]])}
    command = [sys.executable, "-P", "-c", code, *args]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists():
            pytest.skip("running as root without setpriv: root may read and write anything")
        member = ["--groups", ",".join(map(str, groups))] if groups else ["--clear-groups"]
        command = ["setpriv", "--reuid", "65534", "--regid", "65534", *member, "--"]
        command += ["/usr/bin/python3", "-P", "-c", code, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
