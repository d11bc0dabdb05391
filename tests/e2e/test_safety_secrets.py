"""Secrets stay secret: a run that tries hard to print the keys leaves them in no frame, file or export."""

from __future__ import annotations

import json
from pathlib import Path

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
