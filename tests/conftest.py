"""Shared fixtures: the fake LLM server, an isolated agent dir, and a loopback-only network guard."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from xcsh.testing.fake_llm import FakeLLM

PROVIDER_KEY_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "CEREBRAS_API_KEY",
)

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        host = address[0]
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            ip = ipaddress.ip_address(socket.gethostbyname(host)) if host != "localhost" else None
        if ip is not None and not ip.is_loopback:
            raise ConnectionRefusedError(f"test network guard: non-loopback address {host} refused")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _network_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a non-loopback address (a process edge, not our own code)."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture(autouse=True)
def _outbound_frames_checked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """With ``XCSH_RPC_CHECK_FRAMES=1`` (as scripts/test runs), a frame off the protocol schema fails the test."""
    if os.environ.get("XCSH_RPC_CHECK_FRAMES") != "1" or request.node.get_closest_marker("frames_off_schema"):
        yield
        return
    log = request.getfixturevalue("tmp_path") / "frame-violations.log"
    monkeypatch.setenv("XCSH_RPC_CHECK_FRAMES_LOG", str(log))
    yield
    if log.exists() and log.read_text(encoding="utf-8"):
        pytest.fail("outbound frames off the protocol schema:\n" + log.read_text(encoding="utf-8")[:4000])


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A started fake LLM server; fails the test if scripted steps are left unconsumed."""
    server = FakeLLM().start()
    try:
        yield server
        server.assert_complete()
    finally:
        server.stop()


WIRE_BASE_PATHS = {
    "openai-completions": "/v1",
    "anthropic-messages": "",
    "openai-responses": "/v1",
    "google-generative-ai": "/v1beta",
}


def wire_model(base_url: str, api: str, **fields: Any) -> Any:
    """A catalogue entry for ``api`` served at ``base_url`` (its base path appended); ``fields`` override."""
    return {
        "id": "m",
        "name": "m",
        "api": api,
        "provider": "fake",
        "baseUrl": base_url + WIRE_BASE_PATHS[api],
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 1000,
        "maxTokens": 100,
        **fields,
    }


def fake_model(fake: FakeLLM) -> Any:
    """``fake/fake-model`` of :func:`fake_models_yml` as a catalogue entry, served by ``fake``."""
    return wire_model(
        fake.base_url,
        "openai-completions",
        id="fake-model",
        name="fake-model",
        contextWindow=128000,
        maxTokens=4096,
    )


def fake_models_yml(base_url: str, *, extra_models: str = "", api: str = "openai-completions") -> str:
    return f"""providers:
  fake:
    baseUrl: {base_url}{WIRE_BASE_PATHS[api]}
    apiKey: test-key
    api: {api}
    models:
      - id: fake-model
        reasoning: false
        contextWindow: 128000
        maxTokens: 4096
      - id: fake-reasoner
        reasoning: true
        thinking: {{ minLevel: minimal, maxLevel: high, mode: effort }}
        contextWindow: 128000
        maxTokens: 4096
{extra_models}"""


class Workspace:
    """The scenario harness's directories and environment (scenarios.md §0.1)."""

    def __init__(self, root: Path, base_url: str, api: str = "openai-completions") -> None:
        self.api = api
        self.agent = root / "agent"
        self.proj = root / "proj"
        self.sess = root / "sessions"
        for d in (self.agent, self.proj, self.sess):
            d.mkdir(parents=True, exist_ok=True)
        (self.agent / "models.yml").write_text(fake_models_yml(base_url, api=api))
        self.env = {
            k: v for k, v in os.environ.items() if k not in PROVIDER_KEY_VARS and k != "PI_RPC_EMIT_TITLE"
        }
        self.env["PI_CODING_AGENT_DIR"] = str(self.agent)
        self.env["PYTHONUNBUFFERED"] = "1"
        # the embedded local model may be installed in the dev venv; scenarios assume only "fake"
        self.env["XCSH_DISABLED_PROVIDERS"] = "local"
        src = str(Path(__file__).resolve().parents[1] / "src")
        # no empty entry: "src:" would put the working directory on the process's sys.path
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in (src, self.env.get("PYTHONPATH")) if p)

    def config(self, text: str) -> None:
        (self.agent / "config.yml").write_text(text)

    @property
    def python(self) -> str:
        return sys.executable


@pytest.fixture
def workspace(request: pytest.FixtureRequest, tmp_path: Path, fake_llm: FakeLLM) -> Workspace:
    """The scenario workspace; parametrize indirectly with an api name to run on another wire."""
    return Workspace(tmp_path, fake_llm.base_url, getattr(request, "param", "openai-completions"))


def user_texts(request_json: dict[str, Any]) -> list[str]:
    """The user-side texts of a recorded request, whatever the wire (OpenAI chat or Anthropic)."""
    texts: list[str] = []
    for message in request_json.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                texts.append(block["text"])
    return texts


def roles(request_json: dict[str, Any]) -> list[str]:
    """Roles of a recorded request's messages, without OpenAI's leading system message."""
    return [
        m["role"] for m in request_json.get("messages", []) if m.get("role") not in ("system", "developer")
    ]


BASE_ARGS = ["--model", "fake/fake-model", "--no-tools", "--no-session"]


def tool_defs(request_json: dict[str, Any]) -> list[dict[str, Any]]:
    """``[{name, parameters}]`` of a recorded request's tools, whatever the wire."""
    out = []
    for tool in request_json.get("tools") or []:
        if "function" in tool:
            out.append({"name": tool["function"]["name"], "parameters": tool["function"]["parameters"]})
        else:
            out.append({"name": tool["name"], "parameters": tool.get("input_schema", {})})
    return out


def tool_results(request_json: dict[str, Any]) -> dict[str, str]:
    """Tool-call id → result text of a recorded request, whatever the wire."""
    out: dict[str, str] = {}
    for message in request_json.get("messages", []):
        if message.get("role") == "tool":
            out[message["tool_call_id"]] = message["content"]
        elif message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        content = "".join(b.get("text", "") for b in content if b.get("type") == "text")
                    out[block["tool_use_id"]] = content
    return out


def _well_formed(frame: dict[str, Any], payload: str) -> bool:
    body = frame.get(payload)
    return (
        isinstance(frame.get("id"), str) and isinstance(body, dict) and isinstance(body.get("content"), list)
    )


def expected_answers(line: bytes) -> int:
    """How many responses the protocol requires for ``line`` (rpc-protocol §1.2, §3, §4)."""
    try:
        text = line.removesuffix(b"\r").decode("utf-8")
    except UnicodeDecodeError:
        return 1
    if not text.strip():
        return 0
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return 1
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "extension_ui_response":
            return 0
        if kind == "host_tool_result" and _well_formed(value, "result"):
            return 0
        if kind == "host_tool_update" and _well_formed(value, "partialResult"):
            return 0
    return 1


async def frame_containing(stdout: asyncio.StreamReader, wanted: bytes) -> dict[str, object]:
    """The next stdout line of a spawned xcsh containing ``wanted``, parsed (earlier lines skipped)."""
    while True:
        line = await stdout.readline()
        if not line:
            raise ConnectionError("xcsh exited before the expected frame")
        if wanted in line:
            frame: dict[str, object] = json.loads(line)
            return frame


def json_values(*, allow_nan: bool) -> Any:
    """A hypothesis strategy of JSON-like values: big integers, floats (NaN and infinities when
    ``allow_nan``), texts with lone surrogates, nested lists and objects."""
    from hypothesis import strategies as st

    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.integers(min_value=-(10**60), max_value=10**60)
        | st.floats(allow_nan=allow_nan, allow_infinity=allow_nan)
        | st.text()
        | st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters())
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=20,
    )
