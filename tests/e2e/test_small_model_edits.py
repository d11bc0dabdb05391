"""A small model's edit calls through the real RPC process, with scripted small-model mistakes.

The fake LLM plays a 1.5B model's typical edit errors: the wrong indentation, the old text
repeated as the new one, a whole file written for one changed line, an edit that breaks the
syntax, the test edited instead of the code, a function replaced by the one to add or copied
twice, no-op edits and an applied edit sent again. Set-up: :mod:`e2e.small_model`.
"""

from __future__ import annotations

import json

from conftest import Workspace, fake_models_yml
from e2e.small_model import BUGGY, SMALL, results, run, small_model
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_an_edit_with_the_wrong_indentation_is_applied_with_the_file_s_indentation(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "inv.py").write_text("class Inv:\n    def total(self):\n        return 0\n")
    flat = {
        "path": "inv.py",
        "old_text": "def total(self):\n    return 0",
        "new_text": "def total(self):\n    return 1",
    }
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [flat]})), script.text("done"), script.text("done")
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "make total return 1")
    assert results(frames)[0][:2] == ("edit", False)
    assert (workspace.proj / "inv.py").read_text() == "class Inv:\n    def total(self):\n        return 1\n"


async def test_an_edit_whose_new_text_repeats_the_old_text_is_not_an_error_and_the_run_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    same = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a - b"}
    fixed = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [same]})),
        script.tool_calls(("c2", "edit", {"edits": [fixed]})),
        script.text("Fixed."),
        script.text("Fixed."),  # after the verify nudge
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add()")
    first, second = results(frames)
    assert first[1] is False and first[2].startswith("No change needed in calc.py")
    assert (
        second[1] is False
        and (workspace.proj / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    )


async def test_a_small_model_edits_in_replace_mode_unless_the_edit_mode_is_configured(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.agent / "models.yml").write_text(fake_models_yml(fake_llm.base_url, extra_models=SMALL))
    args = ["--no-session", "--tools", "read,edit"]
    modes = []
    for model, config in (
        ("fake/tiny-coder", ""),
        ("fake/tiny-coder", "edit:\n  mode: hashline\n"),
        ("fake/fake-model", ""),
    ):
        workspace.config(config)
        async with RpcClient.spawn(
            args=["--model", model, *args], cwd=workspace.proj, env=workspace.env
        ) as client:
            tools = {t["name"]: t for t in (await client.get_state())["dumpTools"]}
        item = tools["edit"]["parameters"]["properties"]["edits"]["items"]["properties"]
        modes.append("replace" if "old_text" in item else "hashline")
    assert modes == ["replace", "hashline", "hashline"]


async def test_a_small_model_that_writes_only_the_changed_line_is_refused_and_then_edits(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    settings = "HOST = 'localhost'\nPORT = 8080\nMAX_RETRIES = 3\nTIMEOUT = 30\n"
    (workspace.proj / "settings.py").write_text(settings)
    change = {"path": "settings.py", "old_text": "MAX_RETRIES = 3", "new_text": "MAX_RETRIES = 5"}
    fake_llm.script(
        script.tool_calls(("c1", "write", {"path": "settings.py", "content": "MAX_RETRIES = 5\n"})),
        script.tool_calls(("c2", "edit", {"edits": [change]})),
        script.text("MAX_RETRIES is now 5."),
        script.text("MAX_RETRIES is now 5."),  # after the verify nudge
    )
    args = [*small_model(workspace, fake_llm)[:-1], "read,edit,write,bash"]
    frames = await run(workspace, args, "Set MAX_RETRIES to 5 in settings.py")
    (name, failed, error), edit = results(frames)
    assert (name, failed) == ("write", True) and "write replaces the WHOLE file" in error
    assert edit[:2] == ("edit", False)
    assert (workspace.proj / "settings.py").read_text() == settings.replace("RETRIES = 3", "RETRIES = 5")
    # a model without the profile keeps the reference's write, which replaces the file
    (workspace.proj / "settings.py").write_text(settings)
    fake_llm.script(
        script.tool_calls(("c1", "write", {"path": "settings.py", "content": "MAX_RETRIES = 5\n"})),
        script.text("Done."),
    )
    await run(workspace, ["--model", "fake/fake-model", "--no-session", "--tools", "write"], "Set it")
    assert (workspace.proj / "settings.py").read_text() == "MAX_RETRIES = 5\n"


async def test_a_small_model_s_edit_that_breaks_python_syntax_is_refused_and_the_file_kept(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    source = "class Inv:\n    def total(self):\n        count = 0\n        return count\n"
    (workspace.proj / "inv.py").write_text(source)
    one_line = {
        "path": "inv.py",
        "old_text": "def total(self):",
        "new_text": "def total(self) return 1",
    }  # no colon
    fixed = {"path": "inv.py", "old_text": "return count", "new_text": "return count + 1"}
    check = "python3 -c 'import inv; assert inv.Inv().total() == 1'"
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [one_line]})),
        script.tool_calls(("c2", "edit", {"edits": [fixed]})),
        script.tool_calls(("c3", "bash", {"command": check})),
        script.text("total() now returns 1."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "make total return 1")
    refused, done, ran = results(frames)
    assert refused[1] and refused[2].startswith("Not applied: after this change inv.py would no longer parse")
    assert not done[1] and not ran[1]
    assert (workspace.proj / "inv.py").read_text() == source.replace("return count", "return count + 1")


MATHUTIL = "def average(values):\n    return sum(values) / (len(values) + 1)\n"


TEST_MATHUTIL = (
    "import unittest\n\nfrom mathutil import average\n\n\nclass MathUtilTest(unittest.TestCase):\n"
    "    def test_average(self):\n        self.assertEqual(average([2, 4, 6]), 4)\n"
)


RUN_TESTS = "python3 -m unittest test_mathutil"


async def test_a_small_model_that_edits_the_test_instead_of_the_code_is_refused_and_pointed_to_the_code(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "mathutil.py").write_text(MATHUTIL)
    (workspace.proj / "test_mathutil.py").write_text(TEST_MATHUTIL)
    cheat = {
        "path": "test_mathutil.py",
        "old_text": "average([2, 4, 6]), 4)",
        "new_text": "average([2, 4, 6]), 3)",
    }
    fixed = {"path": "mathutil.py", "old_text": "(len(values) + 1)", "new_text": "len(values)"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [cheat]})),
        script.tool_calls(("c2", "edit", {"edits": [fixed]})),
        script.tool_calls(("c3", "bash", {"command": RUN_TESTS})),
        script.text("Fixed average() in mathutil.py; the tests pass."),
    )
    prompt = f"The tests in test_mathutil.py fail. Fix mathutil.py so that `{RUN_TESTS}` passes."
    frames = await run(workspace, small_model(workspace, fake_llm), prompt)
    (name, failed, error), fixing, ran = results(frames)
    assert (name, failed) == ("edit", True)
    assert error.startswith(
        "Not applied: test_mathutil.py is a test file, and the task is to make the tests pass"
    )
    assert "test_mathutil.py imports average from mathutil.py." in error
    assert (workspace.proj / "test_mathutil.py").read_text() == TEST_MATHUTIL
    assert not fixing[1] and not ran[1]
    # asked to change the tests, the same edit is made
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [cheat]})), script.text("Done."), script.text("Done.")
    )
    frames = await run(
        workspace, small_model(workspace, fake_llm), "Change the test in test_mathutil.py to expect 3"
    )
    assert results(frames)[0][:2] == ("edit", False)


SHOUT = 'def shout(text):\n    """Upper case."""\n    return text.upper() + "!"\n'


SLUGIFY = 'def slugify(text):\n    return "-".join(text.lower().split())'


async def test_a_small_model_that_replaces_a_function_to_add_one_is_refused_and_shown_how_to_add_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "text.py").write_text(SHOUT)
    replacing = {"path": "text.py", "old_text": SHOUT.rstrip("\n"), "new_text": SLUGIFY}
    last = '    return text.upper() + "!"'
    # the edit the error offers, ready to copy
    appending = {"path": "text.py", "old_text": last, "new_text": f"{last}\n\n\n{SLUGIFY}"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [replacing]})),
        script.tool_calls(("c2", "edit", {"edits": [appending]})),
        script.tool_calls(
            ("c3", "bash", {"command": "python3 -c 'import text; print(text.slugify(\"A b\"))'"})
        ),
        script.text("Added slugify() to text.py."),
    )
    frames = await run(
        workspace, small_model(workspace, fake_llm), "Add a function slugify(text) to text.py."
    )
    (_, failed, error), added, _ = results(frames)
    assert failed and error.startswith("Not applied: this change would remove shout() from text.py")
    assert f'"old_text": {json.dumps(last)}, "new_text": {json.dumps(appending["new_text"])}' in error
    assert not added[1]
    assert (workspace.proj / "text.py").read_text() == f"{SHOUT}\n\n{SLUGIFY}\n"


async def test_a_small_model_may_remove_a_function_the_request_names_but_not_define_one_twice(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "billing.py").write_text("def calc_total(prices):\n    return sum(prices)\n")
    (workspace.proj / "shapes.py").write_text(
        "import math\n\n\ndef circle_area(r):\n    return math.pi * r * r\n"
    )
    renamed = {"path": "billing.py", "old_text": "def calc_total(", "new_text": "def compute_total("}
    doubled = {
        "path": "shapes.py",
        "old_text": "import math",
        "new_text": "import math\n\n\ndef circle_area(r):\n    return math.pi * r * r",
    }
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [renamed]})),
        script.tool_calls(("c2", "edit", {"edits": [doubled]})),
        script.text("Done."),
        script.text("Done."),
        script.text("Done."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Rename calc_total to compute_total.")
    rename, double = results(frames)
    assert not rename[1] and "def compute_total(" in (workspace.proj / "billing.py").read_text()
    assert double[1] and double[2].startswith(
        "Not applied: shapes.py already defines circle_area(), and after this change it would define it twice."
    )


async def test_a_small_model_reading_the_test_first_is_told_where_the_code_is_and_may_not_even_no_op_edit_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "mathutil.py").write_text(MATHUTIL)
    (workspace.proj / "test_mathutil.py").write_text(TEST_MATHUTIL)
    same = {"path": "test_mathutil.py", "old_text": "import unittest", "new_text": "import unittest"}
    fake_llm.script(
        script.tool_calls(("c1", "read", {"path": "test_mathutil.py"})),
        script.tool_calls(("c2", "edit", {"edits": [same]})),  # a change of nothing, to the test
        script.text("The tests already pass."),
        script.tool_calls(("c3", "read", {"path": "mathutil.py"})),  # the failed-call turn
        script.text("average() divides by one too many."),
    )
    prompt = f"The tests in test_mathutil.py fail. Fix mathutil.py so that `{RUN_TESTS}` passes."
    frames = await run(workspace, small_model(workspace, fake_llm), prompt)
    (_, _, read), (_, refused, error), _ = results(frames)
    assert read.endswith(
        "Note: test_mathutil.py is a test file. The task is to make it pass without changing it, so the "
        "code to fix or add is in the code it tests.\ntest_mathutil.py imports average from mathutil.py.\n"
        "Read mathutil.py next and make the change there."
    )
    assert refused and error.startswith("Not applied: test_mathutil.py is a test file")


async def test_a_small_model_s_new_function_aimed_at_the_def_line_replaces_the_whole_function(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    source = "class Inv:\n    def total(self):\n        count = 0\n        return count\n"
    (workspace.proj / "inv.py").write_text(source)
    # old_text is the def line only; new_text a whole new version, indented from column 0
    new = "def total(self):\n    count = 1\n    return count"
    aimed = {"path": "inv.py", "old_text": "def total(self):", "new_text": new}
    check = "python3 -c 'import inv; assert inv.Inv().total() == 1'"
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [aimed]})),
        script.tool_calls(("c2", "bash", {"command": check})),
        script.text("total() now returns 1."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "make total return 1")
    (_, failed, text), ran = results(frames)
    assert not failed and text.endswith(
        "(old_text was a def line: the whole function was replaced by new_text)."
    )
    assert not ran[1]
    expected = "class Inv:\n    def total(self):\n        count = 1\n        return count\n"
    assert (workspace.proj / "inv.py").read_text() == expected


async def test_a_small_model_s_new_lines_written_from_column_zero_are_indented_like_old_text_s_line(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    source = "class Inv:\n    def total(self):\n        return 0\n"
    (workspace.proj / "inv.py").write_text(source)
    flat = {"path": "inv.py", "old_text": "return 0", "new_text": "if self:\n    return 1\nreturn 0"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [flat]})),
        script.tool_calls(
            ("c2", "bash", {"command": "python3 -c 'import inv; assert inv.Inv().total() == 1'"})
        ),
        script.text("total() now returns 1."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "make total return 1")
    (_, failed, text), ran = results(frames)
    assert not failed and text.endswith(
        "(new_text indented like the line old_text starts in, so that the file still parses)."
    )
    assert not ran[1]
    assert (workspace.proj / "inv.py").read_text() == (
        "class Inv:\n    def total(self):\n        if self:\n            return 1\n        return 0\n"
    )


async def test_a_small_model_s_no_op_edit_of_a_def_line_is_answered_with_the_function_s_lines(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "mathutil.py").write_text(MATHUTIL)
    same = {"path": "mathutil.py", "old_text": "def average(values):", "new_text": "def average(values):"}
    fixed = {"path": "mathutil.py", "old_text": "(len(values) + 1)", "new_text": "len(values)"}
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [same]})),
        script.tool_calls(("c2", "edit", {"edits": [fixed]})),
        script.tool_calls(
            ("c3", "bash", {"command": "python3 -c 'import mathutil; print(mathutil.average([2, 4]))'"})
        ),
        script.text("Fixed average()."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix average() in mathutil.py")
    (_, failed, text), fixing, _ = results(frames)
    assert not failed and text.startswith("No change needed in mathutil.py")
    assert text.endswith(
        "old_text was only a def line. To fix code inside the function, use as old_text the line to fix, "
        "copied from its current text below, and as new_text that line corrected:\n" + MATHUTIL.rstrip("\n")
    )
    assert not fixing[1]


async def test_a_small_model_sending_an_applied_edit_again_is_refused_instead_of_adding_its_text_twice(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "calc.py").write_text(BUGGY)
    insert = {"path": "calc.py", "old_text": "def add(a, b):", "new_text": "def add(a, b):\n    # adds"}
    fixed = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    check = "python3 -c 'import calc; assert calc.add(2, 3) == 5'"
    fake_llm.script(
        script.tool_calls(("c1", "edit", {"edits": [insert]})),
        script.tool_calls(("c2", "bash", {"command": check})),
        script.tool_calls(("c3", "edit", {"edits": [insert]})),  # the same edit again: would insert twice
        script.tool_calls(("c4", "edit", {"edits": [fixed]})),
        script.tool_calls(("c5", "bash", {"command": check})),
        script.text("Fixed add()."),
    )
    frames = await run(workspace, small_model(workspace, fake_llm), "Fix add() in calc.py")
    texts = results(frames)
    assert texts[2][1] and texts[2][2].startswith(
        "Not applied: you made exactly this edit before in this task"
    )
    assert not texts[3][1] and not texts[4][1]
    assert (workspace.proj / "calc.py").read_text() == "def add(a, b):\n    # adds\n    return a + b\n"
