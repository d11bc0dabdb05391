"""The grep tool, with ripgrep and with the pure-Python fallback (same expectations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding.tools import engines
from xcsh.agent.types import AgentToolResult
from xcsh.coding.tools import ToolError, create_grep_tool
from xcsh.coding.tools.find import RipgrepRun, find_ripgrep

use_ripgrep = engines.use_ripgrep


async def _grep(cwd: Path, use_ripgrep: bool, **args: Any) -> AgentToolResult:
    tool = create_grep_tool(cwd, use_ripgrep=use_ripgrep)
    return await tool.execute("c1", args, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src/a.py").write_text(
        "import os\n\ndef alpha():\n    return 1\n\n\n\n\ndef beta():\n    return 2\n"
    )
    (root / "src/b.md").write_text("# Alpha notes\nnothing here\n")


def test_ripgrep_binary_from_the_wheel_is_found() -> None:
    path = find_ripgrep()
    assert path is not None and Path(path).name == "rg"


async def test_matches_are_shown_with_context_and_group_separators(tmp_path: Path, use_ripgrep: bool) -> None:
    _tree(tmp_path)
    result = await _grep(tmp_path, use_ripgrep, pattern=r"^def ", pre=1, post=1, path="src")
    assert _text(result) == "\n".join(
        [
            "src/a.py-2-",
            "src/a.py:3:def alpha():",
            "src/a.py-4-    return 1",
            "--",
            "src/a.py-8-",
            "src/a.py:9:def beta():",
            "src/a.py-10-    return 2",
        ]
    )
    assert result.get("isWarning") is None
    assert result["details"] == {"matchCount": 2, "limitReached": False}


async def test_no_match_is_a_warning(tmp_path: Path, use_ripgrep: bool) -> None:
    _tree(tmp_path)
    result = await _grep(tmp_path, use_ripgrep, pattern="zzz_not_there")
    assert _text(result) == "No matches found"
    assert result["isWarning"] is True


async def test_no_match_for_a_name_with_a_value_suggests_the_name_alone(
    tmp_path: Path, use_ripgrep: bool
) -> None:
    (tmp_path / "settings.py").write_text("MAX_RETRIES = 3\n")
    result = await _grep(tmp_path, use_ripgrep, pattern="MAX_RETRIES = 5")
    assert _text(result) == (
        "No matches found\n\nNothing contains exactly 'MAX_RETRIES = 5'. A line may hold another value or "
        "other spacing: search for the name alone, with pattern MAX_RETRIES."
    )
    assert result["isWarning"] is True


async def test_limit_reached_notice_and_offset_paging(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "many.txt").write_text("".join(f"hit {n}\n" for n in range(1, 31)))
    first = _text(await _grep(tmp_path, use_ripgrep, pattern="hit", pre=0, post=0, limit=20))
    body, notice = first.split("\n\n")
    assert body.split("\n")[-1] == "many.txt:20:hit 20"
    assert notice == "[20 matches limit reached. Use limit=40 for more]"
    page = _text(await _grep(tmp_path, use_ripgrep, pattern="hit", pre=0, post=0, limit=5, offset=25))
    assert page == "\n".join(f"many.txt:{n}:hit {n}" for n in range(26, 31))


async def test_case_insensitive_and_glob_and_type_filters(tmp_path: Path, use_ripgrep: bool) -> None:
    _tree(tmp_path)
    assert (
        _text(await _grep(tmp_path, use_ripgrep, pattern="alpha", pre=0, post=0)) == "src/a.py:3:def alpha():"
    )
    both = _text(await _grep(tmp_path, use_ripgrep, pattern="alpha", i=True, pre=0, post=0))
    assert both == "src/a.py:3:def alpha():\n--\nsrc/b.md:1:# Alpha notes"
    only_md = await _grep(tmp_path, use_ripgrep, pattern="alpha", i=True, glob="*.md", pre=0, post=0)
    assert _text(only_md) == "src/b.md:1:# Alpha notes"
    only_py = await _grep(tmp_path, use_ripgrep, pattern="alpha", i=True, type="py", pre=0, post=0)
    assert _text(only_py) == "src/a.py:3:def alpha():"


async def test_gitignored_files_are_skipped_unless_asked(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build/out.txt").write_text("needle\n")
    (tmp_path / "x.log").write_text("needle\n")
    (tmp_path / "keep.txt").write_text("needle\n")
    assert _text(await _grep(tmp_path, use_ripgrep, pattern="needle")) == "keep.txt:1:needle"
    everything = _text(await _grep(tmp_path, use_ripgrep, pattern="needle", gitignore=False, pre=0, post=0))
    assert sorted(everything.replace("--\n", "").split("\n")) == [
        "build/out.txt:1:needle",
        "keep.txt:1:needle",
        "x.log:1:needle",
    ]


async def test_hidden_files_are_searched_but_not_the_git_directory(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git/config").write_text("needle\n")
    (tmp_path / ".env").write_text("needle\n")
    assert _text(await _grep(tmp_path, use_ripgrep, pattern="needle")) == ".env:1:needle"


async def test_long_lines_are_cut_at_1024_characters(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "wide.txt").write_text("needle" + "x" * 5000 + "\n")
    text = _text(await _grep(tmp_path, use_ripgrep, pattern="needle"))
    assert text == "wide.txt:1:" + ("needle" + "x" * 5000)[:1024] + "… [line truncated]"


async def test_multiline_patterns_report_every_matched_line(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "m.txt").write_text("start\nmiddle\nend\n")
    text = _text(await _grep(tmp_path, use_ripgrep, pattern=r"start\nmiddle", multiline=True, pre=0, post=0))
    assert text == "m.txt:1:start\nm.txt:2:middle"


async def test_single_file_path_is_searched(tmp_path: Path, use_ripgrep: bool) -> None:
    _tree(tmp_path)
    assert _text(await _grep(tmp_path, use_ripgrep, pattern="nothing", path="src/b.md", pre=0, post=0)) == (
        "src/b.md:2:nothing here"
    )


async def test_invalid_regex_is_an_error(tmp_path: Path, use_ripgrep: bool) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(ToolError, match="grep failed"):
        await _grep(tmp_path, use_ripgrep, pattern="(unclosed")


async def test_missing_path_is_an_error(tmp_path: Path, use_ripgrep: bool) -> None:
    with pytest.raises(ToolError, match="Path not found: nowhere"):
        await _grep(tmp_path, use_ripgrep, pattern="x", path="nowhere")


def test_grep_tool_schema_and_class(tmp_path: Path) -> None:
    tool = create_grep_tool(tmp_path)
    assert (tool.name, tool.concurrency) == ("grep", "shared")
    assert tool.parameters["required"] == ["pattern"]
    assert tool.parameters["additionalProperties"] is False


@pytest.mark.skipif(find_ripgrep() is None, reason="rg not installed")
async def test_aborted_search_raises_tool_aborted_error(tmp_path: Path) -> None:
    from xcsh.ai.abort import AbortController
    from xcsh.coding.tools import ToolAbortedError

    (tmp_path / "f.txt").write_text("needle\n")
    controller = AbortController()
    controller.abort()
    tool = create_grep_tool(tmp_path)
    with pytest.raises(ToolAbortedError):
        await tool.execute("c1", {"pattern": "needle"}, controller.signal, lambda _: None)


async def test_a_pattern_anchored_at_line_end_matches_in_crlf_files(
    tmp_path: Path, use_ripgrep: bool
) -> None:
    (tmp_path / "w.txt").write_bytes(b"one crlf\r\ntwo\r\n")
    text = _text(await _grep(tmp_path, use_ripgrep, pattern="crlf$", pre=0, post=0))
    assert text.endswith(":one crlf")


async def test_an_output_line_past_the_reader_s_limit_is_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    import sys

    script = "print('x' * 5000); print('after')"
    run = RipgrepRun([sys.executable, "-c", script], cwd=tmp_path, signal=None, line_limit=1024)
    lines = [line async for line in run.lines()]
    assert lines == [b"after\n"] and run.skipped == 1
