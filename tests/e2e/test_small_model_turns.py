"""A small model's runs through the real RPC process, with scripted small-model mistakes.

The fake LLM plays a 1.5B model giving up after a failed call, claiming success, repeating a
call or a search, looking for a symbol with ``find``, answering without looking, changing a
file and running nothing, or calling tools without end: the extra turns and notes it gets, and
what a model without the small profile gets instead. Set-up: :mod:`e2e.small_model`.
"""

from __future__ import annotations

import json

from conftest import Workspace, fake_models_yml, tool_results, user_texts
from e2e.small_model import BUGGY, NUDGE, SMALL, results, run, small_model
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_a_small_model_that_gives_up_after_a_failed_edit_gets_one_more_turn_and_fixes_the_file(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    guessed = {"path": "calc.py", "old_text": "def add(x, y):\n    return x - y", "new_text": "..."}
    fixed = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [guessed]})),  # edits text it never read
        script.text("Could not find the text in calc.py."),  # and gives up
        script.tool_calls(("c2", "edit", {"edits": [fixed]})),
        script.text("Fixed add() in calc.py."),
        script.text("Fixed add() in calc.py."),  # after the verify nudge
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    assert (workspace.proj / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    error = results(frames)[0][2]
    # the error carries the file's current text, so the model can copy old_text from it
    assert results(frames)[0][1] is True and "def add(a, b):\n    return a - b" in error
    assert NUDGE in user_texts(fake_llm.requests[2].json)[-1]
    # the first call of the run and the extra turn must act: they require a tool call
    assert [r.json.get("tool_choice") for r in fake_llm.requests] == [
        "required",
        None,
        "required",
        None,
        None,
    ]
    nudges = [f for f in frames if f["type"] == "message_end" and f["message"]["role"] == "custom"]
    assert [
        (m["message"]["customType"], m["message"]["display"], m["message"]["details"]["kind"]) for m in nudges
    ] == [("toolRecovery", False, "failed"), ("toolRecovery", False, "verify")]
    assert [f["type"] for f in frames].count("agent_end") == 1


async def test_the_extra_turn_is_given_once_per_run_so_a_run_always_ends(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    wrong = {"path": "calc.py", "old_text": "nothing like it", "new_text": "x"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [wrong]})),
        script.text("I could not do it."),
        script.tool_calls(("c2", "edit", {"edits": [wrong]})),
        script.text("Still failing."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add()")
    assert len(fake_llm.requests) == 4
    assert frames[-1]["type"] == "agent_end"


async def test_a_model_without_the_small_profile_ends_the_run_as_the_reference_does(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    wrong = {"path": "calc.py", "old_text": "nothing like it", "new_text": "x"}
    fake_llm.script(script.tool_calls(("c1", "edit", {"edits": [wrong]})), script.text("I could not do it."))
    workspace.config("edit:\n  mode: replace\n")
    args = ["--model", "fake/fake-model", "--no-session", "--tools", "read,edit"]
    await run(workspace, args, "Fix add()")
    assert len(fake_llm.requests) == 2


async def test_a_find_for_a_symbol_points_the_model_to_grep(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.proj / "limits.py").write_text("MAX_UPLOAD_MB = 25\n")
    fake_llm.script(
        script.tool_calls(("c1", "find", {"pattern": "MAX_UPLOAD_MB"})),
        script.tool_calls(("c2", "grep", {"pattern": "MAX_UPLOAD_MB"})),
        script.text("limits.py sets MAX_UPLOAD_MB to 25."),
    )
    await run(workspace, small_model(workspace, fake_llm), "Where is MAX_UPLOAD_MB defined?")
    hint = tool_results(fake_llm.requests[1].json)["c1"]
    assert "use grep with pattern MAX_UPLOAD_MB" in hint
    assert "MAX_UPLOAD_MB = 25" in tool_results(fake_llm.requests[2].json)["c2"]


async def test_a_small_model_is_not_forced_to_plan_with_todo_write_before_the_task(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    small_model(workspace, fake_llm)
    fake_llm.script(
        script.tool_calls(("c1", "read", {"path": "."})),
        script.text("Done."),
        script.text("Done."),  # after the nudge: nothing was changed for a change request
        script.text("Done."),
    )
    for model in ("fake/tiny-coder", "fake/fake-model"):
        await run(workspace, ["--model", model, "--no-session"], "Add a docstring to main.")
    small, _, _, default = (r.json for r in fake_llm.requests)
    # the small model's first call must use a tool (any: it looks before it answers), but no plan
    assert small["tool_choice"] == "required"
    assert not any("Plan before you act" in t for t in user_texts(small))
    # the same prompt to a model without the profile gets the eager todo prelude (agent-behaviour §8.4)
    assert default["tool_choice"]["function"]["name"] == "todo_write"


async def test_a_small_model_gets_the_core_tools_unless_tools_are_chosen_on_the_command_line(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.agent / "models.yml").write_text(fake_models_yml(fake_llm.base_url, extra_models=SMALL))
    active = []
    for args in (
        ["--model", "fake/tiny-coder"],
        ["--model", "fake/tiny-coder", "--tools", "read,python"],
        ["--model", "fake/fake-model"],
    ):
        async with RpcClient.spawn(
            args=[*args, "--no-session"], cwd=workspace.proj, env=workspace.env
        ) as client:
            active.append([t["name"] for t in (await client.get_state())["dumpTools"]])
    assert active[0] == ["read", "bash", "edit", "write", "grep", "find"]
    assert active[1] == ["read", "python"]
    # a model without the profile keeps every default tool
    assert {"ast_grep", "todo_write", "task", "python"} <= set(active[2])


async def test_a_small_model_repeating_a_failed_edit_is_told_so_and_given_the_line_to_copy(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "settings.ini").write_text("[logging]\nlevel = info\nfile = app.log\n")
    guessed = {"path": "settings.ini", "old_text": "log_level = info", "new_text": "log_level = debug"}
    copied = {"path": "settings.ini", "old_text": "level = info", "new_text": "level = debug"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [guessed]})),
        script.tool_calls(("c2", "read", {"path": "settings.ini"})),
        script.tool_calls(("c3", "edit", {"edits": [guessed]})),  # the same call again
        script.tool_calls(("c4", "edit", {"edits": [copied]})),
        script.text("The log level is now debug."),
        script.text("The log level is now debug."),  # after the verify nudge
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Set the log level to debug")
    first, _, again, fixed = results(frames)
    assert first[1] and first[2].startswith("Could not find old_text")
    assert first[2].endswith('"old_text": "level = info"')
    assert again[1] and again[2].startswith("You made exactly this edit call once before")
    assert again[2].endswith(first[2])
    assert fixed[:2] == ("edit", False)
    assert (workspace.proj / "settings.ini").read_text() == "[logging]\nlevel = debug\nfile = app.log\n"


async def test_a_model_without_the_small_profile_gets_the_plain_error_when_it_repeats_a_call(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    wrong = {"path": "calc.py", "old_text": "nothing like it", "new_text": "x"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [wrong]})),
        script.tool_calls(("c2", "edit", {"edits": [wrong]})),
        script.text("I could not do it."),
    )
    workspace.config("edit:\n  mode: replace\n")
    frames = await run(workspace, ["--model", "fake/fake-model", "--no-session", "--tools", "edit"], "Fix")
    first, second = results(frames)
    assert second == first


async def test_a_small_model_that_claims_success_after_an_unresolved_failed_edit_gets_the_extra_turn(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    guessed = {"path": "calc.py", "old_text": "return x - y", "new_text": "return x + y"}
    fixed = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [guessed]})),
        script.tool_calls(("c2", "read", {"path": "calc.py"})),  # succeeds: the edit still has not
        script.text("Fixed add() in calc.py."),  # a claim, not a fix
        script.tool_calls(("c3", "edit", {"edits": [fixed]})),
        script.text("Fixed add() in calc.py."),
        script.text("Fixed add() in calc.py."),  # after the verify nudge
    )
    await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    assert (workspace.proj / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert NUDGE in user_texts(fake_llm.requests[3].json)[-1]
    assert [r.json.get("tool_choice") for r in fake_llm.requests] == [
        "required",
        None,
        None,
        "required",
        None,
        None,
    ]


async def test_a_small_model_looks_before_it_answers_a_question_about_the_code(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "server.py").write_text("DEFAULT_PORT = 8765\n")
    fake_llm.script(
        script.tool_calls(("c1", "grep", {"pattern": "PORT"})),
        script.text("server.py listens on 8765 by default."),
        script.text("8080"),  # the same question, to a model without the profile: a guess
    )
    question = "On which port does server.py listen? Answer with the number."
    await run(workspace, small_model(workspace, fake_llm), question)
    await run(workspace, ["--model", "fake/fake-model", "--no-session", "--tools", "read,grep"], question)
    assert [r.json.get("tool_choice") for r in fake_llm.requests] == ["required", None, None]


async def test_a_small_model_that_changed_a_file_and_ran_nothing_is_asked_to_verify_once(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    wrong_fix = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a * b"}
    fixed = {"path": "calc.py", "old_text": "return a * b", "new_text": "return a + b"}
    check = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [wrong_fix]})),
        script.text("Fixed add(); the check passes."),  # a claim: nothing was run
        script.tool_calls(("c2", "bash", {"command": check})),  # fails: the fix was wrong
        script.tool_calls(("c3", "edit", {"edits": [fixed]})),
        script.tool_calls(("c4", "bash", {"command": check})),
        script.text("Fixed add(); the check passes."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    assert (workspace.proj / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    nudge = user_texts(fake_llm.requests[2].json)[-1]
    assert nudge.startswith("You changed calc.py but ran nothing after the change.")
    # the model may answer after this nudge: no tool call is forced
    assert [r.json.get("tool_choice") for r in fake_llm.requests] == [
        "required",
        None,
        None,
        None,
        None,
        None,
    ]
    assert [r[:2] for r in results(frames)][1] == ("bash", True)


async def test_running_the_same_failing_test_after_an_edit_is_no_repeat_and_a_failed_command_is_explained(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    check = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"
    still_wrong = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a * b"}
    fake_llm.script(
        script.tool_calls(("c1", "bash", {"command": check})),
        script.tool_calls(("c2", "edit", {"edits": [still_wrong]})),
        script.tool_calls(("c3", "bash", {"command": check})),  # the same command, after a change
        script.text("I changed calc.py."),
        script.text("I changed calc.py, and the check still fails."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    first, _, again = results(frames)
    assert first[1] and again[1] and not again[2].startswith("You made exactly this")
    nudge = user_texts(fake_llm.requests[4].json)[-1]
    assert nudge.startswith("Your last bash command failed") and "If the command itself was wrong" in nudge


async def test_a_small_model_that_keeps_calling_tools_is_told_to_answer_after_25_calls(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    fake_llm.script(
        *(script.tool_calls((f"c{n}", "read", {"path": "calc.py"})) for n in range(1, 26)),
        script.text("I read calc.py; add() subtracts, and that is left to fix."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    last = results(frames)[-1][2]
    assert len(results(frames)) == 25
    assert last.endswith(
        "You have made 25 tool calls for this request, the most allowed. Answer now: say "
        "what you changed or found, and what is left to do."
    )
    choices = [r.json.get("tool_choice") for r in fake_llm.requests]
    assert choices[0] == "required" and choices[1:25] == [None] * 24 and choices[25] == "none"
    assert len(fake_llm.requests) == 26


async def test_a_small_model_repeating_the_same_search_is_told_the_result_is_unchanged(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    fixed = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    fake_llm.script(
        script.tool_calls(("c1", "grep", {"pattern": "add"})),
        script.tool_calls(("c2", "grep", {"pattern": "add"})),  # the same look, nothing changed
        script.tool_calls(("c3", "edit", {"edits": [fixed]})),
        script.tool_calls(("c4", "grep", {"pattern": "return"})),
        script.tool_calls(("c5", "grep", {"pattern": "add"})),  # after a change: a fresh look
        script.text("Fixed add()."),
        script.text("Fixed add() in calc.py."),  # after the verify nudge
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    texts = [r[2] for r in results(frames)]
    assert not texts[0].startswith("You made") and texts[1].startswith(
        "You made exactly this grep call once before and nothing has changed since"
    )
    assert texts[1].endswith(texts[0]) and not texts[4].startswith("You made")


async def test_a_small_model_that_rewrites_a_file_with_its_own_content_twice_is_told_to_answer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    content = "MAX_RETRIES = 5\nTIMEOUT_SECONDS = 10\nBASE_URL = 'http://localhost:8000'\nDEBUG = False\n"
    (workspace.proj / "settings.py").write_text(content)
    same = {"path": "settings.py", "content": content}
    fake_llm.script(
        script.tool_calls(("c1", "write", same)),  # changes nothing: told so, goes on
        script.tool_calls(("c2", "read", {"path": "settings.py"})),
        script.tool_calls(("c3", "write", same)),  # the second: must answer now
        script.text("MAX_RETRIES is already 5 in settings.py."),
    )
    args = [*small_model(workspace, fake_llm)[:-1], "read,edit,write,bash,grep,find"]
    frames = await run(workspace, args, "Set MAX_RETRIES to 5 in settings.py")
    first, _, second = results(frames)
    assert not first[1] and "nothing changed" in first[2] and "changed nothing" not in first[2]
    assert not second[1] and second[2].endswith(
        "That is 2 calls for this request that changed nothing. Stop calling tools and answer now: "
        "say what you changed or found, and what is left to do."
    )
    assert [r.json.get("tool_choice") for r in fake_llm.requests] == ["required", None, None, "none"]
    assert (workspace.proj / "settings.py").read_text() == content


async def test_a_small_model_that_sends_the_same_failing_edit_a_third_time_is_told_to_answer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    wrong = {"path": "calc.py", "old_text": "return x - y", "new_text": "return x + y"}
    same = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a - b"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [wrong]})),
        script.tool_calls(("c2", "edit", {"edits": [same]})),  # "No change needed": changes nothing
        script.tool_calls(("c3", "edit", {"edits": [wrong]})),
        script.tool_calls(("c4", "edit", {"edits": [wrong]})),  # the third: must answer now
        script.text("I could not change calc.py: my old_text does not match."),
        script.text("add() still subtracts."),  # the failed-call turn (a tool is required)
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    texts = [r[2] for r in results(frames)]
    assert texts[2].startswith("You made exactly this edit call once before")
    assert texts[3].startswith("You made exactly this edit call 2 times before")
    assert texts[3].endswith(
        "That is 3 times the same call failed the same way. Stop calling tools and answer now: say "
        "what you tried, what failed, and what is left to do."
    )
    assert [r.json.get("tool_choice") for r in fake_llm.requests][:5] == [
        "required",
        None,
        None,
        None,
        "none",
    ]


async def test_a_small_model_that_changed_nothing_for_a_change_request_gets_one_more_turn_and_a_question_none(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "billing.py").write_text("def calc_total(prices):\n    return sum(prices)\n")
    renamed = {"path": "billing.py", "old_text": "def calc_total(", "new_text": "def compute_total("}
    (workspace.proj / "main.py").write_text("from billing import calc_total\n")
    fake_llm.script(
        script.tool_calls(("c0", "grep", {"pattern": "calc_total"})),
        script.tool_calls(("c1", "read", {"path": "billing.py"})),
        script.tool_calls(("c2", "bash", {"command": "python3 -c 'import billing' 2>&1"})),
        script.text("Renamed calc_total to compute_total."),  # a claim: nothing changed
        script.tool_calls(("c3", "edit", {"edits": [renamed]})),
        script.text("Renamed calc_total to compute_total."),
        script.text("Renamed calc_total to compute_total in billing.py."),  # after the verify nudge
    )
    frames = await run(
        workspace, small_model(workspace, fake_llm), "Rename the function calc_total to compute_total."
    )
    assert (workspace.proj / "billing.py").read_text().startswith("def compute_total(")
    nudge = user_texts(fake_llm.requests[4].json)[-1]
    assert nudge.startswith("No file has been changed in this run yet, but the task asks for a change.")
    # the lines to change, from what the model grepped and read, as one call to copy
    ready = [
        {
            "path": "billing.py",
            "old_text": "def calc_total(prices):",
            "new_text": "def compute_total(prices):",
        },
        {
            "path": "main.py",
            "old_text": "from billing import calc_total",
            "new_text": "from billing import compute_total",
        },
    ]
    assert nudge.endswith(json.dumps({"tool": "edit", "arguments": {"edits": ready}}))
    assert fake_llm.requests[4].json.get("tool_choice") == "required"
    kinds = [
        f["message"]["details"]["kind"]
        for f in frames
        if f["type"] == "message_end" and f["message"]["role"] == "custom"
    ]
    assert kinds == ["unchanged", "verify"]
    # a question is answered, not turned into a change
    fake_llm.script(script.tool_calls(("c1", "grep", {"pattern": "calc_total"})), script.text("billing.py."))
    await run(
        workspace, small_model(workspace, fake_llm), "Which file defines compute_total? Answer with its name."
    )
    assert len(fake_llm.requests) == 9


async def test_a_small_model_whose_only_edit_changed_nothing_is_still_asked_for_the_change(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "billing.py").write_text("def calc_total(prices):\n    return sum(prices)\n")
    same = {"path": "billing.py", "old_text": "def calc_total(", "new_text": "def calc_total("}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [same]})),
        script.text("Renamed calc_total to compute_total."),
        script.tool_calls(("c2", "read", {"path": "billing.py"})),
        script.text("calc_total is still there."),
    )
    await run(workspace, small_model(workspace, fake_llm), "Rename the function calc_total to compute_total.")
    nudge = user_texts(fake_llm.requests[2].json)[-1]
    assert nudge.startswith("No file has been changed in this run yet, but the task asks for a change.")
