"""The bundled ``/init`` command: listed by ``get_commands``, expanded before the model sees it,
replaced by a user's or project's ``commands/init.md`` (review 4 D7)."""

from __future__ import annotations

from conftest import Workspace, user_texts
from e2e.context_tree import Tree
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_init_is_listed_and_expands_to_the_instructions_to_write_xcsh_md(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    tree = Tree(workspace)
    fake_llm.script(script.text("ok"), script.text("ok"))
    async with tree.spawn("--no-todo-defaults") as client:
        listing = {c["name"]: c for c in await client.get_commands()}
        await client.prompt_and_wait("/init")
        await client.prompt_and_wait("/init focus on the tests")
    assert listing["init"]["source"] == "prompt" and "XCSH.md" in listing["init"]["description"]
    assert "path" not in listing["init"] and "location" not in listing["init"]
    sent = [user_texts(r.json)[-1] for r in fake_llm.requests]
    assert sent[0] != "/init" and "write `XCSH.md` at its root" in sent[0] and sent[0] == sent[0].strip()
    assert sent[1] == f"{sent[0]}\n\nfocus on the tests"  # arguments are appended


async def test_a_projects_init_md_replaces_the_bundled_one(workspace: Workspace, fake_llm: FakeLLM) -> None:
    tree = Tree(workspace)
    tree.write({"{cwd}/.xcsh/commands/init.md": "---\ndescription: Our own init\n---\nPROJECT-INIT $1"})
    fake_llm.script(script.text("ok"))
    async with tree.spawn("--no-todo-defaults") as client:
        listing = [c for c in await client.get_commands() if c["name"] == "init"]
        await client.prompt_and_wait("/init x")
    assert [c["description"] for c in listing] == ["Our own init"]
    assert user_texts(fake_llm.requests[0].json)[-1] == "PROJECT-INIT x"


async def test_codex_prompts_and_agents_prompts_are_not_templates_so_review_reaches_the_model_as_typed(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    tree = Tree(workspace)
    tree.write(
        {
            "{home}/.codex/prompts/review.md": "CODEX-REVIEW-PROMPT for $ARGUMENTS",
            "{cwd}/.agents/prompts/ship.md": "REPO-AGENTS-SHIP-PROMPT $1",
            "{cwd}/.xcsh/prompts/tidy.md": "Tidy $1",
        }
    )
    fake_llm.script(*(script.text("ok") for _ in range(3)))
    async with tree.spawn("--no-todo-defaults") as client:
        names = [c["name"] for c in await client.get_commands()]
        for message in ("/review main.py", "/ship prod", "/tidy src"):
            await client.prompt_and_wait(message)
    assert "review" not in names and "ship" not in names and "tidy" in names
    sent = [user_texts(r.json)[-1] for r in fake_llm.requests]
    assert sent == ["/review main.py", "/ship prod", "Tidy src"]


async def test_handlebars_in_a_command_body_reaches_the_model_rendered(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    tree = Tree(workspace)
    tree.write(
        {
            "{cwd}/.xcsh/commands/argh.md": "Fix issue {{arg 1}} in {{arg 2}}.",
            "{agent}/prompts/eachh.md": "{{#each args}}- {{this}}\n{{/each}}",
        }
    )
    fake_llm.script(script.text("ok"), script.text("ok"))
    async with tree.spawn("--no-todo-defaults") as client:
        await client.prompt_and_wait("/argh 42 src/app.py")
        await client.prompt_and_wait("/eachh 42 src/app.py")
    sent = [user_texts(r.json)[-1] for r in fake_llm.requests]
    assert sent == ["Fix issue 42 in src/app.py.", "- 42\n- src/app.py\n"]


async def test_a_users_init_template_replaces_the_bundled_one(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # review 8 D5: the bundled /init yielded only to a command file, so a user's prompts/init.md
    # was neither listed nor run
    tree = Tree(workspace)
    tree.write({"{agent}/prompts/init.md": "---\ndescription: my own init\n---\nMY-INIT for $1"})
    fake_llm.script(script.text("ok"))
    async with tree.spawn("--no-todo-defaults") as client:
        listing = [c for c in await client.get_commands() if c["name"] == "init"]
        await client.prompt_and_wait("/init python")
    assert [c["description"] for c in listing] == ["my own init"]
    assert user_texts(fake_llm.requests[0].json)[-1] == "MY-INIT for python"
