"""The default tool set over RPC (``get_state.dumpTools``) against the reference's, written down by hand.

Every difference must be listed here and explained in docs/tools.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "reference_default_tools.json").read_text())
DOC = (ROOT / "docs" / "tools.md").read_text()

# reference tools xcsh does not provide (yet); docs/tools.md gives the reason for each
NOT_PROVIDED = {
    "render_mermaid",
    "debug",
    "display_image",
    "browser",
    "exit_plan_mode",
    "xcsh_api",
    "catalog_workflow_runner",
    "set_presentation_profile",
}
# offered only when some available model takes images (the fake models do not)
CONDITIONAL = {"inspect_image"}
# parameters the reference has and xcsh does not, per tool
MISSING_PARAMETERS = {"bash": {"pty"}}


def _props(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {}))


async def test_default_dump_tools_match_the_reference_fixture_except_documented_differences(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    args = ["--model", "fake/fake-model", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        dump = {t["name"]: t for t in (await client.get_state())["dumpTools"]}
    reference = FIXTURE["tools"]
    expected_names = (set(reference) | set(FIXTURE["also_active_not_compared"])) - NOT_PROVIDED - CONDITIONAL
    assert set(dump) == expected_names
    for name, tool in dump.items():
        schema = tool["parameters"]
        facts = reference[name]
        assert _props(schema) == set(facts["properties"]) - MISSING_PARAMETERS.get(name, set()), name
        assert set(schema.get("required", [])) == set(facts["required"]), name
        assert tool["description"]
    edit_items = dump["edit"]["parameters"]["properties"]["edits"]["items"]
    assert _props(edit_items) == set(FIXTURE["edit_item_properties"])
    calc_items = dump["calc"]["parameters"]["properties"]["calculations"]["items"]
    assert _props(calc_items) == set(FIXTURE["calc_item_properties"])
    task_items = dump["task"]["parameters"]["properties"]["tasks"]["items"]
    assert _props(task_items) == set(FIXTURE["task_item_properties"])
    python_cells = dump["python"]["parameters"]["properties"]["cells"]["items"]
    assert _props(python_cells) == set(FIXTURE["python_cell_properties"])


def test_every_difference_is_explained_in_the_tools_doc() -> None:
    section = DOC.split("## Differences from the reference", 1)[1]
    for name in NOT_PROVIDED | CONDITIONAL:
        assert f"`{name}`" in section, name
    for tool, params in MISSING_PARAMETERS.items():
        for param in params:
            assert f"`{tool}.{param}`" in section
