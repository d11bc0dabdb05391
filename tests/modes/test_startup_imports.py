"""The first ``get_state`` answer of ``xcsh --mode rpc`` is built without what only later work needs.

Start-up cost is mostly imports (docs/performance.md, profile 18 onwards), so what a fresh process
imports before it answers is the structural guard; timing is bench/'s business. The process is
spawned with ``python -X importtime`` and every module it imported until it exited (after one
``get_state`` and the end of stdin; warm-up off) is read back from stderr.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import PROVIDER_KEY_VARS, Workspace

# Loaded on first use (or by the idle warm-up), never for the first answer.
LAZY = (
    "yaml",  # config files that changed since the last start; this workspace has none (models.json)
    "tempfile",  # session-dir naming and bash output spills import it when they run
    "secrets",
    "importlib.resources",  # the model catalogue is a plain file beside the package
    "difflib",  # approval prompts' diffs
    "xcsh.ai.errors",  # error classification (its patterns compile on import): on an error, or warm-up
    "xcsh.coding.bash.session",
    "xcsh.coding.bash.capture",
    "xcsh.coding.bash.process",  # the host's bash command: its shell starts on first use
    "xcsh.ai.watchdog",  # started with the first child process group
    "xcsh.agent.loop",  # the agent loop and tool execution: with the first run
    "xcsh.agent.tool_calls",
    "jiter",  # partial JSON of streamed tool arguments
    "jsonschema",  # tool-argument validation: with the first tool call, or the warm-up
    "xcsh.coding.compaction.prune",  # compaction's checks: with the first prompt
    "xcsh.coding.compaction.tokens",
    "xcsh.coding.small_guards",  # a small model's edit guards
    "xcsh.rpc.results",  # the protocol's result types: schema, docs and clients only
    "xcsh.rpc.commands",  # the requests' TypedDicts: the first command with fields is checked
    "xcsh.rpc.validation",
    "dataclasses",  # value classes on the path are msgspec Structs
    "json",  # frames decode with msgspec (json.loads only for what msgspec refuses); sessions write with it
    "xcsh.coding.extensions.api",  # the extension machinery: only for a session with extensions
    "xcsh.coding.extensions.runner",
    "xcsh.coding.extensions.ui",  # the extension UI bridge: only with extensions or approvals on
    "xcsh.modes.rpc.extension_ui",
    "xcsh.ai.prefix_cache",  # the converted-history cache: with the first request
    "xcsh.ai.warm",  # the provider warm-up: once the host is quiet
    "xcsh.coding.file_mentions",  # a prompt's @file mentions
    "xcsh.coding.sessions.loading",  # reading a session file: only to open an existing one
    "xcsh.coding.sessions.migrate",
    "xcsh.coding.sessions.listing",  # finding an existing session (--continue, --session, --fork)
    "xcsh.coding.host_ops",  # the code of get_commands, list_sessions, get_tree …
    # the built-in tools' code: their definitions are in tools/defs_*.py
    "xcsh.coding.tools.read",
    "xcsh.coding.tools.read_sources",
    "xcsh.coding.tools.bash",
    "xcsh.coding.tools.edit",
    "xcsh.coding.tools.edit_hashline",
    "xcsh.coding.tools.write",
    "xcsh.coding.tools.grep",
    "xcsh.coding.tools.find",
    "xcsh.coding.tools.ast_tools",
    "xcsh.coding.tools.notebook",
    "xcsh.coding.tools.calc",
    "xcsh.coding.tools.python",
    "xcsh.coding.tools.kernel",
    "xcsh.coding.subagents.child",  # the task tool's runner
    # the handlers of session, operation and host commands: with their first command
    "xcsh.modes.rpc.commands_session",
    "xcsh.modes.rpc.commands_ops",
    "xcsh.modes.rpc.commands_hosts",
    "xcsh.modes.rpc.frame_check",  # the outbound-checking debug switch, when its variable is set
    "xcsh.coding.trust",  # the trust decision: only for a project with code or protected settings
    "xcsh.coding.ttsr.rules",  # rule parsing: only for a rule file that exists
    "xcsh.coding.events",  # the features' event TypedDicts: only type annotations need them
    "xcsh.coding.sessions.branching",  # --fork and the branch command
    # the wire TypedDicts: the path to the answer names them in annotations (and string casts) only
    "xcsh.agent.types",
    "xcsh.ai.types",
    "xcsh.ai.events",
    "xcsh.coding.sessions.entry_types",
)
# Also lazy when no model that takes images is available (inspect_image's builder needs them).
LAZY_WITHOUT_IMAGE_MODELS = ("xcsh.coding.tools.paths",)  # else with a small model's first read or write
# Must be imported, or the parse below found nothing and the check above proves nothing.
NEEDED = ("xcsh.modes.rpc.server", "xcsh.coding.session", "asyncio", "msgspec")


def _imported(stderr: str) -> set[str]:
    """Module names in ``-X importtime`` output ("import time: self | cumulative | name")."""
    names: set[str] = set()
    for line in stderr.splitlines():
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[-1].strip()
            if name and name != "imported package":
                names.add(name)
    return names


def _first_answer(tmp_path: Path) -> tuple[dict[str, Any], set[str]]:
    agent, project = tmp_path / "agent", tmp_path / "proj"
    agent.mkdir()
    project.mkdir()
    provider = {
        "baseUrl": "http://127.0.0.1:9/v1",  # never contacted: no prompt is sent
        "apiKey": "k",
        "api": "openai-completions",
        "models": [{"id": "fake-model", "contextWindow": 100_000, "maxTokens": 4096, "reasoning": False}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    return _spawn(agent, project)


def _write_fake_models(agent: Path) -> None:
    """The agent dir's models.json: provider ``fake`` on a port nothing listens on (never contacted)."""
    provider = {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k", "api": "openai-completions"}
    provider["models"] = [{"id": "fake-model", "contextWindow": 100_000, "maxTokens": 4096}]
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))


def _start_with_fake_models(tmp_path: Path, extra_env: dict[str, str]) -> tuple[dict[str, Any], set[str]]:
    """:func:`_spawn` without a session file, on the ``fake`` provider of :func:`_write_fake_models`."""
    agent, project = tmp_path / "agent", tmp_path / "proj"
    agent.mkdir()
    project.mkdir()
    _write_fake_models(agent)
    return _spawn(agent, project, extra_env=extra_env, args=("--no-session", "--model", "fake/fake-model"))


def _spawn(
    agent: Path,
    project: Path,
    *,
    extra_env: dict[str, str] | None = None,
    args: tuple[str, ...] = ("--no-session",),
) -> tuple[dict[str, Any], set[str]]:
    """The first ``get_state`` answer of one ``xcsh --mode rpc`` in ``project`` and what it imported."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_KEY_VARS}
    env.pop("XCSH_RPC_CHECK_FRAMES", None)  # the suite's outbound check (on in CI) loads the schema validator
    src = str(Path(__file__).resolve().parents[2] / "src")
    env.update(
        PI_CODING_AGENT_DIR=str(agent),
        XCSH_DISABLED_PROVIDERS="local",
        XCSH_WARM="0",
        PYTHONPATH=src + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.update(extra_env or {})
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "xcsh", "--mode", "rpc", *args],
        input='{"type":"get_state","id":"s1"}\n',
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
        check=True,
    )
    frames = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    answer = next(f for f in frames if f.get("id") == "s1")
    return answer, _imported(done.stderr)


def test_the_first_get_state_answer_is_complete_without_loading_what_only_later_work_needs(
    tmp_path: Path,
) -> None:
    answer, names = _first_answer(tmp_path)
    assert answer["success"] is True
    data = answer["data"]
    assert data["model"]["id"] == "fake-model"
    tools = {tool["name"] for tool in data["dumpTools"]}
    assert {"read", "bash", "edit", "write"} <= tools
    assert all(tool["description"] and tool["parameters"] for tool in data["dumpTools"])
    assert "read" in data["systemPrompt"]
    assert set(NEEDED) <= names, sorted(set(NEEDED) - names)
    assert sorted(name for name in names if name in LAZY + LAZY_WITHOUT_IMAGE_MODELS) == []


def test_with_the_local_provider_on_as_by_default_the_first_answer_loads_no_wire_types(
    tmp_path: Path,
) -> None:
    # asking whether any available model takes images looked the keyless local model up, which
    # imported xcsh.ai.local and with it the wire types (xcsh.ai.types)
    answer, names = _start_with_fake_models(tmp_path, {"XCSH_DISABLED_PROVIDERS": ""})
    assert answer["success"] is True and answer["data"]["model"]["id"] == "fake-model"
    assert set(NEEDED) <= names
    assert sorted(name for name in names if name in LAZY + LAZY_WITHOUT_IMAGE_MODELS) == []


def test_a_start_with_its_sessions_in_the_default_place_for_a_home_project_loads_neither_listing_nor_tempfile(
    tmp_path: Path,
) -> None:
    # the session directory's name needs the temp root only for a project outside home
    home, agent = tmp_path / "home", tmp_path / "agent"
    project = home / "src" / "app"
    project.mkdir(parents=True)
    agent.mkdir()
    _write_fake_models(agent)
    env = {"HOME": str(home), "XDG_DATA_HOME": ""}
    answer, names = _spawn(agent, project, extra_env=env, args=("--model", "fake/fake-model"))
    session_file = Path(answer["data"]["sessionFile"])
    assert session_file.parent == agent / "sessions" / "-src-app"
    assert {"xcsh.coding.sessions.listing", "tempfile", "shutil"} & names == set()
    assert sorted(name for name in names if name in LAZY + LAZY_WITHOUT_IMAGE_MODELS) == []


MODELS_YML = """providers:
  fake:
    baseUrl: http://127.0.0.1:9/v1
    apiKey: k
    api: openai-completions
    models:
      - id: fake-model
        contextWindow: 100000
        maxTokens: 4096
        reasoning: false
"""


def test_with_a_model_that_takes_images_the_first_answer_offers_inspect_image_without_the_read_tool(
    tmp_path: Path,
) -> None:
    # a provider key makes the catalogue's image-capable models available (never contacted)
    answer, names = _start_with_fake_models(tmp_path, {"ANTHROPIC_API_KEY": "test-key"})
    assert "inspect_image" in {tool["name"] for tool in answer["data"]["dumpTools"]}
    assert "xcsh.coding.tools.inspect_image" in names
    assert sorted(name for name in names if name in LAZY) == []


def test_a_start_with_unchanged_yaml_config_files_answers_the_same_without_importing_yaml(
    tmp_path: Path,
) -> None:
    # PyYAML's result for each config file is kept in the agent dir (xcsh/coding/yaml_cache.py)
    agent, project = tmp_path / "agent", tmp_path / "proj"
    agent.mkdir()
    (project / ".xcsh").mkdir(parents=True)
    (agent / "models.yml").write_text(MODELS_YML)
    (agent / "config.yml").write_text("followUpMode: all\n")
    (project / ".xcsh" / "config.yml").write_text("steeringMode: all\n")
    first, first_names = _spawn(agent, project)
    second, second_names = _spawn(agent, project)
    assert "yaml" in first_names and "yaml" not in second_names
    assert {"xcsh.coding.settings", "xcsh.coding.models_config"} <= second_names
    for answer in (first, second):
        assert answer["success"] is True
        answer["data"].pop("sessionId")
    assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)
    assert (first["data"]["followUpMode"], first["data"]["steeringMode"]) == ("all", "all")
    # front matter too (an agent definition the task tool lists), kept in the same cache dir
    (project / ".xcsh" / "agents").mkdir()
    (project / ".xcsh" / "agents" / "scout.md").write_text(
        "---\nname: scout\ndescription: Looks around\n---\nLook.\n"
    )
    with_agent, with_agent_names = _spawn(agent, project)
    again, again_names = _spawn(agent, project)
    assert "yaml" in with_agent_names and "yaml" not in again_names
    task = next(t for t in again["data"]["dumpTools"] if t["name"] == "task")
    assert "scout: Looks around" in task["parameters"]["properties"]["agent"]["description"]
    for answer in (with_agent, again):
        answer["data"].pop("sessionId")
    assert json.dumps(again, sort_keys=True) == json.dumps(with_agent, sort_keys=True)
    # an edited file is parsed again, and its new content is what the answer shows
    (agent / "models.yml").write_text(MODELS_YML.replace("contextWindow: 100000", "contextWindow: 200000"))
    third, third_names = _spawn(agent, project)
    assert "yaml" in third_names
    assert third["data"]["model"]["contextWindow"] == 200000


@pytest.mark.parametrize("module", LAZY + LAZY_WITHOUT_IMAGE_MODELS)
def test_every_module_the_start_up_guard_names_exists(module: str) -> None:
    # a misspelt name would never be imported and so always "pass" the guard above
    assert importlib.util.find_spec(module) is not None


WARM_PROGRAM = """
import asyncio, sys
from pathlib import Path
import xcsh, xcsh.api
from xcsh.modes.rpc.warm import DEFERRED

# what this host loaded for itself (its typed client needs the commands' TypedDicts)
HOST = {{name for name in DEFERRED if name in sys.modules}}

async def main() -> None:
    async with xcsh.open_session(
        cwd=Path({proj!r}), args=["--model", "fake/fake-model", "--no-session"],
        agent_dir=Path({agent!r}), env={env!r},
    ) as session:
        await session.get_state()
        early = sum(name in sys.modules for name in DEFERRED if name not in HOST)
        for _ in range(1200):  # once the host is quiet, the warm-up imports them (bounded wait, 60 s)
            if all(name in sys.modules for name in DEFERRED):
                break
            await asyncio.sleep(0.05)
        print(early, sum(name in sys.modules for name in DEFERRED), len(DEFERRED))

asyncio.run(main())
"""


def test_the_idle_warm_up_imports_the_loop_and_tool_implementations_the_first_answer_left_out(
    workspace: Workspace,
) -> None:
    env = {**workspace.env, "XCSH_WARM_QUIET_MS": "1500"}
    program = WARM_PROGRAM.format(proj=str(workspace.proj), agent=str(workspace.agent), env=env)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env, check=True
    )
    early, late, total = (int(n) for n in done.stdout.split())
    assert (early, late) == (0, total)
