"""The write and edit tools on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.types import AgentToolResult
from xcsh.coding.tools import ToolError, create_edit_tool, create_write_tool
from xcsh.coding.tools.edit_match import closest_window, first_changed_line, replace_text


async def _write(cwd: Path, **args: Any) -> AgentToolResult:
    return await create_write_tool(cwd).execute("c1", args, None, lambda _: None)


async def _edit(cwd: Path, *edits: dict[str, Any]) -> AgentToolResult:
    return await create_edit_tool(cwd).execute("c1", {"edits": list(edits)}, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


async def test_write_creates_parent_directories_and_reports_character_count(tmp_path: Path) -> None:
    result = await _write(tmp_path, path="a/b/c.txt", content="héllo\n")
    assert _text(result) == "Successfully wrote 6 bytes to a/b/c.txt"
    assert (tmp_path / "a/b/c.txt").read_bytes() == "héllo\n".encode()


async def test_write_overwrites_and_keeps_line_endings_exactly(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old")
    await _write(tmp_path, path="f.txt", content="x\r\ny\n")
    assert (tmp_path / "f.txt").read_bytes() == b"x\r\ny\n"


async def test_write_to_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await _write(tmp_path, path="d", content="x")


def test_write_and_edit_are_exclusive_and_not_abortable(tmp_path: Path) -> None:
    for tool in (create_write_tool(tmp_path), create_edit_tool(tmp_path)):
        assert (tool.concurrency, tool.abortable) == ("exclusive", False)
        assert tool.parameters["additionalProperties"] is False
    items = create_edit_tool(tmp_path).parameters["properties"]["edits"]["items"]
    assert items["required"] == ["path", "old_text", "new_text"]


async def test_edit_replaces_a_unique_match_and_returns_a_diff(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    result = await _edit(tmp_path, {"path": "m.py", "old_text": "    return 2", "new_text": "    return 3"})
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 3\n"
    assert _text(result) == "Edited m.py: 1 replacement, +1 -1 lines."
    details = result["details"]
    assert details["firstChangedLine"] == 6
    assert "-    return 2\n" in details["diff"] and "+    return 3\n" in details["diff"]
    assert details["diff"].startswith("--- a/m.py\n+++ b/m.py\n")


async def test_edit_refuses_an_ambiguous_match_and_counts_occurrences(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolError, match=r"Found 3 occurrences of the text in f\.txt"):
        await _edit(tmp_path, {"path": "f.txt", "old_text": "x = 1", "new_text": "x = 2"})
    assert (tmp_path / "f.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_edit_all_replaces_every_occurrence(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x = 1\nx = 1\n")
    result = await _edit(tmp_path, {"path": "f.txt", "old_text": "x = 1", "new_text": "x = 2", "all": True})
    assert (tmp_path / "f.txt").read_text() == "x = 2\nx = 2\n"
    assert _text(result).startswith("Edited f.txt: 2 replacements")


async def test_edit_tolerates_indentation_differences_and_reindents(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("class A:\n    def f(self):\n        return  1\n")
    old = "def f(self):\n    return 1\n"
    new = "def f(self):\n    return 2\n"
    result = await _edit(tmp_path, {"path": "f.py", "old_text": old, "new_text": new})
    assert (tmp_path / "f.py").read_text() == "class A:\n    def f(self):\n        return 2\n"
    assert "whitespace" in _text(result)


async def test_edit_not_found_shows_the_current_text_around_the_closest_lines(tmp_path: Path) -> None:
    lines = [f"line_{i} = {i}" for i in range(1, 11)]
    lines[5:7] = ["def compute(a, b):", "    return a + b"]
    (tmp_path / "f.py").write_text("\n".join(lines) + "\n")
    with pytest.raises(ToolError) as info:
        await _edit(
            tmp_path, {"path": "f.py", "old_text": "def compute(a, c):\n    return a * c", "new_text": "x"}
        )
    assert str(info.value) == (
        "Could not find old_text in f.py. The closest match is lines 6-7; the current text of lines 4-9 is:\n"
        "line_4 = 4\nline_5 = 5\ndef compute(a, b):\n    return a + b\nline_8 = 8\nline_9 = 9\n"
        "Copy old_text exactly from this text (or read f.py again) and retry.\n"
        "The closest lines as they are now, to use as old_text (then write the changed lines as new_text):\n"
        '"old_text": "def compute(a, b):\\n    return a + b"'
    )


async def test_an_edit_with_a_guessed_key_gets_the_real_line_as_a_json_old_text(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{\n  "name": "svc",\n  "port": 8080,\n  "debug": true\n}\n')
    with pytest.raises(ToolError) as info:
        await _edit(tmp_path, {"path": "config.json", "old_text": "port = 8080", "new_text": "port = 9090"})
    assert str(info.value).endswith('"old_text": "  \\"port\\": 8080,"')


async def test_edit_of_text_the_model_guessed_shows_the_whole_short_file(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("import os\n\nprint(os.getcwd())\n")
    with pytest.raises(ToolError) as info:
        await _edit(tmp_path, {"path": "f.py", "old_text": "class Widget:\n    pass", "new_text": "x"})
    assert str(info.value) == (
        "Could not find old_text in f.py. Nothing in it is similar. Its current content (3 lines) is:\n"
        "import os\n\nprint(os.getcwd())\nCopy old_text exactly from this content and retry."
    )


async def test_edit_validates_every_edit_before_writing_any_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    with pytest.raises(ToolError, match=r"edits\[1\] failed, so no file was changed"):
        await _edit(
            tmp_path,
            {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"},
            {"path": "b.txt", "old_text": "gamma", "new_text": "GAMMA"},
        )
    assert (tmp_path / "a.txt").read_text() == "alpha\n"


async def test_edits_to_one_file_apply_in_order(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one two\n")
    await _edit(
        tmp_path,
        {"path": "f.txt", "old_text": "one", "new_text": "three"},
        {"path": "f.txt", "old_text": "three two", "new_text": "done"},
    )
    assert (tmp_path / "f.txt").read_text() == "done\n"


async def test_edit_preserves_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc\r\n")
    await _edit(tmp_path, {"path": "w.txt", "old_text": "a\nb\n", "new_text": "a\nB\n"})
    assert (tmp_path / "w.txt").read_bytes() == b"\xef\xbb\xbfa\r\nB\r\nc\r\n"


async def test_edit_of_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"File not found: gone\.txt"):
        await _edit(tmp_path, {"path": "gone.txt", "old_text": "a", "new_text": "b"})


async def test_edit_with_identical_texts_found_in_the_file_succeeds_without_writing(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("a = 1\n")
    before = target.stat().st_mtime_ns
    result = await _edit(tmp_path, {"path": "f.txt", "old_text": "a  =  1", "new_text": "a  =  1"})
    assert _text(result).startswith("No change needed in f.txt: old_text and new_text are identical")
    assert target.read_text() == "a = 1\n" and target.stat().st_mtime_ns == before


async def test_edit_with_identical_texts_missing_from_the_file_is_an_error_showing_the_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.txt").write_text("a = 1\n")
    with pytest.raises(ToolError) as info:
        await _edit(tmp_path, {"path": "f.txt", "old_text": "zzz", "new_text": "zzz"})
    assert str(info.value).startswith(
        "old_text and new_text are identical, and could not find old_text in f.txt."
    )
    assert "a = 1" in str(info.value)


def test_a_match_that_differs_only_in_spacing_inside_lines_is_accepted() -> None:
    result = replace_text(
        "def f(a,b):\n    return a+b\n", "def f(a, b):\n    return a + b", "X", path="f", replace_all=False
    )
    assert (result.content, result.fuzzy) == ("X\n", True)


def test_blank_lines_around_old_text_are_ignored() -> None:
    content = "x = 1\ny = 2\nz = 3\n"
    result = replace_text(content, "\n\ny = 2\n\n", "\ny = 20\n\n", path="f", replace_all=False)
    assert result.content == "x = 1\ny = 20\nz = 3\n"


def test_old_text_escaped_twice_is_unescaped_when_only_that_form_matches() -> None:
    content = "def f():\n    return 1\n"
    result = replace_text(
        content, "def f():\\n    return 1", "def f():\\n    return 2", path="f", replace_all=False
    )
    assert result.content == "def f():\n    return 2\n"
    literal = 'print("a\\nb")\n'  # a real backslash-n in the file is matched as written
    assert (
        replace_text(literal, 'print("a\\nb")', 'print("c")', path="f", replace_all=False).content
        == 'print("c")\n'
    )


def test_fuzzy_matches_that_are_ambiguous_are_rejected() -> None:
    content = "if x:\n    go()\nif x:\n    go()\n"
    with pytest.raises(ToolError, match="Found 2 places"):
        replace_text(content, "if x:\n  go()", "stop()", path="f", replace_all=False)


def test_fuzzy_match_replaces_whole_lines_including_trailing_newline() -> None:
    result = replace_text("a\n  b   c\nd\n", "b c\n", "", path="f", replace_all=False)
    assert (result.content, result.fuzzy) == ("a\nd\n", True)


def test_dissimilar_text_does_not_match_fuzzily() -> None:
    with pytest.raises(ToolError, match="Could not find"):
        replace_text("value = 10\n", "value = 99\n", "x", path="f", replace_all=False)


def test_first_changed_line_and_closest_window() -> None:
    assert first_changed_line("a\nb\nc", "a\nB\nc") == 2
    assert first_changed_line("a\n", "a\nb\n") == 2
    assert first_changed_line("same", "same") is None
    assert closest_window("", "x") is None
    first, last, text, score = closest_window("one\ntwo\nthree\n", "tw0") or (0, 0, "", 0.0)
    assert (first, last, text) == (2, 2, "two") and 0.5 < score < 1


SETTINGS = "HOST = 'localhost'\nPORT = 8080\nMAX_RETRIES = 3\nTIMEOUT = 30\n"


async def test_the_guarded_write_refuses_to_drop_most_of_an_existing_file_and_shows_its_content(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.py").write_text(SETTINGS)
    tool = create_write_tool(tmp_path, guard_overwrite=True)
    with pytest.raises(ToolError) as caught:
        await tool.execute(
            "c1", {"path": "settings.py", "content": "MAX_RETRIES = 5\n"}, None, lambda _: None
        )
    message = str(caught.value)
    assert message.startswith("Not written: settings.py already exists with 4 non-blank lines")
    assert "keeps only 0 of them" in message and "use edit" in message
    assert message.endswith("The current content of settings.py is:\n" + SETTINGS.rstrip("\n"))
    assert (tmp_path / "settings.py").read_text() == SETTINGS


async def test_the_guarded_write_allows_new_files_short_files_and_rewrites_that_keep_most_lines(
    tmp_path: Path,
) -> None:
    (tmp_path / "settings.py").write_text(SETTINGS)
    (tmp_path / "short.py").write_text("x = 1\ny = 2\n")
    tool = create_write_tool(tmp_path, guard_overwrite=True)
    kept = SETTINGS.replace("MAX_RETRIES = 3", "MAX_RETRIES = 5") + "\n\ndef f():\n    return PORT\n"
    for path, content in (("new.py", "a = 1\n"), ("short.py", "z = 3\n"), ("settings.py", kept)):
        await tool.execute("c1", {"path": path, "content": content}, None, lambda _: None)
        assert (tmp_path / path).read_text() == content


async def test_the_unguarded_write_replaces_a_whole_file_as_the_reference_does(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text(SETTINGS)
    await _write(tmp_path, path="settings.py", content="MAX_RETRIES = 5\n")
    assert (tmp_path / "settings.py").read_text() == "MAX_RETRIES = 5\n"


async def test_the_guarded_write_of_the_current_content_says_that_nothing_changed(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text(SETTINGS)
    tool = create_write_tool(tmp_path, guard_overwrite=True)
    same = SETTINGS.rstrip("\n")  # without the final newline: still the same content
    result = await tool.execute("c1", {"path": "settings.py", "content": same}, None, lambda _: None)
    assert _text(result).startswith(
        f"Successfully wrote {len(same)} bytes to settings.py. "
        "The file already had this content: nothing changed. To add code, write the complete content"
    )


async def test_the_guarded_write_refuses_a_content_that_keeps_only_half_of_the_lines(tmp_path: Path) -> None:
    config = '{\n  "name": "svc",\n  "port": 9090,\n  "debug": false,\n  "workers": 4\n}\n'
    (tmp_path / "config.json").write_text(config)
    tool = create_write_tool(tmp_path, guard_overwrite=True)
    half = '  "port": 9090,\n  "debug": false,\n  "workers": 4\n'
    with pytest.raises(ToolError, match="keeps only 3 of them"):
        await tool.execute("c1", {"path": "config.json", "content": half}, None, lambda _: None)
    assert (tmp_path / "config.json").read_text() == config


GRADES = 'def letter(score):\n    if score > 80:\n        return "B"\n    return "C"\n'


async def test_an_edit_that_differs_only_in_quote_style_matches_in_python_files_only(tmp_path: Path) -> None:
    (tmp_path / "grades.py").write_text(GRADES)
    result = await _edit(tmp_path, {"path": "grades.py", "old_text": "return 'C'", "new_text": "return 'D'"})
    assert "matched ignoring whitespace differences and quote style" in _text(result)
    assert (tmp_path / "grades.py").read_text() == GRADES.replace('return "C"', "return 'D'")
    # in a shell script the quotes change the meaning: '$HOME' is not "$HOME"
    (tmp_path / "run.sh").write_text("echo '$HOME'\n")
    with pytest.raises(ToolError, match=r"Could not find old_text in run\.sh"):
        await _edit(tmp_path, {"path": "run.sh", "old_text": 'echo "$HOME"', "new_text": 'echo "$USER"'})
    assert (tmp_path / "run.sh").read_text() == "echo '$HOME'\n"


INVENTORY = "class Inventory:\n    def total(self):\n        count = 0\n        return count\n"


async def test_the_checked_edit_refuses_a_change_that_breaks_python_syntax(tmp_path: Path) -> None:
    (tmp_path / "inventory.py").write_text(INVENTORY)
    tool = create_edit_tool(tmp_path, check_syntax=True)
    bad = {"path": "inventory.py", "old_text": "def total(self):", "new_text": "def total(self) return 0"}
    with pytest.raises(ToolError) as info:
        await tool.execute("c1", {"edits": [bad]}, None, lambda _: None)
    message = str(info.value)
    assert message.startswith(
        "Not applied: after this change inventory.py would no longer parse (SyntaxError:"
    )
    assert "   2      def total(self) return 0" in message and "Fix the change" in message
    assert (tmp_path / "inventory.py").read_text() == INVENTORY
    # the unchecked edit (models without the small profile) applies it as the reference does
    await _edit(tmp_path, bad)
    assert "def total(self) return 0" in (tmp_path / "inventory.py").read_text()


async def test_the_checked_edit_and_write_accept_valid_changes_and_files_that_were_already_broken(
    tmp_path: Path,
) -> None:
    (tmp_path / "inventory.py").write_text(INVENTORY)
    (tmp_path / "broken.py").write_text("def f(:\n")
    edit = create_edit_tool(tmp_path, check_syntax=True)
    good = {"path": "inventory.py", "old_text": "count = 0", "new_text": "count = 1"}
    still_broken = {"path": "broken.py", "old_text": "def f(:", "new_text": "def f(x:"}
    await edit.execute("c1", {"edits": [good, still_broken]}, None, lambda _: None)
    assert "count = 1" in (tmp_path / "inventory.py").read_text()
    assert (tmp_path / "broken.py").read_text() == "def f(x:\n"


async def test_the_guarded_write_refuses_content_that_breaks_a_json_file(tmp_path: Path) -> None:
    config = '{\n  "name": "svc",\n  "port": 8080,\n  "debug": true,\n  "workers": 4\n}\n'
    (tmp_path / "config.json").write_text(config)
    tool = create_write_tool(tmp_path, guard_overwrite=True)
    broken = config.replace('"port": 8080,', '"port": 9090')
    with pytest.raises(
        ToolError, match=r"would no longer parse \(invalid JSON: Expecting ',' delimiter at line 4\)"
    ):
        await tool.execute("c1", {"path": "config.json", "content": broken}, None, lambda _: None)
    assert (tmp_path / "config.json").read_text() == config


async def test_an_edit_call_with_several_failing_edits_reports_every_one(tmp_path: Path) -> None:
    config = '{\n  "name": "svc",\n  "port": 8080,\n  "debug": true\n}\n'
    (tmp_path / "config.json").write_text(config)
    with pytest.raises(ToolError) as info:
        await _edit(
            tmp_path,
            {"path": "config.json", "old_text": "port = 8080", "new_text": "port = 9090"},
            {"path": "config.json", "old_text": '"name": "svc"', "new_text": '"name": "api"'},
            {"path": "config.json", "old_text": "debug = True", "new_text": "debug = False"},
        )
    message = str(info.value)
    assert message.startswith("2 of the 3 edits failed (edits[0], edits[2]), so no file was changed.\n\n")
    assert "\n\nedits[0]: Could not find old_text in config.json." in message
    assert '"old_text": "  \\"port\\": 8080,"' in message and '"old_text": "  \\"debug\\": true"' in message
    assert (tmp_path / "config.json").read_text() == config


async def test_the_guarded_write_accepts_json_nested_deeper_than_the_decoder_reaches(tmp_path: Path) -> None:
    # review 7: json.loads raised RecursionError past ~990 levels, which failed the write
    (tmp_path / "deep.json").write_text("{}")
    deep = "[" * 1000 + "]" * 1000
    tool = create_write_tool(tmp_path, guard_overwrite=True)
    await tool.execute("c1", {"path": "deep.json", "content": deep}, None, lambda _: None)
    assert (tmp_path / "deep.json").read_text() == deep
