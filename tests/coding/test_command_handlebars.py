"""Handlebars in command and template bodies, rendered over the arguments as the reference does
(review 4 D2): its helpers (``arg``, ``join``, ``list``, ``default``, ``when`` …) and the built-in
blocks (``if``, ``unless``, ``each``), no HTML escaping, and a body the engine refuses kept as
written with the arguments appended instead of dropped."""

from __future__ import annotations

import pytest

from xcsh.coding.commands import expand_template

ARGS = "42 src/app.py"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # the review's four commands, with what the reference sends
        ("Fix issue {{arg 1}} in {{arg 2}}.", "Fix issue 42 in src/app.py."),
        ('Files: {{join args ", "}}', "Files: 42, src/app.py"),
        ("{{#each args}}- {{this}}\n{{/each}}", "- 42\n- src/app.py\n"),
        (
            "Review{{#if ARGUMENTS}} only {{ARGUMENTS}}{{else}} everything{{/if}}.",
            "Review only 42 src/app.py.",
        ),
        # the placeholders xcsh filled before
        (
            "All: {{ARGUMENTS}} / {{arguments}} / {{args}}",
            "All: 42 src/app.py / 42 src/app.py / 42,src/app.py",
        ),
        # more of the reference's helpers
        ("{{join args}}", "42, src/app.py"),
        ('{{#list args prefix="* " join=", "}}{{this}}{{/list}}', "* 42, * src/app.py"),
        ('{{default (arg 3) "none"}}', "none"),
        ('{{pluralize (len args) "file" "files"}}', "2 files"),
        ('{{#when (len args) ">" 1}}many{{else}}one{{/when}}', "many"),
        ("{{#ifAll ARGUMENTS args}}both{{/ifAll}}{{#ifAny (arg 9) (arg 1)}}+any{{/ifAny}}", "both+any"),
        ('{{#has args "42"}}has 42{{/has}} {{#if (includes args "x")}}x{{else}}no x{{/if}}', "has 42 no x"),
        ('{{#codeblock lang="sh"}}run {{arg 2}}{{/codeblock}}', "```sh\nrun src/app.py\n```"),
        ('{{#xml "files"}}{{join args}}{{/xml}}', "<files>\n42, src/app.py\n</files>"),
        (
            '{{escapeXml "<a&b>"}} {{jsonStringify args}} {{add 1 2}} {{sub 5 2}}',
            '&lt;a&amp;b&gt; ["42","src/app.py"] 3 3',
        ),
        ("{{#unless (not ARGUMENTS)}}given{{/unless}}", "given"),
        ("{{#each args}}{{@index}}:{{this}}{{#unless @last}}, {{/unless}}{{/each}}", "0:42, 1:src/app.py"),
        # no escaping, comments dropped, unknown values empty, $ placeholders first
        ("<{{arg 2}}> & {{! a note }}{{missing}}|$1", "<src/app.py> & |42"),
    ],
)
def test_handlebars_in_a_body_is_rendered_over_the_arguments(body: str, expected: str) -> None:
    assert expand_template(body, ARGS) == expected


def test_without_arguments_blocks_take_their_else_branch() -> None:
    body = "Review{{#if ARGUMENTS}} only {{ARGUMENTS}}{{else}} everything{{/if}}.{{#each args}}x{{else}} none{{/each}}"
    assert expand_template(body, "") == "Review everything. none"


def test_a_body_the_engine_refuses_is_kept_and_the_arguments_are_appended_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("WARNING"):
        result = expand_template(
            "Deploy {{ values | upper }} for {{ARGUMENTS}} and {{arg 1}}", ARGS, "/x/deploy.md"
        )
    assert result == f"Deploy {{{{ values | upper }}}} for {ARGS} and {{{{arg 1}}}}\n\n{ARGS}"
    assert any("/x/deploy.md" in r.getMessage() for r in caplog.records)


def test_a_body_without_braces_is_not_touched_by_the_engine() -> None:
    body = "Keep   spacing\n\n\n- and lists |a|b|  \n"
    assert expand_template(body, "") == body
