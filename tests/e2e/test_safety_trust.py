"""A repository's own code runs only with consent: untrusted project extensions and protected
project settings are skipped with one stderr line; ``--trust`` (or ``trust.projects``) allows them,
and a file the agent writes under ``.xcsh/`` afterwards is not trusted by that act."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Importing the extension leaves a marker file next to the project: proof that its code ran.
MARKER_EXT = """\
from pathlib import Path

(Path(__file__).resolve().parents[2] / "{name}.ran").write_text("ran")


def setup(xcsh):
    pass
"""
PRINT_ARGS = ["--model", "fake/fake-model", "--no-tools", "--no-session", "-p", "hi?"]


def _add_extension(ws: Workspace, name: str) -> None:
    path = ws.proj / ".xcsh" / "extensions" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MARKER_EXT.format(name=name))


def _print(ws: Workspace, fake_llm: FakeLLM, *extra: str) -> subprocess.CompletedProcess[str]:
    fake_llm.script(script.text("ok"))
    return subprocess.run(
        [sys.executable, "-m", "xcsh", *extra, *PRINT_ARGS],
        cwd=ws.proj,
        env=ws.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _skip_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "skipped project code" in line]


async def test_an_untrusted_extension_does_not_run_runs_after_trust_and_planted_code_lapses_the_trust(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _add_extension(workspace, "guard")
    untrusted = _print(workspace, fake_llm)
    assert untrusted.returncode == 0 and untrusted.stdout == "ok\n"
    assert not (workspace.proj / "guard.ran").exists()
    [line] = _skip_lines(untrusted.stderr)
    assert f"in {workspace.proj.resolve()} (not trusted): .xcsh/extensions/guard.py." in line
    assert "--trust" in line and "trust.projects" in line

    trusted = _print(workspace, fake_llm, "--trust")
    assert trusted.returncode == 0 and _skip_lines(trusted.stderr) == []
    assert (workspace.proj / "guard.ran").read_text() == "ran"
    store = workspace.agent / "trust.json"
    assert store.stat().st_mode & 0o777 == 0o600
    assert list(json.loads(store.read_text())["projects"]) == [str(workspace.proj.resolve())]
    (workspace.proj / "guard.ran").unlink()

    # without --trust the stored trust holds while the code is unchanged; in that session a
    # (prompt-injected) model writes a new extension into the trusted project
    planted = MARKER_EXT.format(name="planted")
    fake_llm.script(
        script.tool_calls(("w1", "write", {"path": ".xcsh/extensions/planted.py", "content": planted})),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--tools", "write", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt_and_wait("please add a helper")
    assert (workspace.proj / "guard.ran").exists()
    assert (workspace.proj / ".xcsh" / "extensions" / "planted.py").exists()
    (workspace.proj / "guard.ran").unlink()

    after = _print(workspace, fake_llm)  # the planted file is not trusted by that act
    assert not (workspace.proj / "planted.ran").exists()
    assert not (workspace.proj / "guard.ran").exists()  # the whole directory's trust lapsed
    [line] = _skip_lines(after.stderr)
    assert "(changed since it was trusted)" in line
    assert ".xcsh/extensions/guard.py; .xcsh/extensions/planted.py." in line


async def test_rpc_mode_skips_untrusted_code_with_stderr_only_and_trust_projects_allows_it(
    workspace: Workspace,
) -> None:
    _add_extension(workspace, "guard")
    (workspace.proj / ".xcsh" / "config.yml").write_text(
        "steeringMode: all\nbash:\n  environment:\n    FROM_PROJECT: set-by-repo\n"
    )
    args = ["--model", "fake/fake-model", "--no-tools", "--no-session"]

    async def run() -> tuple[str, str, str]:
        client = await RpcClient.start(
            args=args, cwd=workspace.proj, env=workspace.env, stderr=asyncio.subprocess.PIPE
        )
        state = await client.get_state()
        output = (await client.bash("echo from=$FROM_PROJECT"))["output"].strip()
        await client.close()
        assert client.process.stderr is not None
        stderr = (await client.process.stderr.read()).decode()
        return state["steeringMode"], output, stderr

    steering, output, stderr = await run()
    assert not (workspace.proj / "guard.ran").exists()
    assert output == "from="  # the protected setting was ignored
    assert steering == "all"  # harmless project settings still apply
    [line] = _skip_lines(stderr)
    assert ".xcsh/extensions/guard.py; .xcsh/config.yml settings bash.environment.FROM_PROJECT." in line

    workspace.config(f"trust:\n  projects:\n    - {workspace.proj}\n")
    steering, output, stderr = await run()
    assert (workspace.proj / "guard.ran").exists()
    assert output == "from=set-by-repo"
    assert _skip_lines(stderr) == []
