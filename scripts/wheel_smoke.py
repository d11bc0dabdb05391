"""Smoke test of an installed xcsh (run by ``scripts/wheel-smoke`` with a clean venv's python).

Checks that the package imported is the installed one (not the source tree), that its
metadata carries the licence, project URLs and classifiers, and runs the quick start
(``examples/quickstart.py``) through the RPC protocol against the fake LLM server, which
scripts the quick start's task: write ``hello.py``, run it with ``bash``, answer.
Exits non-zero with a reason on the first failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import xcsh
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import text, tool_calls

TIMEOUT_S = 120


def fail(reason: str) -> None:
    print(f"wheel smoke: FAILED: {reason}", file=sys.stderr)
    raise SystemExit(1)


def check_install(venv: Path) -> None:
    location = Path(xcsh.__file__).resolve()
    if venv.resolve() not in location.parents:
        fail(f"xcsh was imported from {location}, not from the clean venv {venv}")
    dist = metadata.distribution("xcsh")
    meta = dist.metadata
    if not [f for f in dist.files or [] if re.search(r"licen[cs]e", str(f), re.I)]:
        fail("the installed distribution carries no licence file")
    if not meta.get_all("Project-URL"):
        fail("the metadata has no Project-URL")
    if meta.get("License-Expression") != "MIT" or not meta.get_all("Classifier"):
        fail("the metadata lacks the licence expression or the classifiers")
    for resource in ("ai/data/models.json", "py.typed"):
        if not (location.parent / resource).is_file():
            fail(f"package data {resource} is missing from the wheel")


def run_quickstart(repo: Path) -> None:
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="xcsh-wheel-smoke-") as tmp:
        agent = Path(tmp) / "agent"
        agent.mkdir()
        (agent / "models.yml").write_text(
            f"providers:\n  fake:\n    baseUrl: {llm.base_url}/v1\n    apiKey: test-key\n"
            "    api: openai-completions\n    models:\n      - id: fake-model\n"
        )
        llm.script(
            tool_calls(("c1", "write", {"path": "hello.py", "content": "print('hello world')\n"})),
            tool_calls(("c2", "bash", {"command": f"{sys.executable} hello.py"})),
            text("It printed: hello world"),
        )
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONPATH"}
        env |= {"PI_CODING_AGENT_DIR": str(agent), "XCSH_DISABLED_PROVIDERS": "local"}
        command = [sys.executable, str(repo / "examples" / "quickstart.py"), "--model", "fake/fake-model"]
        done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        if done.returncode != 0:
            fail(f"the quick start exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        bash_results = [r for r in llm.requests if "hello world" in r.body.decode("utf-8", "replace")]
        if "It printed: hello world" not in done.stdout or "'hello.py'" not in done.stdout:
            fail(f"the quick start did not finish the task:\n{done.stdout}\n{done.stderr}")
        if len(llm.requests) != 3 or not bash_results:
            fail(f"expected 3 model requests with the program's output fed back, got {len(llm.requests)}")
        llm.assert_complete()
        print(done.stdout)


def main() -> None:
    repo = Path(sys.argv[1]).resolve()
    check_install(Path(sys.prefix))
    run_quickstart(repo)
    print(f"wheel smoke: ok ({metadata.version('xcsh')} from {Path(xcsh.__file__).parent})")


if __name__ == "__main__":
    main()
