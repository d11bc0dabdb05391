"""Hashline editing: anchors shown by read, edits addressed by anchor, stale anchors refused.

The worked examples are the reference's (one 18-line file, five edits), checked on real files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.types import AgentToolResult
from xcsh.coding.tools import ToolError, ToolOptions, create_coding_tools
from xcsh.coding.tools.hashline import anchor, line_hash, parse_anchor

A_TS = [
    "// @ts-ignore",
    "const timeout = 5000;",
    'const tag = "DO NOT SHIP";',
    "",
    "function alpha() {",
    "\tlog();",
    "}",
    "",
    "function beta() {",
    "\t// TODO: remove after migration",
    "\tlegacy();",
    "\ttry {",
    "\t\treturn parse(data);",
    "\t} catch (err) {",
    "\t\tconsole.error(err);",
    "\t\treturn null;",
    "\t}",
    "}",
]


def _tools(cwd: Path) -> dict[str, Any]:
    return {t.name: t for t in create_coding_tools(cwd, ["read", "edit", "write"], ToolOptions())}


async def _run(cwd: Path, name: str, args: dict[str, Any]) -> AgentToolResult:
    return await _tools(cwd)[name].execute("c1", args, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


def _a(number: int) -> str:
    return anchor(number, A_TS[number - 1])


@pytest.fixture
def a_ts(tmp_path: Path) -> Path:
    path = tmp_path / "a.ts"
    path.write_text("\n".join(A_TS) + "\n")
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text().split("\n")[:-1]


def test_line_hashes_match_the_reference_values() -> None:
    # values the reference's own tests expect: a symbol-only line is seeded by its number
    assert anchor(3, "}") == "3#RZ"
    assert anchor(3, "nextCall();") == "3#HR"
    assert line_hash(3, "nextCall();  \r") == line_hash(3, "nextCall();")
    assert line_hash(4, "}") != line_hash(3, "}")


def test_anchors_are_parsed_from_what_models_copy() -> None:
    assert str(parse_anchor("12#QX")) == "12#QX"
    assert str(parse_anchor(">>> 12 # QX:text")) == "12#QX"
    with pytest.raises(ToolError, match="LINE#ID"):
        parse_anchor("12")
    with pytest.raises(ToolError, match="1-indexed"):
        parse_anchor("0#QX")


async def test_read_prefixes_every_line_with_its_anchor(a_ts: Path) -> None:
    text = _text(await _run(a_ts.parent, "read", {"path": "a.ts", "sel": "L5-L7"}))
    assert text.split("\n") == [f"{_a(5)}:function alpha() {{", f"{_a(6)}:\tlog();", f"{_a(7)}:}}"]


async def test_replacing_a_block_body_keeps_the_shared_boundary_line(a_ts: Path) -> None:
    edit = {
        "path": "a.ts",
        "loc": {"range": {"pos": _a(15), "end": _a(16)}},
        "content": ["\t\tif (isEnoent(err)) return null;", "\t\tthrow err;"],
    }
    result = await _run(a_ts.parent, "edit", {"edits": [edit]})
    assert _lines(a_ts)[13:17] == [
        "\t} catch (err) {",
        "\t\tif (isEnoent(err)) return null;",
        "\t\tthrow err;",
        "\t}",
    ]
    text = _text(result)
    assert text.startswith("Updated a.ts\nChanges: +2 -2")
    assert f"+ {anchor(16, chr(9) * 2 + 'throw err;')}:\t\tthrow err;" in text
    assert result.get("details", {})["firstChangedLine"] == 15


async def test_replacing_a_whole_block_including_its_closing_brace(a_ts: Path) -> None:
    edit = {
        "path": "a.ts",
        "loc": {"range": {"pos": _a(6), "end": _a(7)}},
        "content": ["\tvalidate();", "\tlog();", "}"],
    }
    await _run(a_ts.parent, "edit", {"edits": [edit]})
    assert _lines(a_ts)[4:9] == ["function alpha() {", "\tvalidate();", "\tlog();", "}", ""]


async def test_a_range_ending_one_line_early_is_applied_with_a_doubled_closer_warning(a_ts: Path) -> None:
    edit = {"path": "a.ts", "loc": {"range": {"pos": _a(6), "end": _a(6)}}, "content": ["\tvalidate();", "}"]}
    text = _text(await _run(a_ts.parent, "edit", {"edits": [edit]}))
    assert _lines(a_ts)[4:8] == ["function alpha() {", "\tvalidate();", "}", "}"]
    assert f"set end to {_a(7)}" in text


async def test_replacing_one_line(a_ts: Path) -> None:
    edit = {
        "path": "a.ts",
        "loc": {"range": {"pos": _a(2), "end": _a(2)}},
        "content": ["const timeout = 30_000;"],
    }
    await _run(a_ts.parent, "edit", {"edits": [edit]})
    assert _lines(a_ts)[1] == "const timeout = 30_000;"
    assert len(_lines(a_ts)) == len(A_TS)


async def test_null_content_deletes_a_range(a_ts: Path) -> None:
    edit = {"path": "a.ts", "loc": {"range": {"pos": _a(10), "end": _a(11)}}, "content": None}
    await _run(a_ts.parent, "edit", {"edits": [edit]})
    assert _lines(a_ts)[8:10] == ["function beta() {", "\ttry {"]


async def test_prepending_a_sibling_before_an_anchored_line(a_ts: Path) -> None:
    edit = {
        "path": "a.ts",
        "loc": {"prepend": _a(9)},
        "content": ["function gamma() {", "\tvalidate();", "}", ""],
    }
    await _run(a_ts.parent, "edit", {"edits": [edit]})
    assert _lines(a_ts)[7:13] == ["", "function gamma() {", "\tvalidate();", "}", "", "function beta() {"]


async def test_several_edits_of_one_file_address_the_text_as_it_was_read(a_ts: Path) -> None:
    edits = [
        {"path": "a.ts", "loc": {"range": {"pos": _a(1), "end": _a(1)}}, "content": None},
        {"path": "a.ts", "loc": {"append": _a(2)}, "content": ["const retries = 3;"]},
        {"path": "a.ts", "loc": {"range": {"pos": _a(18), "end": _a(18)}}, "content": ["} // beta"]},
        {"path": "a.ts", "loc": "append", "content": "export { alpha, beta };\n"},
    ]
    await _run(a_ts.parent, "edit", {"edits": edits})
    lines = _lines(a_ts)
    assert lines[:3] == ["const timeout = 5000;", "const retries = 3;", 'const tag = "DO NOT SHIP";']
    assert lines[-2:] == ["} // beta", "export { alpha, beta };"]
    assert a_ts.read_text().endswith("};\n")


async def test_a_stale_anchor_is_refused_with_fresh_anchors_and_nothing_is_written(a_ts: Path) -> None:
    stale = _a(2)
    changed = list(A_TS)
    changed[1] = "const timeout = 9000;"
    a_ts.write_text("\n".join(changed) + "\n")
    before = a_ts.read_text()
    edits = [
        {"path": "a.ts", "loc": {"range": {"pos": stale, "end": stale}}, "content": ["x"]},
        {"path": "a.ts", "loc": "append", "content": ["y"]},
    ]
    with pytest.raises(ToolError) as caught:
        await _run(a_ts.parent, "edit", {"edits": edits})
    message = caught.value.render()
    assert "1 line of a.ts changed since you read it; nothing was edited" in message
    fresh = anchor(2, "const timeout = 9000;")
    assert f">>> {fresh}:const timeout = 9000;" in message
    assert f"    {_a(1)}:// @ts-ignore" in message and f"    {_a(4)}:" in message
    assert a_ts.read_text() == before


async def test_anchors_past_the_end_overlaps_and_no_op_edits_are_errors(a_ts: Path) -> None:
    cwd = a_ts.parent
    with pytest.raises(ToolError, match=r"past the end of a\.ts"):
        await _run(cwd, "edit", {"edits": [{"path": "a.ts", "loc": {"append": "99#ZZ"}, "content": ["x"]}]})
    overlapping = [
        {"path": "a.ts", "loc": {"range": {"pos": _a(2), "end": _a(4)}}, "content": ["x"]},
        {"path": "a.ts", "loc": {"range": {"pos": _a(3), "end": _a(5)}}, "content": ["y"]},
    ]
    with pytest.raises(ToolError, match="overlap"):
        await _run(cwd, "edit", {"edits": overlapping})
    same = {"path": "a.ts", "loc": {"range": {"pos": _a(2), "end": _a(2)}}, "content": [A_TS[1]]}
    with pytest.raises(ToolError, match=r"No changes made to a\.ts"):
        await _run(cwd, "edit", {"edits": [same]})
    with pytest.raises(ToolError, match=r"edits\[0\]: loc must be"):
        await _run(cwd, "edit", {"edits": [{"path": "a.ts", "loc": {"after": _a(2)}, "content": ["x"]}]})


async def test_files_are_created_deleted_and_moved(tmp_path: Path) -> None:
    result = await _run(
        tmp_path, "edit", {"edits": [{"path": "new/b.py", "loc": "append", "content": ["x = 1"]}]}
    )
    assert (tmp_path / "new/b.py").read_text() == "x = 1\n"
    assert _text(result).startswith("Created new/b.py") and result.get("details", {})["op"] == "create"
    await _run(tmp_path, "edit", {"edits": [{"path": "new/b.py", "move": "c.py"}]})
    assert not (tmp_path / "new/b.py").exists() and (tmp_path / "c.py").read_text() == "x = 1\n"
    result = await _run(tmp_path, "edit", {"edits": [{"path": "c.py", "delete": True}]})
    assert not (tmp_path / "c.py").exists() and _text(result) == "Deleted c.py"
    with pytest.raises(ToolError, match=r"File not found: d\.py"):
        await _run(
            tmp_path, "edit", {"edits": [{"path": "d.py", "loc": {"append": "1#ZZ"}, "content": ["x"]}]}
        )


async def test_crlf_and_bom_survive_and_copied_prefixes_are_stripped(tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\n".encode())
    content = [f"{anchor(1, 'uno')}:uno"]
    await _run(
        tmp_path,
        "edit",
        {
            "edits": [
                {
                    "path": "w.txt",
                    "loc": {"range": {"pos": anchor(1, "one"), "end": anchor(1, "one")}},
                    "content": content,
                }
            ]
        },
    )
    assert path.read_bytes() == "\ufeffuno\r\ntwo\r\n".encode()
    copied = f"{anchor(1, 'a')}:a\n{anchor(2, 'b')}:b\n"
    await _run(tmp_path, "write", {"path": "v.txt", "content": copied})
    assert (tmp_path / "v.txt").read_text() == "a\nb\n"


async def test_replace_mode_is_kept_behind_the_setting(a_ts: Path) -> None:
    tools = {
        t.name: t
        for t in create_coding_tools(a_ts.parent, ["read", "edit"], ToolOptions(edit_mode="replace"))
    }
    assert "old_text" in str(tools["edit"].parameters)
    read = await tools["read"].execute("c1", {"path": "a.ts", "sel": "L2-L2"}, None, lambda _: None)
    assert _text(read) == "const timeout = 5000;"
    numbered = create_coding_tools(
        a_ts.parent, ["read"], ToolOptions(edit_mode="replace", read_line_numbers=True)
    )[0]
    assert _text(await numbered.execute("c1", {"path": "a.ts", "sel": "L2-L2"}, None, lambda _: None)) == (
        "2:const timeout = 5000;"
    )


async def test_grep_shows_anchors_in_hashline_mode(a_ts: Path) -> None:
    grep = create_coding_tools(a_ts.parent, ["grep"], ToolOptions())[0]
    result = await grep.execute("c1", {"pattern": "timeout", "pre": 0, "post": 1}, None, lambda _: None)
    assert _text(result).split("\n") == [f"a.ts:{_a(2)}:{A_TS[1]}", f"a.ts-{_a(3)}-{A_TS[2]}"]


async def test_notebooks_are_left_to_the_notebook_tool(tmp_path: Path) -> None:
    (tmp_path / "n.ipynb").write_text('{"cells": []}\n')
    with pytest.raises(ToolError, match="use the notebook tool"):
        await _run(tmp_path, "edit", {"edits": [{"path": "n.ipynb", "loc": "append", "content": ["x"]}]})


async def test_an_edit_with_made_up_anchors_is_answered_with_the_file_s_current_anchors(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.json").write_text('{\n  "port": 8080\n}\n')
    guessed = {"path": "config.json", "loc": {"range": {"pos": "2", "end": "2"}}, "content": '  "port": 9090'}
    with pytest.raises(ToolError) as info:
        await _run(tmp_path, "edit", {"edits": [guessed]})
    listing = "\n".join(
        anchor(n, line) + ":" + line for n, line in enumerate(["{", '  "port": 8080', "}"], 1)
    )
    assert str(info.value).endswith(f"The current anchors of config.json are:\n{listing}")
    (tmp_path / "long.txt").write_text("x\n" * 100)
    with pytest.raises(ToolError, match=r"Read long\.txt to get its anchors\.$"):
        await _run(tmp_path, "edit", {"edits": [{**guessed, "path": "long.txt"}]})


async def test_inserts_at_one_place_come_out_in_call_order(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("one\ntwo\nthree\n")
    two = anchor(2, "two")
    for key, expected in (("append", "one\ntwo\nA\nB\nthree\n"), ("prepend", "one\nA\nB\ntwo\nthree\n")):
        path.write_text("one\ntwo\nthree\n")
        edits = [
            {"path": "t.txt", "loc": {key: two}, "content": ["A"]},
            {"path": "t.txt", "loc": {key: two}, "content": ["B"]},
        ]
        await _run(tmp_path, "edit", {"edits": edits})
        assert path.read_text() == expected, key
    path.write_text("one\n")
    edits = [
        {"path": "t.txt", "loc": "prepend", "content": ["A"]},
        {"path": "t.txt", "loc": "prepend", "content": ["B"]},
    ]
    await _run(tmp_path, "edit", {"edits": edits})
    assert path.read_text() == "A\nB\none\n"


async def test_an_anchored_insert_of_no_lines_inserts_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("one\ntwo\n")
    for content in ([], None):
        edits = [
            {"path": "t.txt", "loc": {"append": anchor(1, "one")}, "content": content},
            {"path": "t.txt", "loc": "append", "content": ["three"]},
        ]
        await _run(tmp_path, "edit", {"edits": edits})
        assert path.read_text() == "one\ntwo\nthree\n"
        path.write_text("one\ntwo\n")


async def test_a_content_item_holding_newlines_is_several_lines_with_their_own_preview_anchors(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.txt"
    path.write_text("one\ntwo\n")
    one = anchor(1, "one")
    result = await _run(
        tmp_path,
        "edit",
        {"edits": [{"path": "t.txt", "loc": {"range": {"pos": one, "end": one}}, "content": ["p\nq", "r"]}]},
    )
    assert path.read_text() == "p\nq\nr\ntwo\n"
    text = _text(result)
    assert f"+ {anchor(1, 'p')}:p\n+ {anchor(2, 'q')}:q\n+ {anchor(3, 'r')}:r" in text
    assert "Changes: +3 -1" in text
