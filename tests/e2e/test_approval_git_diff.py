"""An allowed ``git diff``/``git log -p``/``git show`` runs no program a repository's git config
names for a diff (``diff.<driver>.textconv``, ``diff.<driver>.command``, ``diff.external``),
against the real ``xcsh --mode rpc`` process in a trusted project; plain diffs still work."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from test_tool_approval_bypasses import ends, home_of, run_denying

from conftest import Workspace
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _repo_with_diff_programs(proj: Path, marker: Path) -> None:
    """Two commits of three files; ``a.txt`` has a textconv driver and ``b.txt`` an external
    diff driver (each appends to ``marker``), ``c.txt`` none; all three changed in the tree."""
    git = ["git", "-C", str(proj), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    for text in ("one\n", "two\n"):
        for name in ("a.txt", "b.txt", "c.txt"):
            (proj / name).write_text(f"{name} {text}")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", text], check=True)
    for name in ("a.txt", "b.txt", "c.txt"):
        (proj / name).write_text(f"{name} three\n")
    (proj / ".gitattributes").write_text("a.txt diff=conv\nb.txt diff=ext\n")
    subprocess.run([*git, "config", "diff.conv.textconv", f"echo textconv >> {marker}; cat"], check=True)
    subprocess.run([*git, "config", "diff.ext.command", f"echo command >> {marker}; true"], check=True)


def _text(frame: dict[str, Any]) -> str:
    return str(frame["result"]["content"][0]["text"])


async def test_allowed_git_diff_log_and_show_run_no_textconv_or_external_diff_program(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    proj = workspace.proj
    home_of(workspace)
    marker = proj.parent / "marker"
    _repo_with_diff_programs(proj, marker)
    workspace.config(
        f'trust:\n  projects: ["{proj}"]\napprovals:\n  tools: [bash]\n'
        '  allowCommands: ["git diff", "git log", "git show", "git blame"]\n'
    )
    fake_llm.script(
        script.tool_calls(
            ("diff", "bash", {"command": "git diff"}),
            ("log", "bash", {"command": "git log -p -1"}),
            ("show", "bash", {"command": "git show"}),
            ("blame", "bash", {"command": "git blame a.txt"}),
            ("plain", "bash", {"command": "git diff -- c.txt"}),
        ),
        script.text("done"),
    )
    asked, frames = await run_denying(workspace, "bash")
    results = ends(frames)
    assert asked == []
    assert not marker.exists(), marker.read_text()
    # a diff needing the repository's program fails instead of running it
    assert all(results[name]["isError"] is True for name in ("diff", "log", "show", "blame"))
    # a diff no driver is named for works as usual (an empty diff.external broke every git diff)
    assert results["plain"]["isError"] is False
    assert "-c.txt two" in _text(results["plain"]) and "+c.txt three" in _text(results["plain"])
