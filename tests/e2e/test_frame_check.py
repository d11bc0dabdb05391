"""The outbound-checking debug switch (XCSH_RPC_CHECK_FRAMES) reports a frame off the schema."""

from __future__ import annotations

from pathlib import Path

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient

# an extension that hands the UI a number where the protocol promises a string
BAD_NOTIFY = """
def setup(xcsh):
    def shout(args, ctx):
        ctx.ui.notify(12345)

    xcsh.register_command("shout", shout, "notify with a number")
"""


async def test_a_frame_off_the_schema_is_reported_on_stderr_and_in_the_log_but_still_written(
    workspace: Workspace, tmp_path: Path
) -> None:
    ext = tmp_path / "bad_notify.py"
    ext.write_text(BAD_NOTIFY)
    log = tmp_path / "violations.log"
    env = {**workspace.env, "XCSH_RPC_CHECK_FRAMES": "1", "XCSH_RPC_CHECK_FRAMES_LOG": str(log)}
    async with RpcClient.spawn(args=[*BASE_ARGS, "-e", str(ext)], cwd=workspace.proj, env=env) as client:
        mark = client.mark()
        await client.prompt("/shout")
        notify = await client.wait_for(lambda f: f.get("method") == "notify", since=mark)
        await client.get_state()
        stderr = client.stderr_tail
    assert notify["message"] == 12345
    report = log.read_text(encoding="utf-8")
    assert "NotifyRequest at /message: 12345 is not of type 'string'" in report
    assert "outbound frame violates the protocol" in stderr


async def test_with_the_switch_on_ordinary_frames_raise_no_report(
    workspace: Workspace, tmp_path: Path
) -> None:
    log = tmp_path / "violations.log"
    env = {**workspace.env, "XCSH_RPC_CHECK_FRAMES": "1", "XCSH_RPC_CHECK_FRAMES_LOG": str(log)}
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=env) as client:
        await client.get_state()
        await client.request({"type": "no_such_command"})
        await client.set_steering_mode("all")
    assert not log.exists()
