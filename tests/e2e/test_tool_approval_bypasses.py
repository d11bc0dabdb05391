"""Tool approvals cannot be bypassed (review 1, H3 a–f), against the real ``xcsh --mode rpc`` process.

The host in these tests records every ``confirm`` and denies it; a call that ran without being
asked shows up as a side effect on disk (every path lives under the test's tmp dir: ``HOME``
is the test's own).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]


def home_of(workspace: Workspace) -> Path:
    home = workspace.proj.parent / "home"
    home.mkdir(exist_ok=True)
    workspace.env["HOME"] = str(home)
    return home


async def run_denying(workspace: Workspace, tools: str, *args: str) -> tuple[list[Frame], list[Frame]]:
    """One prompt through the real process whose host denies every confirm: (confirms, frames)."""
    asked: list[Frame] = []

    async def deny(request: Frame) -> dict[str, Any] | None:
        if request.get("method") != "confirm":
            return None
        asked.append(request)
        return {"confirmed": False}

    spawn_args = ["--model", "fake/fake-model", "--no-session", "--tools", tools, *args]
    async with RpcClient.spawn(args=spawn_args, cwd=workspace.proj, env=workspace.env) as client:
        client.on_ui_request(deny)
        frames = await client.prompt_and_wait("go", timeout=60)
    return asked, frames


def ends(frames: list[Frame]) -> dict[str, Frame]:
    return {f["toolCallId"]: f for f in frames if f["type"] == "tool_execution_end"}


def denied(frame: Frame) -> bool:
    text = frame["result"]["content"][0]["text"]
    return frame["isError"] is True and text.startswith("The user denied this")


async def test_allowed_commands_cannot_be_widened_by_env_or_by_shell_expansion(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """H3 a (``env`` with BASH_ENV) and b (``${x@P}`` runs a substitution without ``$(``)."""
    proj = workspace.proj
    marker = proj.parent / "marker"
    (proj / "evil.sh").write_text(f"echo ran >> {marker}\n")
    # allowCommands apply only in a project the user named trusted (review 5 N2)
    workspace.config(
        f'trust:\n  projects: ["{proj}"]\napprovals:\n  tools: [bash]\n  allowCommands: ["ls"]\n'
    )
    expanding = f"ls ${{x:=\\$\\(touch\\ {marker}2\\)}} ${{x@P}}"
    fake_llm.script(
        script.tool_calls(
            ("ok", "bash", {"command": "ls -a"}),
            ("env", "bash", {"command": "ls", "env": {"BASH_ENV": str(proj / "evil.sh")}}),
            ("expand", "bash", {"command": expanding}),
            ("cwd", "bash", {"command": "ls", "cwd": "/"}),
        ),
        script.text("done"),
    )
    asked, frames = await run_denying(workspace, "bash")
    results = ends(frames)
    assert results["ok"]["isError"] is False and "evil.sh" in results["ok"]["result"]["content"][0]["text"]
    assert all(denied(results[c]) for c in ("env", "expand", "cwd"))
    assert [a["message"].split("\n")[-1] for a in asked] == ["$ ls", f"$ {expanding}", "$ ls"]
    assert not marker.exists() and not Path(f"{marker}2").exists()


async def test_the_dialog_shows_env_cwd_and_the_real_files_diff_and_escapes_control_characters(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """H3 c (what changes the call's behaviour is shown; a terminal host cannot be spoofed) and
    e (a write's diff is against the file it would write: ``~/.bashrc``, not ``<cwd>/~/.bashrc``)."""
    proj, home = workspace.proj, home_of(workspace)
    (home / ".bashrc").write_text("ORIGINAL\n")
    fake_llm.script(
        script.tool_calls(
            ("c1", "bash", {"command": "echo hello", "cwd": "/", "env": {"BASH_ENV": str(proj / "evil.sh")}}),
            ("c2", "bash", {"command": "rm -rf ~/x\r\x1b[2K$ echo safe"}),
            ("c3", "write", {"path": "~/.bashrc", "content": "PWNED\n"}),
        ),
        script.text("done"),
    )
    asked, frames = await run_denying(workspace, "bash,write", "--approve", "bash,write")
    assert [a["message"] for a in asked[:2]] == [
        f"cwd: /\nenv: BASH_ENV={proj / 'evil.sh'}\n$ echo hello",
        "$ rm -rf ~/x\\r\\x1b[2K$ echo safe",
    ]
    assert asked[2]["title"] == f"Allow write to {home}/.bashrc?"
    assert "-ORIGINAL" in asked[2]["message"].split("\n") and "+PWNED" in asked[2]["message"].split("\n")
    assert all(denied(f) for f in ends(frames).values())
    assert (home / ".bashrc").read_text() == "ORIGINAL\n"


async def test_allowed_paths_check_every_path_as_the_tools_resolve_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """H3 d (``~``, ``@``, a symlink out of the repo, ``*`` crossing ``/``, edit's ``move``) and
    e (the diff is against the file that would be written)."""
    proj, home = workspace.proj, home_of(workspace)
    (proj / "docs").mkdir()
    (proj / "docs" / "a.md").write_text("doc\n")
    (home / ".bashrc").write_text("ORIGINAL\n")
    (home / ".profile").write_text("ORIGINAL\n")
    os.symlink(home, proj / "docs" / "cfg")  # a link the repository ships
    workspace.config('approvals:\n  tools: [write, edit]\n  allowPaths: [".", "*.md"]\n')
    fake_llm.script(
        script.tool_calls(("ok", "write", {"path": "docs/ok.md", "content": "fine\n"})),
        script.tool_calls(("tilde", "write", {"path": "~/.bashrc", "content": "PWNED\n"})),
        script.tool_calls(("at", "write", {"path": f"@{home}/at.txt", "content": "PWNED\n"})),
        script.tool_calls(("link", "write", {"path": "docs/cfg/.profile", "content": "PWNED\n"})),
        script.tool_calls(("glob", "write", {"path": f"{home}/abs.md", "content": "PWNED\n"})),
        script.tool_calls(("move", "edit", {"edits": [{"path": "docs/a.md", "move": "~/moved-out.sh"}]})),
        script.text("done"),
    )
    asked, frames = await run_denying(workspace, "write,edit")
    results = ends(frames)
    assert results["ok"]["isError"] is False and (proj / "docs" / "ok.md").read_text() == "fine\n"
    assert all(denied(results[c]) for c in ("tilde", "at", "link", "glob", "move")), json.dumps(results)[
        :2000
    ]
    assert {p.name: p.read_text() for p in home.iterdir() if p.is_file()} == {
        ".bashrc": "ORIGINAL\n",
        ".profile": "ORIGINAL\n",
    }
    assert (proj / "docs" / "a.md").read_text() == "doc\n"
    titles = [a["title"] for a in asked]
    assert titles == [
        f"Allow write to {home}/.bashrc?",
        f"Allow write to {home}/at.txt?",
        f"Allow write to docs/cfg/.profile (→ {home}/.profile)?",
        f"Allow write to {home}/abs.md?",
        f"Allow edit of docs/a.md → {home}/moved-out.sh?",
    ]
    # e: the existing ~/.bashrc is the diff's old side (not a new file under the cwd)
    assert "-ORIGINAL" in asked[0]["message"] and "+PWNED" in asked[0]["message"]


async def test_the_recommended_flag_gates_every_tool_that_runs_code_or_writes(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """H3 f: ``--approve bash,write,edit`` (docs/security.md, docs/acp.md) also asks before
    ``python``, ``ast_edit`` and ``notebook`` run."""
    proj = workspace.proj
    marker = proj.parent / "marker"
    (proj / "a.py").write_text("print('hello')\n")
    notebook = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (proj / "n.ipynb").write_text(json.dumps(notebook))
    before = (proj / "n.ipynb").read_text()
    fake_llm.script(
        script.tool_calls(
            ("py", "python", {"cells": [{"code": f"open({str(marker)!r}, 'w').write('ran')"}]})
        ),
        script.tool_calls(
            ("ast", "ast_edit", {"ops": [{"pat": "print($X)", "out": "exit($X)"}], "path": "a.py"})
        ),
        script.tool_calls(
            (
                "nb",
                "notebook",
                {"action": "insert", "notebook_path": "n.ipynb", "cell_index": 0, "content": "1"},
            )
        ),
        script.text("done"),
    )
    asked, frames = await run_denying(workspace, "python,ast_edit,notebook", "--approve", "bash,write,edit")
    assert [a["title"] for a in asked] == [
        "Allow python?",
        "Allow ast_edit of a.py?",
        "Allow notebook insert in n.ipynb?",
    ]
    assert all(denied(f) for f in ends(frames).values())
    assert not marker.exists()
    assert (proj / "a.py").read_text() == "print('hello')\n" and (proj / "n.ipynb").read_text() == before
