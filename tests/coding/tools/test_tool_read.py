"""The read tool on real files."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.types import AgentToolResult
from xcsh.coding.tools import ToolError, create_read_tool
from xcsh.coding.tools.ls import format_age
from xcsh.coding.tools.read import parse_selection

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


async def _read(cwd: Path, **args: Any) -> AgentToolResult:
    tool = create_read_tool(cwd)
    return await tool.execute("c1", args, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


def _numbered(path: Path, count: int) -> None:
    path.write_text("".join(f"line {n}\n" for n in range(1, count + 1)), encoding="utf-8")


async def test_small_file_is_returned_verbatim_without_line_prefixes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n  beta\tgamma\n", encoding="utf-8")
    assert _text(await _read(tmp_path, path="a.txt")) == "alpha\n  beta\tgamma"


async def test_default_read_shows_300_lines_and_a_continuation_notice(tmp_path: Path) -> None:
    _numbered(tmp_path / "big.txt", 1200)
    text = _text(await _read(tmp_path, path="big.txt"))
    lines = text.split("\n")
    assert lines[0] == "line 1" and lines[299] == "line 300"
    assert text.endswith("line 300\n\n[Showing lines 1-300 of 1200. Use sel=L301 to continue]")


async def test_sel_start_line_continues_from_there(tmp_path: Path) -> None:
    _numbered(tmp_path / "big.txt", 1200)
    text = _text(await _read(tmp_path, path="big.txt", sel="L301"))
    assert text.startswith("line 301\n")
    assert text.endswith("line 600\n\n[Showing lines 301-600 of 1200. Use sel=L601 to continue]")


async def test_sel_range_shows_exactly_that_range(tmp_path: Path) -> None:
    _numbered(tmp_path / "big.txt", 1200)
    text = _text(await _read(tmp_path, path="big.txt", sel="L50-L52"))
    assert text == "line 50\nline 51\nline 52"


async def test_sel_open_range_reads_to_the_end(tmp_path: Path) -> None:
    _numbered(tmp_path / "f.txt", 500)
    text = _text(await _read(tmp_path, path="f.txt", sel="L450-"))
    assert text.split("\n") == [f"line {n}" for n in range(450, 501)]


async def test_sel_raw_reads_past_the_default_window(tmp_path: Path) -> None:
    _numbered(tmp_path / "f.txt", 500)
    assert _text(await _read(tmp_path, path="f.txt", sel="raw")).split("\n")[-1] == "line 500"


async def test_line_cap_is_3000_lines_per_call(tmp_path: Path) -> None:
    _numbered(tmp_path / "f.txt", 4000)
    text = _text(await _read(tmp_path, path="f.txt", sel="L1-"))
    assert text.endswith("line 3000\n\n[Showing lines 1-3000 of 4000. Use sel=L3001 to continue]")


async def test_byte_cap_stops_at_50kb_with_notice(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("".join(f"{n:04d}" + "x" * 95 + "\n" for n in range(1, 1001)))
    text = _text(await _read(tmp_path, path="wide.txt", sel="L1-"))
    body, notice = text.split("\n\n")
    shown = len(body.split("\n"))
    assert len(body.encode()) <= 51_200
    assert notice == f"[Showing lines 1-{shown} of 1000 (50.0KB limit). Use sel=L{shown + 1} to continue]"


async def test_l0_is_rejected_with_the_spec_message(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match=r"^L0 is invalid; lines are 1-indexed\. Use sel=L1\.$"):
        await _read(tmp_path, path="a.txt", sel="L0")


async def test_malformed_selection_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match="Invalid sel"):
        await _read(tmp_path, path="a.txt", sel="lines 3 to 4")


async def test_start_beyond_the_end_is_an_error(tmp_path: Path) -> None:
    _numbered(tmp_path / "f.txt", 10)
    with pytest.raises(ToolError, match=r"Line 11 is beyond the end of f\.txt \(10 lines\)"):
        await _read(tmp_path, path="f.txt", sel="L11")


async def test_missing_file_error_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"File not found: nope/missing\.txt"):
        await _read(tmp_path, path="nope/missing.txt")


async def test_missing_file_error_names_similar_files_of_the_project(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "limits.py").write_text("X = 1\n")
    with pytest.raises(ToolError) as info:
        await _read(tmp_path, path="limit.py")
    assert (
        str(info.value)
        == "File not found: limit.py. Did you mean app/limits.py? Use find to locate files by name."
    )
    # nothing similar in a small project: its files are listed
    (tmp_path / "db.py").write_text("")
    with pytest.raises(ToolError) as info:
        await _read(tmp_path, path="project.py")
    assert str(info.value) == (
        "File not found: project.py. No file has a similar name; the files there are: app/limits.py, db.py. "
        "To find which file mentions a name, grep for it."
    )
    for index in range(30):
        (tmp_path / f"m{index}.txt").write_text("")
    with pytest.raises(ToolError) as info:
        await _read(tmp_path, path="zzz.py")
    assert str(info.value).endswith("Use find to locate files by name (read on a directory lists it).")


async def test_crlf_lines_are_shown_without_carriage_returns(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert _text(await _read(tmp_path, path="w.txt")) == "one\ntwo"


async def test_empty_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    assert _text(await _read(tmp_path, path="e.txt")) == "(empty file)"


async def test_directory_is_listed_case_insensitively_with_slashes_and_ages(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "A.txt").write_text("")
    (tmp_path / "c").mkdir()
    (tmp_path / ".hidden").write_text("")
    day = 86_400
    now = time.time()
    os.utime(tmp_path / "A.txt", (now - 3 * day, now - 3 * day))
    os.utime(tmp_path / "c", (now - 40 * day, now - 40 * day))
    os.utime(tmp_path / "b.txt", (now - 2 * 3600 - 30, now - 2 * 3600 - 30))
    assert _text(await _read(tmp_path, path=".")) == (
        ".hidden (just now)\nA.txt (3d ago)\nb.txt (2h ago)\nc/ (1mo ago)"
    )
    assert [format_age(s) for s in (59, 60, 3599, 3600, 6 * day, 7 * day, 29 * day, 30 * day)] == [
        "just now",
        "1m ago",
        "59m ago",
        "1h ago",
        "6d ago",
        "1w ago",
        "4w ago",
        "1mo ago",
    ]


async def test_empty_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert _text(await _read(tmp_path, path="empty")) == "(empty directory)"


async def test_directory_listing_is_capped_at_500_entries(tmp_path: Path) -> None:
    for n in range(520):
        (tmp_path / f"f{n:03d}").write_text("")
    text = _text(await _read(tmp_path, path="."))
    body, notice = text.split("\n\n")
    assert len(body.split("\n")) == 500
    assert notice == "[Showing 500 of 520 entries]"


async def test_png_is_returned_as_an_image_block(tmp_path: Path) -> None:
    (tmp_path / "pic.bin").write_bytes(PNG_1PX)
    result = await _read(tmp_path, path="pic.bin")
    image = result["content"][1]
    assert image == {"type": "image", "data": base64.b64encode(PNG_1PX).decode(), "mimeType": "image/png"}
    assert "image/png" in _text(result)


async def test_binary_file_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "blob.dat").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(ToolError, match=r"blob\.dat: it is a binary file"):
        await _read(tmp_path, path="blob.dat")


async def test_home_relative_and_absolute_paths_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "h.txt").write_text("from home\n")
    monkeypatch.setenv("HOME", str(home))
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert _text(await _read(other, path="~/h.txt")) == "from home"
    assert _text(await _read(other, path=str(home / "h.txt"))) == "from home"
    assert _text(await _read(home, path="@h.txt")) == "from home"


def test_read_tool_is_shared_and_abortable_for_url_downloads(tmp_path: Path) -> None:
    tool = create_read_tool(tmp_path)
    assert (tool.name, tool.concurrency, tool.abortable) == ("read", "shared", True)
    assert tool.parameters["required"] == ["path"]
    assert tool.parameters["additionalProperties"] is False


def test_parse_selection_variants() -> None:
    assert (parse_selection(None).start, parse_selection(None).limit) == (1, 300)
    assert parse_selection("L5-L9").end == 9
    assert parse_selection("L5-").end is None and parse_selection("L5-").limit == 3000
    with pytest.raises(ToolError, match="ends before it starts"):
        parse_selection("L9-L5")
