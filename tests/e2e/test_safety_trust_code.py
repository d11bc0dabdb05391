"""What a trust covers is what runs: extensions load from their source (a `__pycache__` file the
repository ships is never run), and a change behind a symbolic link under `.xcsh/extensions/`
lapses the trust like a change in place."""

from __future__ import annotations

import importlib.util
import marshal
import os
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient

ARGS = ["--model", "fake/fake-model", "--no-tools", "--no-session"]


def _writes(marker: Path, text: str, extra: str = "") -> str:
    """Module source that appends ``text`` to ``marker`` when imported."""
    return f"{extra}open({str(marker)!r}, 'a').write({text + chr(10)!r})\n\n\ndef setup(xcsh):\n    pass\n"


def _plant_pyc(source: Path, code_text: str) -> None:
    """An unchecked hash-based pyc for ``source`` (Python runs it without looking at the source)."""
    code = compile(code_text, str(source), "exec")
    flags = (1).to_bytes(4, "little")  # hash-based, source not checked
    data = importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source.read_bytes())
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(data + marshal.dumps(code))


async def _start(ws: Workspace, *extra: str) -> str:
    """Start the RPC process once (its extensions load), answer get_state; return its stderr."""
    async with RpcClient.spawn(args=[*ARGS, *extra], cwd=ws.proj, env=ws.env) as client:
        await client.get_state()
    return client.stderr_tail


async def test_a_trusted_extensions_shipped_bytecode_never_runs_its_source_does_and_none_is_written(
    workspace: Workspace, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    ext = workspace.proj / ".xcsh" / "extensions"
    (ext / "pkg").mkdir(parents=True)
    (ext / "guard.py").write_text(_writes(marker, "guard-source"))
    (ext / "pkg" / "__init__.py").write_text(_writes(marker, "pkg-source", "from . import sub  # noqa\n"))
    (ext / "pkg" / "sub.py").write_text(f"open({str(marker)!r}, 'a').write('sub-source\\n')\n")
    assert "skipped project code" not in await _start(workspace, "--trust")
    assert marker.read_text().splitlines() == ["guard-source", "sub-source", "pkg-source"]
    assert not list(ext.rglob("__pycache__"))  # loading from source writes no cache either
    marker.unlink()
    # a git pull (or the repository from the start) brings bytecode that says something else
    for source in (ext / "guard.py", ext / "pkg" / "__init__.py", ext / "pkg" / "sub.py"):
        _plant_pyc(source, f"open({str(marker)!r}, 'a').write('EVIL {source.name}\\n')\ndef setup(x): pass\n")
    stderr = await _start(workspace)
    assert "skipped project code" not in stderr  # the sources are unchanged: the trust holds
    assert marker.read_text().splitlines() == ["guard-source", "sub-source", "pkg-source"]
    # only the .pyc files of a cache folder are left out of the hash: a module there is code
    (ext / "pkg" / "__pycache__" / "helper.py").write_text("# importable as pkg.__pycache__.helper\n")
    assert "(changed since it was trusted)" in await _start(workspace)


async def test_a_change_behind_a_symlinked_extension_package_lapses_the_trust_and_a_link_cycle_is_walked_once(
    workspace: Workspace, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    ext = workspace.proj / ".xcsh" / "extensions"
    ext.mkdir(parents=True)
    package = workspace.proj / "tools" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(_writes(marker, "pkg-v1"))
    (package / "loop").symlink_to(".", target_is_directory=True)  # a cycle must not hang the hash
    os.symlink("../../tools/pkg", ext / "pkg")
    assert "skipped project code" not in await _start(workspace, "--trust")
    assert marker.read_text() == "pkg-v1\n"
    (package / "__init__.py").write_text(_writes(marker, "PKG-CHANGED"))
    stderr = await _start(workspace)
    assert "(changed since it was trusted): .xcsh/extensions/pkg." in stderr
    assert marker.read_text() == "pkg-v1\n"  # the changed code did not run
