"""calc, notebook, ast_grep/ast_edit and read's archives, SQLite, notebooks, PDFs and URLs, on real files."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from coding.tools.tool_fixtures import DRIP_STARTED, minimal_pdf, pages  # noqa: F401  (pages is a fixture)
from xcsh.agent.types import AgentToolResult
from xcsh.ai.abort import AbortController
from xcsh.coding.tools import ToolError, ToolOptions, create_coding_tools
from xcsh.coding.tools.calc import evaluate
from xcsh.coding.tools.errors import ToolAbortedError


async def _run(cwd: Path, name: str, args: dict[str, Any]) -> AgentToolResult:
    tool = create_coding_tools(cwd, [name], ToolOptions())[0]
    return await tool.execute("c1", args, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


def test_calc_evaluates_arithmetic_and_refuses_everything_else() -> None:
    assert evaluate("(17 * 3) / 4") == 12.75
    assert evaluate("0x10 + 0b11 + 0o7") == 26
    assert evaluate("2 ** 100") == 1267650600228229401496703205376
    assert evaluate("sqrt(16) + pi * 0") == 4
    for bad in ("__import__('os')", "(1).__class__", "x + 1", "9 ** 9 ** 9", "1 / 0", ""):
        with pytest.raises(ToolError):
            evaluate(bad)


def test_calc_refuses_integer_results_past_4300_digits_with_a_clear_error() -> None:
    assert len(str(evaluate("10**4299"))) == 4300
    with pytest.raises(ToolError, match="too large"):
        evaluate("10**5000")
    with pytest.raises(ToolError, match=r"the result has about 6001 digits; at most 4300 can be shown"):
        evaluate("10**3000 * 10**3000")


async def test_calc_prints_each_result_with_prefix_and_suffix(tmp_path: Path) -> None:
    calcs = [
        {"expression": "3 * 4", "prefix": "area = ", "suffix": " m2"},
        {"expression": "0.1 + 0.2", "prefix": "", "suffix": ""},
    ]
    result = await _run(tmp_path, "calc", {"calculations": calcs})
    assert _text(result) == "area = 12 m2\n0.30000000000000004"
    assert result.get("details", {})["results"][0] == {
        "expression": "3 * 4",
        "value": 12,
        "output": "area = 12 m2",
    }
    with pytest.raises(ToolError, match=r"calculations\[0\]"):
        await _run(
            tmp_path, "calc", {"calculations": [{"expression": "open('x')", "prefix": "", "suffix": ""}]}
        )


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1\nprint(x)")]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nbformat.write(nb, str(path))


async def test_notebook_edits_inserts_and_deletes_cells_and_read_shows_them(tmp_path: Path) -> None:
    _notebook(tmp_path / "n.ipynb")
    result = await _run(
        tmp_path,
        "notebook",
        {"action": "edit", "notebook_path": "n.ipynb", "cell_index": 1, "content": "x = 2"},
    )
    assert _text(result) == "Replaced cell 1 (code). Notebook now has 2 cells."
    result = await _run(
        tmp_path,
        "notebook",
        {
            "action": "insert",
            "notebook_path": "n.ipynb",
            "cell_index": 2,
            "content": "Notes",
            "cell_type": "markdown",
        },
    )
    assert _text(result) == "Inserted markdown cell at position 2. Notebook now has 3 cells."
    assert result.get("details", {})["cellSource"] == ["Notes"]
    await _run(tmp_path, "notebook", {"action": "delete", "notebook_path": "n.ipynb", "cell_index": 0})
    shown = _text(await _run(tmp_path, "read", {"path": "n.ipynb"}))
    assert shown.startswith("# %% [code] cell 0\nx = 2\n\n# output:\n1\n\n# %% [markdown] cell 1\nNotes")
    with pytest.raises(ToolError, match=r"out of range \(0-1\)"):
        await _run(tmp_path, "notebook", {"action": "delete", "notebook_path": "n.ipynb", "cell_index": 5})


async def test_ast_grep_finds_calls_by_structure_and_ast_edit_rewrites_them(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f(a, b):\n    print(a,\n          b)\n    return a\n")
    (tmp_path / "b.txt").write_text("print(1)\n")
    result = await _run(tmp_path, "ast_grep", {"pat": ["print($$$ARGS)"]})
    text = _text(result)
    assert text.startswith("# a.py\n2#") and "  meta: ARGS=a,\n          b" in text
    assert result.get("details", {})["matchCount"] == 1 and result.get("details", {})["files"] == ["a.py"]
    none = await _run(tmp_path, "ast_grep", {"pat": ["input($X)"]})
    assert _text(none) == "No matches found" and none.get("isWarning") is True
    edit = await _run(tmp_path, "ast_edit", {"ops": [{"pat": "print($$$ARGS)", "out": "log($$$ARGS)"}]})
    assert "Applied 1 replacement in 1 file." in _text(edit)
    assert (tmp_path / "a.py").read_text() == "def f(a, b):\n    log(a,\n          b)\n    return a\n"


async def test_read_lists_and_opens_zip_and_tar_archives(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("src/main.py", "print('hi')\n")
        archive.writestr("README", "hello\n")
        archive.writestr("bin.dat", b"\x00\x01")
    assert _text(await _run(tmp_path, "read", {"path": "a.zip"})) == "bin.dat (2B)\nREADME (6B)\nsrc/"
    assert _text(await _run(tmp_path, "read", {"path": "a.zip:src/main.py"})) == "print('hi')"
    assert "Cannot read binary archive entry" in _text(
        await _run(tmp_path, "read", {"path": "a.zip:bin.dat"})
    )
    with tarfile.open(tmp_path / "b.tar.gz", "w:gz") as tar:
        data = b"line1\nline2\n"
        info = tarfile.TarInfo("docs/x.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert _text(await _run(tmp_path, "read", {"path": "b.tar.gz:docs"})) == "x.txt (12B)"
    assert _text(await _run(tmp_path, "read", {"path": "b.tar.gz:docs/x.txt", "sel": "L2"})) == "line2"
    with pytest.raises(ToolError, match="not found inside"):
        await _run(tmp_path, "read", {"path": "a.zip:nope"})


async def test_read_shows_sqlite_tables_schema_rows_and_read_only_queries(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "app.db")
    db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    db.executemany("INSERT INTO users (name) VALUES (?)", [(f"user{i}",) for i in range(30)])
    db.commit()
    db.close()
    assert _text(await _run(tmp_path, "read", {"path": "app.db"})) == "users (30 rows)"
    schema = _text(await _run(tmp_path, "read", {"path": "app.db:users"}))
    assert schema.startswith("CREATE TABLE users") and "| 5  | user4 |" in schema
    assert _text(await _run(tmp_path, "read", {"path": "app.db:users:3"})) == "id: 3\nname: user2"
    page = _text(await _run(tmp_path, "read", {"path": "app.db:users?limit=2&offset=1&order=id desc"}))
    assert page.split("\n")[2:4] == ["| 29 | user28 |", "| 28 | user27 |"]
    assert '[27 more rows; use "users?limit=2&offset=3" to continue]' in page
    query = _text(await _run(tmp_path, "read", {"path": "app.db?q=SELECT count(*) AS n FROM users"}))
    assert query == "| n  |\n|----|\n| 30 |"
    with pytest.raises(ToolError, match="read-only"):
        await _run(tmp_path, "read", {"path": "app.db?q=DELETE FROM users"})


async def test_read_extracts_pdf_text(tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(minimal_pdf("Hello PDF world"))
    text = _text(await _run(tmp_path, "read", {"path": "doc.pdf"}))
    assert text == "--- page 1 ---\nHello PDF world"


async def test_read_fetches_urls_as_markdown_with_paging_and_errors(
    tmp_path: Path,
    pages: str,  # noqa: F811
) -> None:
    result = await _run(tmp_path, "read", {"path": f"{pages}/page"})
    text = _text(result)
    assert (
        text == f"URL: {pages}/page\nContent-Type: text/html; charset=utf-8\n\n# Title\n\nSome **bold** text."
    )
    assert result.get("details", {})["kind"] == "url"
    big = _text(await _run(tmp_path, "read", {"path": f"{pages}/big"}))
    assert big.endswith("[Showing lines 1-300 of 403. Use sel=L301 to continue]")
    with pytest.raises(ToolError, match="HTTP 404"):
        await _run(tmp_path, "read", {"path": f"{pages}/missing", "timeout": 5})


async def test_a_url_read_s_timeout_bounds_the_whole_download_and_an_abort_ends_it(
    tmp_path: Path,
    pages: str,  # noqa: F811
) -> None:
    # the page sends a byte every 0.2 s: no single socket read ever waits a second
    with pytest.raises(ToolError, match=r"timed out after 1s"):
        await _run(tmp_path, "read", {"path": f"{pages}/drip", "timeout": 1})
    DRIP_STARTED.clear()
    controller = AbortController()
    tool = create_coding_tools(tmp_path, ["read"], ToolOptions())[0]
    running = asyncio.ensure_future(
        tool.execute("c1", {"path": f"{pages}/drip", "timeout": 45}, controller.signal, lambda _: None)
    )
    assert await asyncio.to_thread(DRIP_STARTED.wait, 10)
    controller.abort()
    with pytest.raises(ToolAbortedError):
        await asyncio.wait_for(running, 10)


def test_tool_schemas_are_json_serialisable(tmp_path: Path) -> None:
    for tool in create_coding_tools(tmp_path):
        json.dumps(tool.parameters)
