"""The find and ls tools, and the built-in tool set."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from coding.tools import engines
from xcsh.agent.types import AgentToolResult
from xcsh.coding.tools import (
    BUILTIN_TOOL_NAMES,
    ToolError,
    create_coding_tools,
    create_find_tool,
    create_ls_tool,
)
from xcsh.coding.tools.find import glob_to_regex, split_patterns

use_ripgrep = engines.use_ripgrep


async def _find(cwd: Path, use_ripgrep: bool, **args: Any) -> AgentToolResult:
    return await create_find_tool(cwd, use_ripgrep=use_ripgrep).execute("c1", args, None, lambda _: None)


async def _ls(cwd: Path, **args: Any) -> AgentToolResult:
    return await create_ls_tool(cwd).execute("c1", args, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


def _touch(path: Path, mtime: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))


async def test_name_glob_matches_at_any_depth_newest_first(tmp_path: Path, use_ripgrep: bool) -> None:
    _touch(tmp_path / "old.py", 1_000)
    _touch(tmp_path / "pkg/deep/new.py", 3_000)
    _touch(tmp_path / "pkg/mid.py", 2_000)
    _touch(tmp_path / "pkg/readme.md", 4_000)
    result = await _find(tmp_path, use_ripgrep, pattern="*.py")
    assert _text(result) == "pkg/deep/new.py\npkg/mid.py\nold.py"


async def test_pattern_with_a_directory_prefix_and_double_star(tmp_path: Path, use_ripgrep: bool) -> None:
    _touch(tmp_path / "src/a.ts", 1)
    _touch(tmp_path / "src/x/b.ts", 2)
    _touch(tmp_path / "other/c.ts", 3)
    assert _text(await _find(tmp_path, use_ripgrep, pattern="src/**/*.ts")) == "src/x/b.ts\nsrc/a.ts"
    assert _text(await _find(tmp_path, use_ripgrep, pattern="src/*.ts")) == "src/a.ts"


async def test_comma_separated_patterns_and_braces(tmp_path: Path, use_ripgrep: bool) -> None:
    _touch(tmp_path / "a.md", 1)
    _touch(tmp_path / "b.txt", 2)
    _touch(tmp_path / "c.rs", 3)
    assert _text(await _find(tmp_path, use_ripgrep, pattern="*.md, *.txt")) == "b.txt\na.md"
    assert _text(await _find(tmp_path, use_ripgrep, pattern="*.{md,rs}")) == "c.rs\na.md"


async def test_no_match_is_a_warning(tmp_path: Path, use_ripgrep: bool) -> None:
    result = await _find(tmp_path, use_ripgrep, pattern="*.nothing")
    assert _text(result) == "No files found matching pattern"
    assert result["isWarning"] is True


async def test_no_match_for_a_symbol_like_pattern_suggests_grep(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "limits.py").write_text("MAX_UPLOAD_MB = 25\n")
    result = await _find(tmp_path, use_ripgrep, pattern="MAX_UPLOAD_MB")
    assert _text(result) == (
        "No files found matching pattern\n\nfind matches file names, not what files contain. To search the "
        "contents of files for MAX_UPLOAD_MB, use grep with pattern MAX_UPLOAD_MB; to match file names that "
        "contain it, use find with pattern *MAX_UPLOAD_MB*."
    )
    assert result["isWarning"] is True


async def test_gitignore_is_respected_and_hidden_can_be_excluded(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / ".gitignore").write_text("dist/\n")
    _touch(tmp_path / "dist/bundle.js", 1)
    _touch(tmp_path / "app.js", 2)
    _touch(tmp_path / ".config/tool.js", 3)
    assert _text(await _find(tmp_path, use_ripgrep, pattern="*.js")) == ".config/tool.js\napp.js"
    assert _text(await _find(tmp_path, use_ripgrep, pattern="*.js", hidden=False)) == "app.js"


async def test_limit_notice_when_more_files_exist(tmp_path: Path, use_ripgrep: bool) -> None:
    for n in range(5):
        _touch(tmp_path / f"f{n}.txt", n)
    text = _text(await _find(tmp_path, use_ripgrep, pattern="*.txt", limit=2))
    assert text == "f4.txt\nf3.txt\n\n[2 results limit reached. Use limit=4 for more]"


async def test_missing_base_directory_is_an_error(tmp_path: Path, use_ripgrep: bool) -> None:
    with pytest.raises(ToolError, match="Path not found: nope"):
        await _find(tmp_path, use_ripgrep, pattern="nope/*.py")


def test_glob_translation() -> None:
    assert glob_to_regex("**/*.py").match("a/b/c.py")
    assert glob_to_regex("**/*.py").match("c.py")
    assert not glob_to_regex("*.py").match("a/c.py")
    assert glob_to_regex("file?.[ch]").match("file1.h")
    assert glob_to_regex("*.{js,ts}").match("x.ts")
    assert split_patterns("a,{b,c}, d") == ["a", "{b,c}", "d"]


async def test_ls_lists_sorted_entries_with_directory_slashes(tmp_path: Path) -> None:
    (tmp_path / "Zeta").mkdir()
    (tmp_path / "alpha.txt").write_text("")
    (tmp_path / "beta.txt").write_text("")
    assert _text(await _ls(tmp_path)) == "alpha.txt\nbeta.txt\nZeta/"


async def test_ls_limit_notice(tmp_path: Path) -> None:
    for n in range(3):
        (tmp_path / f"f{n}").write_text("")
    assert _text(await _ls(tmp_path, limit=2)) == "f0\nf1\n\n[2 entries limit reached. Use limit=4 for more]"


async def test_ls_of_a_file_or_missing_path_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ToolError, match="Not a directory: f"):
        await _ls(tmp_path, path="f")
    with pytest.raises(ToolError, match="Path not found: gone"):
        await _ls(tmp_path, path="gone")


def test_create_coding_tools_returns_the_default_builtins_in_order_without_ls(tmp_path: Path) -> None:
    tools = create_coding_tools(tmp_path)
    assert tuple(tool.name for tool in tools) == tuple(n for n in BUILTIN_TOOL_NAMES if n != "ls") == (
        "read", "bash", "edit", "write", "grep", "find", "ast_grep", "ast_edit", "notebook", "calc",
    )  # fmt: skip
    for tool in [*tools, *create_coding_tools(tmp_path, ["ls"])]:
        schema = tool.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert all(prop.get("description") for prop in schema["properties"].values())
        assert len(tool.description) > 80


def test_create_coding_tools_selects_names_in_builtin_order(tmp_path: Path) -> None:
    assert [t.name for t in create_coding_tools(tmp_path, ["ls", "read"])] == ["read", "ls"]
    with pytest.raises(ValueError, match="nonsense"):
        create_coding_tools(tmp_path, ["nonsense"])


WALK_AS_USER = """
import sys
from pathlib import Path
from xcsh.coding.tools.find import walk_files
root = Path(sys.argv[1])
print("\\n".join(p.relative_to(root).as_posix() for p in walk_files(root)))
"""


def test_the_python_walk_skips_folders_and_files_the_user_may_not_read() -> None:
    """The fallback walk (grep and find without ripgrep) skips a folder it may not enter instead of
    failing the whole search with ``Permission denied`` on its ``.gitignore``. Root reads every
    folder, so as root the walk runs as ``nobody`` (``setpriv``)."""
    import shutil
    import tempfile

    from coding.tools.as_user import run_unprivileged

    root = Path(tempfile.mkdtemp(prefix="xcsh-walk-"))  # pytest's base folder is 0700
    try:
        root.chmod(0o755)
        (root / "a.txt").write_text("a\n")
        (root / "open").mkdir()
        (root / "open" / "b.txt").write_text("b\n")
        closed = root / "closed"
        closed.mkdir()
        (closed / ".gitignore").write_text("*.log\n")
        (closed / "secret.txt").write_text("s\n")
        closed.chmod(0o000)  # neither listed nor entered: its .gitignore cannot be stat'ed either
        (root / "zz.txt").write_text("z\n")
        done = run_unprivileged(WALK_AS_USER, str(root))
        assert done.returncode == 0, done.stderr
        assert sorted(done.stdout.split()) == ["a.txt", "open/b.txt", "zz.txt"]
    finally:
        (root / "closed").chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)
