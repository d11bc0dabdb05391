"""The agents the probes run against: this project and, when installed, its two TypeScript peers.

Every agent gets the same fake LLM (``xcsh.testing.FakeLLM`` on loopback) through its own models
file in a fresh agent directory, an empty project directory and a session directory in a tmp
folder (sessions are persisted, as by default). Peers are looked up under ``--peers`` (default
``/work/peers``, or ``$XCSH_BENCH_PEERS``): ``pi/node_modules/.bin/pi`` (pi) and
``omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js`` run by the
``bun`` installed beside it (oh-my-pi); a missing peer is skipped, never an error.
"""

from __future__ import annotations

import compileall
import importlib.util
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

WIRE_PATHS = {"openai-completions": "/v1", "anthropic-messages": ""}
_RUNS = itertools.count(1)
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@dataclass(frozen=True, slots=True)
class Agent:
    """How to start one agent in RPC mode."""

    name: str
    command: tuple[str, ...]
    models_file: str  # "models.yml" (xcsh, omp) or "models.json" (pi)

    def workspace(self, base_url: str, api: str) -> Workspace:
        root = Path(tempfile.mkdtemp(prefix=f"bench-{self.name}-"))
        agent_dir, project, sessions = root / "agent", root / "project", root / "sessions"
        for folder in (agent_dir, project, sessions):
            folder.mkdir()
        url = base_url + WIRE_PATHS[api]
        model = {"id": "fake-model", "contextWindow": 10_000_000, "maxTokens": 4096, "reasoning": False}
        if self.models_file == "models.json":
            text = json.dumps(
                {"providers": {"fake": {"baseUrl": url, "apiKey": "k", "api": api, "models": [model]}}}
            )
        else:
            text = (
                f"providers:\n  fake:\n    baseUrl: {url}\n    apiKey: k\n    api: {api}\n"
                "    models:\n      - id: fake-model\n        contextWindow: 10000000\n"
                "        maxTokens: 4096\n        reasoning: false\n"
            )
        (agent_dir / self.models_file).write_text(text)
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_KEYS}
        env["PI_CODING_AGENT_DIR"] = str(agent_dir)  # pi and xcsh
        env["OMP_CODING_AGENT_DIR"] = str(agent_dir)
        env["XCSH_DISABLED_PROVIDERS"] = "local"
        env["PI_OFFLINE"] = "1"
        env["PI_SKIP_VERSION_CHECK"] = "1"
        return Workspace(self, root, project, sessions, env)


@dataclass(frozen=True, slots=True)
class Workspace:
    agent: Agent
    root: Path
    project: Path
    sessions: Path
    env: dict[str, str]

    def argv(self, *extra: str) -> list[str]:
        """The command line: RPC mode, the fake model, default tools, sessions in the tmp folder."""
        run = str(next(_RUNS))
        command = [part.replace("{run}", run) for part in self.agent.command]
        args = [*command, "--mode", "rpc", "--model", "fake/fake-model"]
        return [*args, "--session-dir", str(self.sessions), *extra]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def compile_xcsh() -> dict[str, object]:
    """Write the bytecode of the xcsh package next to its sources, as ``pip install`` does for a wheel.

    The repository runs as an editable install, whose modules are compiled on import; where
    ``PYTHONDONTWRITEBYTECODE`` is set (this machine's shells) that bytecode is never kept, so
    every spawn compiled the ~170 modules it imports again (half of the start-up, 2026-12-01).
    Python reads existing bytecode whatever that variable says, so one compile here makes the
    probes measure xcsh as installed. Returns what was done, for the results file.
    """
    spec = importlib.util.find_spec("xcsh")
    if spec is None or spec.origin is None:
        return {"compiled": False, "why": "xcsh not found"}
    package = Path(spec.origin).parent
    t0 = time.perf_counter()
    ok = compileall.compile_dir(str(package), quiet=1, workers=1)
    return {"compiled": bool(ok), "package": str(package), "seconds": round(time.perf_counter() - t0, 2)}


def find_agents(names: list[str], peers: Path, profile: Path | None = None) -> list[Agent]:
    """The requested agents that can run here (xcsh always can).

    With ``profile``, xcsh runs under ``py-spy record`` (if installed in this venv), writing
    collapsed stacks to ``profile/xcsh-<run>.txt``. The CPU and RSS figures of such a run are then
    py-spy's own (the spawned process is py-spy), not the agent's: read only the profile.
    """
    ours: tuple[str, ...] = (sys.executable, "-m", "xcsh")
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        spy = Path(sys.executable).with_name("py-spy")
        out = str(profile / "xcsh-{run}.txt")
        ours = (str(spy), "record", "--format", "raw", "--rate", "250", "--output", out, "--", *ours)
    known = {
        "xcsh": Agent("xcsh", ours, "models.yml"),
        "floor": Agent(
            "floor", (sys.executable, str(Path(__file__).with_name("floor_agent.py"))), "models.yml"
        ),
        "pi": Agent(
            "pi",
            ("node", str(peers / "pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")),
            "models.json",
        ),
        "omp": Agent(
            "omp",
            (
                str(peers / "omp/node_modules/.bin/bun"),
                str(peers / "omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"),
            ),
            "models.yml",
        ),
    }
    found = []
    for name in names:
        agent = known[name]
        target = Path(agent.command[-1])
        if name in ("xcsh", "floor") or target.exists():
            found.append(agent)
        else:
            print(f"-- {name}: not installed at {target}, skipped", file=sys.stderr)
    return found
