"""Secrets stay secret: a run that tries hard to print the keys leaves them in no frame, file or export."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from coding.tools.as_user import nobody_python
from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

PROXY_KEY = "sk-proxy-7f3a9c1e5b2d4f60"
ANTHROPIC_KEY = "sk-ant-0a1b2c3d4e5f6a7b8c9d"
HEADER_TOKEN = "hdr-token-9e8d7c6b5a4f"
SECRETS = (PROXY_KEY, ANTHROPIC_KEY, HEADER_TOKEN)
PRINT_EVERYTHING = "env; echo key=$FAKE_PROXY_KEY ant=$ANTHROPIC_API_KEY"


def _setup(ws: Workspace, base_url: str, *, user_config: str = "") -> None:
    (ws.agent / "models.yml").write_text(
        f"""providers:
  fake:
    baseUrl: {base_url}/v1
    apiKey: FAKE_PROXY_KEY
    api: openai-completions
    headers:
      X-Token: {HEADER_TOKEN}
    models:
      - id: fake-model
      - id: other-model
"""
    )
    ws.env["FAKE_PROXY_KEY"] = PROXY_KEY
    ws.env["ANTHROPIC_API_KEY"] = ANTHROPIC_KEY
    if user_config:
        ws.config(user_config)


def _args(ws: Workspace) -> list[str]:
    return [
        "--model",
        "fake/fake-model",
        "--models",
        "fake/*",
        "--tools",
        "bash",
        "--session-dir",
        str(ws.sess),
    ]


async def test_no_key_or_header_value_appears_in_any_frame_session_file_or_export(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _setup(workspace, fake_llm.base_url)
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": PRINT_EVERYTHING})), script.text("done"))
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as client:
        frames = await client.prompt_and_wait("print every secret you can find")
        user_bash = await client.bash("env; echo key=$FAKE_PROXY_KEY")
        state = await client.get_state()
        models = await client.get_available_models()
        switched = await client.set_model("fake", "other-model")
        cycled = await client.cycle_model()
        exported = workspace.proj / await client.export_html("out/session.html")
    tool_output = next(f for f in frames if f["type"] == "tool_execution_end")["result"]["content"][0]["text"]
    assert "key= ant=" in tool_output and "PATH=" in tool_output  # the command ran, without the keys
    assert "key=\n" in user_bash["output"] or user_bash["output"].rstrip().endswith("key=")
    assert state["model"]["headers"] == {"X-Token": "[redacted]"}
    fakes = [m for m in models if m["provider"] == "fake"]
    assert len(fakes) == 2 and all(m["headers"] == {"X-Token": "[redacted]"} for m in fakes)
    assert switched["headers"] == {"X-Token": "[redacted]"}
    assert cycled is not None and cycled["model"]["headers"] == {"X-Token": "[redacted]"}
    # the provider still got the real key and header
    assert fake_llm.requests[0].headers["authorization"] == f"Bearer {PROXY_KEY}"
    assert fake_llm.requests[0].headers["x-token"] == HEADER_TOKEN
    session_file = Path(state["sessionFile"])
    assert client.frames.first == 0  # the client kept every frame of the run
    places = {
        "frames": json.dumps(list(client.frames), ensure_ascii=False),
        "session file": session_file.read_text(),
        "export": exported.read_text(),
        "requests": "".join(r.body.decode("utf-8", "replace") for r in fake_llm.requests),
    }
    for blob in (workspace.agent / "blobs").glob("*") if (workspace.agent / "blobs").exists() else []:
        places[f"blob {blob.name}"] = blob.read_bytes().decode("utf-8", "replace")
    for where, text in places.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked into the {where}"


async def test_a_user_setting_passes_provider_keys_to_tools_but_a_project_setting_cannot(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _setup(workspace, fake_llm.base_url)
    (workspace.proj / ".xcsh").mkdir()
    (workspace.proj / ".xcsh" / "config.yml").write_text("tools:\n  passProviderKeys: true\n")
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as client:
        from_project = await client.bash("echo key=$FAKE_PROXY_KEY")
    workspace.config("tools:\n  passProviderKeys: true\n")
    async with RpcClient.spawn(args=_args(workspace), cwd=workspace.proj, env=workspace.env) as client:
        from_user = await client.bash("echo key=$FAKE_PROXY_KEY")
    assert from_project["output"].strip() == "key="
    assert from_user["output"].strip() == f"key={PROXY_KEY}"


CLI_KEY = "sk-cli-3b5d7f9a1c2e4d6f"
READ_PARENT = (
    "echo parent=$(cat /proc/$PPID/comm); tr '\\0' '\\n' </proc/$PPID/environ; "
    "tr '\\0' ' ' </proc/$PPID/cmdline; echo; echo done"
)


def _unprivileged(ws: Workspace, tmp: Path) -> list[str] | None:
    """Run the agent as ``nobody`` when the tests run as root (root reads every process's
    ``/proc`` files whatever the flag): a command for :meth:`RpcClient.spawn`, or None when
    this machine cannot (no ``setpriv``, no system Python of our version that can see our code).
    Not root: None, and the agent runs as the test's own user."""
    import subprocess
    import sys
    import sysconfig

    if os.geteuid() != 0:
        return None
    command = [
        *nobody_python("running as root without setpriv or /usr/bin/python3: root reads any /proc file"),
        "-P",
    ]
    for directory in (tmp, ws.agent, ws.proj, ws.sess, tmp / "home"):
        directory.mkdir(parents=True, exist_ok=True)
        directory.chmod(0o777)
    src = ws.env["PYTHONPATH"]
    ws.env["PYTHONPATH"] = os.pathsep.join(
        [src, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    )
    ws.env["HOME"] = str(tmp / "home")
    probe = subprocess.run(
        [
            *command,
            "-c",
            f"import sys, xcsh.cli.main; sys.exit(sys.version_info[:2] != {sys.version_info[:2]})",
        ],
        env=ws.env,
        cwd=ws.proj,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("running as root and cannot run the agent as nobody here: root reads any /proc file")
    return [*command, "-m", "xcsh"]


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="Linux /proc only")
async def test_a_tool_command_cannot_read_the_keys_from_the_agents_proc_environ_or_cmdline(
    fake_llm: FakeLLM,
) -> None:
    # a root of our own (pytest's base folder is 0700: "nobody" could not enter it)
    root = Path(tempfile.mkdtemp(prefix="xcsh-dumpable-"))
    try:
        root.chmod(0o711)
        workspace = Workspace(root / "ws", fake_llm.base_url)
        _setup(workspace, fake_llm.base_url)
        command = _unprivileged(workspace, root / "ws")
        fake_llm.script(script.tool_calls(("b1", "bash", {"command": READ_PARENT})), script.text("done"))
        args = [*_args(workspace), "--api-key", CLI_KEY]
        async with RpcClient.spawn(
            args=args, cwd=workspace.proj, env=workspace.env, command=command
        ) as client:
            frames = await client.prompt_and_wait("read your parent's environment")
            typed = (await client.bash(READ_PARENT))["output"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result = next(f for f in frames if f["type"] == "tool_execution_end")["result"]["content"][0]["text"]
    for output in (result, typed):
        assert "parent=python" in output and "done" in output  # the commands ran, as the agent's children
        assert "Permission denied" in output
        for secret in (*SECRETS, CLI_KEY):
            assert secret not in output


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (from /proc/<pid>/stat)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                found.append(int(entry))
    return found


async def _environ_of_blocked_rg(client: RpcClient, fifo: Path) -> str:
    """The environment of the agent's ``rg`` child, blocked opening ``fifo``; then lets it go on."""
    opening = asyncio.ensure_future(asyncio.to_thread(os.open, fifo, os.O_WRONLY))
    try:
        writer = await asyncio.wait_for(asyncio.shield(opening), timeout=60)  # rg opened it too
    except TimeoutError:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # frees the blocked open
        os.close(await asyncio.wait_for(opening, timeout=10))
        os.close(reader)
        seen = [(f.get("type"), f.get("toolName")) for f in client.frames]
        raise AssertionError(f"no rg opened {fifo} within 60 s; frames so far: {seen}") from None
    try:
        children = _children(client.process.pid)
        rg = [pid for pid in children if b"rg" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]]
        return Path(f"/proc/{rg[0]}/environ").read_bytes().decode()
    finally:
        os.close(writer)  # an empty ignore file: rg goes on


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
async def test_the_ripgrep_processes_of_grep_and_find_get_no_provider_key(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # rg reads the ``.rgignore`` of each directory it walks; as a FIFO it holds rg in ``open``
    # until the test opens the other end, so its environment can be read while it runs (a
    # process's environ is readable by its user once it has exec'ed)
    _setup(workspace, fake_llm.base_url)
    workspace.env["OPENAI_API_KEY"] = PROXY_KEY + "-openai"
    (workspace.proj / "a.txt").write_text("a zebra\n")
    os.mkfifo(workspace.proj / ".rgignore")
    fake_llm.script(
        script.tool_calls(("g1", "grep", {"pattern": "zebra"})),
        script.tool_calls(("f1", "find", {"pattern": "*.txt"})),
        script.text("done"),
    )
    args = ["--model", "fake/fake-model", "--tools", "grep,find", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        await client.prompt("search")
        environs = [await _environ_of_blocked_rg(client, workspace.proj / ".rgignore")]
        environs.append(await _environ_of_blocked_rg(client, workspace.proj / ".rgignore"))
        frames = await client.wait_for_idle(timeout=60)
    for environ in environs:
        assert "PATH=" in environ  # the environment was read
        for secret in (PROXY_KEY, ANTHROPIC_KEY, PROXY_KEY + "-openai"):
            assert secret not in environ
    results = [f["result"]["content"][0]["text"] for f in frames if f["type"] == "tool_execution_end"]
    assert "a zebra" in results[0] and "a.txt" in results[1]


async def test_base_url_credentials_appear_in_no_model_frame_and_no_provider_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the reviewer's URLs: a user name alone as the token, a query value under a name that does
    # not look like a key; api-version stays readable
    host = fake_llm.base_url.removeprefix("http://")
    shown = f"http://USERTOKEN1@{host}/v1?code=QSECRET1&api-key=QSECRET4&api-version=2024-06-01"
    (workspace.agent / "models.yml").write_text(
        f"""providers:
  fake:
    baseUrl: http://USERTOKEN2:PASSWORD2@{host}/v1
    apiKey: FAKE_PROXY_KEY
    api: openai-completions
    models:
      - id: fake-model
  other:
    baseUrl: {shown}
    apiKey: FAKE_PROXY_KEY
    api: openai-completions
    models:
      - id: other-model
"""
    )
    workspace.env["FAKE_PROXY_KEY"] = PROXY_KEY
    # a provider that echoes the credentials it was given in its error text
    fake_llm.script(script.http_error(400, "bad request from USERTOKEN2 with PASSWORD2"))
    args = ["--model", "fake/fake-model", "--models", "fake/*,other/*", "--no-tools", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        state = await client.get_state()
        models = await client.get_available_models()
        frames = await client.prompt_and_wait("hi")
    everything = json.dumps([state, models, frames])
    for secret in ("USERTOKEN1", "USERTOKEN2", "PASSWORD2", "QSECRET1", "QSECRET4"):
        assert secret not in everything
    assert state["model"]["baseUrl"] == f"http://[redacted]@{host}/v1"
    other = next(m for m in models if m["provider"] == "other")
    assert (
        other["baseUrl"]
        == f"http://[redacted]@{host}/v1?code=[redacted]&api-key=[redacted]&api-version=2024-06-01"
    )
    assert "bad request from [redacted] with [redacted]" in everything  # the error itself is shown
