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

SYSTEM_PYTHON = Path("/usr/bin/python3")
"""The Python ``nobody`` runs: the test's own interpreter may sit in a folder ``nobody`` cannot enter."""


def nobody_python(skip_reason: str, groups: tuple[int, ...] = ()) -> list[str]:
    """The command that runs :data:`SYSTEM_PYTHON` as ``nobody`` (``setpriv``; member of
    ``groups`` besides its own); skips the test with ``skip_reason`` when this machine cannot."""
    if shutil.which("setpriv") is None or not SYSTEM_PYTHON.exists():
        pytest.skip(skip_reason)
    member = ["--groups", ",".join(map(str, groups))] if groups else ["--clear-groups"]
    return ["setpriv", "--reuid", "65534", "--regid", "65534", *member, "--", str(SYSTEM_PYTHON)]


def code_path() -> str:
    """A ``PYTHONPATH`` that lets :data:`SYSTEM_PYTHON` import this project's ``src`` and the
    packages of the test's environment. As root, skips the test when ``nobody`` cannot read
    them (a checkout under ``/root`` or in a ``0700`` folder): run as ``nobody``, the code
    would only fail to import."""
    src = str(Path(__file__).resolve().parents[3] / "src")
    purelib = sysconfig.get_paths()["purelib"]
    if os.geteuid() == 0 and not _nobody_can_read(src, purelib):
        pytest.skip(f"nobody cannot read {src} or {purelib} (a folder on the way is closed to other users)")
    return os.pathsep.join([src, purelib])


_READABLE: dict[tuple[str, ...], bool] = {}


def _nobody_can_read(*folders: str) -> bool:
    """Whether ``nobody`` may list every one of ``folders`` (asked once per set, by running
    :data:`SYSTEM_PYTHON` as ``nobody``: the modes, ACLs and owners on the way all count)."""
    if folders not in _READABLE:
        command = [*nobody_python("running as root without setpriv or /usr/bin/python3"), "-I", "-c"]
        probe = "import os, sys\nfor folder in sys.argv[1:]: os.listdir(folder)"
        done = subprocess.run([*command, probe, *folders], capture_output=True, timeout=60, check=False)
        _READABLE[folders] = done.returncode == 0
    return _READABLE[folders]


def run_unprivileged(code: str, *args: str, groups: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (with ``args`` in ``sys.argv[1:]``) under this project's ``src``: as the test's
    own user, or as ``nobody`` (``setpriv``; member of ``groups`` besides its own) when the tests
    run as root; skips when root cannot."""
    env = {**os.environ, "PYTHONPATH": code_path()}
    command = [sys.executable, "-P", "-c", code, *args]
    if os.geteuid() == 0:
        reason = "running as root without setpriv: root may read and write anything"
        command = [*nobody_python(reason, groups), "-P", "-c", code, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
