"""The reference's extra tools behind the RPC process: the fake model calls each one and reads its result."""

from __future__ import annotations

import sqlite3
import zipfile
from pathlib import Path

from coding.tools.tool_fixtures import minimal_pdf, pages  # noqa: F401  (pages is a fixture)
from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _tool_texts(fake_llm: FakeLLM, request: int) -> list[str]:
    return [m["content"] for m in fake_llm.requests[request].json["messages"] if m["role"] == "tool"]


async def test_calc_notebook_ast_and_rich_reads_reach_the_model(
    workspace: Workspace,
    fake_llm: FakeLLM,
    pages: str,  # noqa: F811
) -> None:
    proj = workspace.proj
    (proj / "m.py").write_text("import os\nprint(os.getcwd())\n")
    (proj / "n.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "execution_count": null, "id": "c0", "metadata": {}, "outputs": [], '
        '"source": "a = 1"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    with zipfile.ZipFile(proj / "pkg.zip", "w") as archive:
        archive.writestr("inner/data.txt", "zipped text\n")
    db = sqlite3.connect(proj / "app.sqlite")
    db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT)")
    db.execute("INSERT INTO items (label) VALUES ('first')")
    db.commit()
    db.close()
    (proj / "doc.pdf").write_bytes(minimal_pdf("Quarterly report"))
    steps: list[tuple[str, str, dict[str, object]]] = [
        ("calc", "calc", {"calculations": [{"expression": "6 * 7", "prefix": "answer: ", "suffix": ""}]}),
        (
            "nb",
            "notebook",
            {"action": "insert", "notebook_path": "n.ipynb", "cell_index": 1, "content": "b = 2"},
        ),
        ("ag", "ast_grep", {"pat": ["print($X)"]}),
        ("ae", "ast_edit", {"ops": [{"pat": "print($X)", "out": "log($X)"}]}),
        ("rz", "read", {"path": "pkg.zip:inner/data.txt"}),
        ("rs", "read", {"path": "app.sqlite:items:1"}),
        ("rp", "read", {"path": "doc.pdf"}),
        ("ru", "read", {"path": f"{pages}/page"}),
        ("rn", "read", {"path": "n.ipynb"}),
    ]
    fake_llm.script(*[script.tool_calls(step) for step in steps], script.text("all done"))
    args = ["--model", "fake/fake-model", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=proj, env=workspace.env) as client:
        await client.prompt_and_wait("exercise the tools")
    results = [_tool_texts(fake_llm, i + 1)[-1] for i in range(len(steps))]
    assert results[0] == "answer: 42"
    assert results[1] == "Inserted code cell at position 1. Notebook now has 2 cells."
    assert results[2].startswith("# m.py\n2#") and "meta: X=os.getcwd()" in results[2]
    assert "Applied 1 replacement in 1 file." in results[3]
    assert (proj / "m.py").read_text() == "import os\nlog(os.getcwd())\n"
    assert results[4] == "zipped text"
    assert results[5] == "id: 1\nlabel: first"
    assert results[6] == "--- page 1 ---\nQuarterly report"
    assert results[7].endswith("# Title\n\nSome **bold** text.")
    assert results[8] == "# %% [code] cell 0\na = 1\n\n# %% [code] cell 1\nb = 2"


async def test_default_tools_match_the_reference_and_ls_is_opt_in(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-session"], cwd=workspace.proj, env=workspace.env
    ) as client:
        default = [t["name"] for t in (await client.get_state())["dumpTools"]]
    assert "ls" not in default
    assert {
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ast_grep",
        "ast_edit",
        "notebook",
        "calc",
    } <= set(default)
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "ls,grep,calc"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        chosen = [t["name"] for t in (await client.get_state())["dumpTools"]]
    assert chosen == ["ls", "grep", "calc"]


SITE_WITHOUT_NBFORMAT = "import sys\nsys.modules['nbformat'] = None\n"


async def test_a_missing_optional_library_is_a_tool_error_naming_the_extra(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE_WITHOUT_NBFORMAT)
    env = dict(workspace.env)
    env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"
    (workspace.proj / "n.ipynb").write_text(
        '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    call = {"action": "insert", "notebook_path": "n.ipynb", "cell_index": 0, "content": "x"}
    fake_llm.script(
        script.tool_calls(("nb", "notebook", call)),
        script.tool_calls(
            ("c", "calc", {"calculations": [{"expression": "1+1", "prefix": "", "suffix": ""}]})
        ),
        script.text("ok"),
    )
    async with RpcClient.spawn(
        args=["--model", "fake/fake-model", "--no-session"], cwd=workspace.proj, env=env
    ) as client:
        frames = await client.prompt_and_wait("insert a cell")
    ends = [f for f in frames if f["type"] == "tool_execution_end"]
    assert ends[0]["isError"] is True and ends[1]["isError"] is False
    error = _tool_texts(fake_llm, 1)[-1]
    assert "nbformat" in error and "pip install 'xcsh[tools]'" in error
    assert _tool_texts(fake_llm, 2)[-1] == "2"
