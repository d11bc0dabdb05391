"""Built-in tools are defined without their implementations; the definitions match what runs them.

``create_coding_tools`` builds each tool from :mod:`xcsh.coding.tools.defs_files` /
``defs_search`` and imports the tool's implementation module on its first call. Each
implementation module's own ``create_*_tool`` builds the same tool eagerly; the two must
agree on everything the model and the hosts see.
"""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.tool import AgentTool
from xcsh.coding.tools import BUILTIN_TOOL_NAMES, IMPLEMENTATIONS, ToolOptions, create_coding_tools
from xcsh.coding.tools.ast_tools import create_ast_edit_tool, create_ast_grep_tool
from xcsh.coding.tools.bash import create_bash_tool
from xcsh.coding.tools.calc import create_calc_tool
from xcsh.coding.tools.edit import create_edit_tool
from xcsh.coding.tools.edit_hashline import create_hashline_edit_tool
from xcsh.coding.tools.find import create_find_tool
from xcsh.coding.tools.grep import create_grep_tool
from xcsh.coding.tools.ls import create_ls_tool
from xcsh.coding.tools.notebook import create_notebook_tool
from xcsh.coding.tools.read import create_read_tool
from xcsh.coding.tools.write import create_write_tool

OPTIONS = [
    ToolOptions(),
    ToolOptions(edit_mode="replace", guard_overwrite=True),
    ToolOptions(edit_mode="replace", read_line_numbers=True),
    ToolOptions(read_hash_lines=False),
]


def _eager(name: str, cwd: Path, options: ToolOptions) -> AgentTool:
    hashline = options.numbering == "hash"
    builders = {
        "read": lambda: create_read_tool(cwd, options.numbering),
        "bash": lambda: create_bash_tool(cwd),
        "edit": lambda: (
            create_edit_tool(cwd, check_syntax=options.guard_overwrite)
            if options.edit_mode == "replace"
            else create_hashline_edit_tool(cwd)
        ),
        "write": lambda: create_write_tool(cwd, guard_overwrite=options.guard_overwrite),
        "grep": lambda: create_grep_tool(cwd, hashline=hashline),
        "find": lambda: create_find_tool(cwd),
        "ls": lambda: create_ls_tool(cwd),
        "ast_grep": lambda: create_ast_grep_tool(cwd, hashline=hashline),
        "ast_edit": lambda: create_ast_edit_tool(cwd),
        "notebook": lambda: create_notebook_tool(cwd),
        "calc": lambda: create_calc_tool(cwd),
    }
    return builders[name]()


def _seen(tool: AgentTool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "parameters": tool.parameters,
        "concurrency": tool.concurrency,
        "abortable": tool.abortable,
        "lenient": tool.lenient,
        "hidden": tool.hidden,
        "meta": tool.meta,
    }


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"{o.edit_mode}-{o.numbering}-{o.guard_overwrite}")
def test_every_lazily_built_tool_shows_what_its_implementation_builds(
    tmp_path: Path, options: ToolOptions
) -> None:
    lazy = create_coding_tools(tmp_path, BUILTIN_TOOL_NAMES, options)
    assert [tool.name for tool in lazy] == list(BUILTIN_TOOL_NAMES)
    for tool in lazy:
        assert _seen(tool) == _seen(_eager(tool.name, tmp_path, options)), tool.name


def test_a_lazily_built_tool_runs_its_implementation_on_the_first_call(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    tools = {t.name: t for t in create_coding_tools(tmp_path, ["read", "write", "calc"], ToolOptions())}

    async def run() -> list[str]:
        written = await tools["write"].execute(
            "c1", {"path": "b.txt", "content": "x\n"}, None, lambda _: None
        )
        read = await tools["read"].execute("c2", {"path": "a.txt"}, None, lambda _: None)
        again = await tools["read"].execute("c3", {"path": "b.txt"}, None, lambda _: None)
        calc = await tools["calc"].execute(
            "c4", {"calculations": [{"expression": "6*7", "prefix": "", "suffix": ""}]}, None, lambda _: None
        )
        return [r["content"][0]["text"] for r in (written, read, again, calc)]  # type: ignore[index]

    written, read, again, calc = asyncio.run(run())
    assert written.startswith("Successfully wrote 2 bytes")
    assert "alpha" in read and "beta" in read
    assert "x" in again
    assert calc == "42"
    assert (tmp_path / "b.txt").read_text() == "x\n"


def test_building_the_tool_list_imports_no_tool_implementation(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from xcsh.coding.tools import create_coding_tools, IMPLEMENTATIONS, "
        "BUILTIN_TOOL_NAMES; create_coding_tools(Path('.'), BUILTIN_TOOL_NAMES); "
        "print(sorted(m for m in IMPLEMENTATIONS if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60, cwd=tmp_path
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_every_listed_implementation_module_exists(module: str) -> None:
    assert importlib.import_module(module).__name__ == module


def test_the_session_python_tool_is_defined_as_its_implementation_builds_it(tmp_path: Path) -> None:
    from coding.session_helpers import fake_session
    from xcsh.coding.tools.kernel import PythonKernel
    from xcsh.coding.tools.python import create_python_tool

    session = fake_session(tmp_path, "http://127.0.0.1:9")  # never contacted
    try:
        lazy = session.tool("python")
        assert lazy is not None
        assert _seen(lazy) == _seen(create_python_tool(tmp_path, PythonKernel(tmp_path)))
    finally:
        session.shutdown()
