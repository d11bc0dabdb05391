"""A temporary project and home for discovery end-to-end tests (tests/e2e/test_context_*.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.rpc.client import RpcClient

ARGS = ["--model", "fake/fake-model", "--no-session"]


def skill(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nHow to {name}.\n"


class Tree:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.home = ws.proj.parent / "home"
        self.proj = ws.proj
        self.cwd = ws.proj / "pkg"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(exist_ok=True)
        (self.proj / ".git").mkdir(exist_ok=True)  # the project root: walk-ups stop here
        ws.env["HOME"] = str(self.home)
        for name in ("XCSH_LOCALE", "PI_LOCALE", "LC_ALL", "LC_MESSAGES", "LANG"):
            ws.env.pop(name, None)

    def fill(self, text: str) -> str:
        return text.format(home=self.home, agent=self.ws.agent, proj=self.proj, cwd=self.cwd)

    def write(self, files: dict[str, str]) -> None:
        for template, content in files.items():
            path = Path(self.fill(template))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)

    def spawn(self, *extra: str) -> Any:
        return RpcClient.spawn(args=[*ARGS, *extra], cwd=self.cwd, env=self.ws.env)


def system_prompt_of(request_json: dict[str, Any]) -> str:
    first = request_json["messages"][0]
    assert first["role"] in ("system", "developer")
    return str(first["content"])
