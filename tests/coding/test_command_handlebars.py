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


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{{#if args.length}}Review {{join args}}{{else}}Review all{{/if}}", "Review 42, src/app.py"),
        ("{{#if ARGUMENTS.length}}yes{{else}}no{{/if}} {{#unless args.length}}none{{/unless}}", "yes "),
        ("{{args.length}} args, {{ARGUMENTS.length}} chars, {{~args.[length]~}}!", "2 args, 13 chars,2!"),
        ("{{#with args}}{{length}}{{/with}} {{#each args}}{{length}};{{/each}}", "2 2;10;"),
        ('{{default (arg 3) "args.length"}}', "args.length"),
    ],
)
def test_length_of_the_arguments_is_what_handlebars_js_gives(body: str, expected: str) -> None:
    # review 8 D4: the engine has no JavaScript length, so {{#if args.length}} was always false
    assert expand_template(body, ARGS) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # not a template of the reference: kept as written (review 8 D3, D6)
        ("Bump `image: {{ .Values.image.tag }}` in $1", "Bump `image: {{ .Values.image.tag }}` in 42"),
        (
            "Go: {{ range .Items }}{{ .Name }}{{ end }}",
            f"Go: {{{{ range .Items }}}}{{{{ .Name }}}}{{{{ end }}}}\n\n{ARGS}",
        ),
        ("Jinja `{{ user.name }}` in $ARGUMENTS", f"Jinja `{{{{ user.name }}}}` in {ARGS}"),
        ("Quote '{{ item }}' in tasks", f"Quote '{{{{ item }}}}' in tasks\n\n{ARGS}"),
        ("Actions: ${{ secrets.TOKEN }} in $2", "Actions: ${{ secrets.TOKEN }} in src/app.py"),
    ],
)
def test_braces_of_other_template_languages_are_sent_as_written(body: str, expected: str) -> None:
    assert expand_template(body, ARGS) == expected


def test_a_go_path_in_a_body_that_uses_helpers_is_refused_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    # review 8 D3: the engine printed nothing for {{ .Name }}, which Handlebars.js refuses
    with caplog.at_level("WARNING"):
        result = expand_template("Fix {{arg 1}}: `{{ .Name }}`", ARGS, "/x/go.md")
    assert result == f"Fix {{{{arg 1}}}}: `{{{{ .Name }}}}`\n\n{ARGS}"
    assert any("/x/go.md" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "body",
    ["Review: $ARGUMENTS", "Review: $1 $2", "Review: $@[1]", "{{#if args}}Review: $ARGUMENTS{{/if}}"],
)
def test_the_users_arguments_are_never_rendered_as_a_template(body: str) -> None:
    # review 8 D6: $ARGUMENTS was filled before rendering, so typed {{…}} vanished
    assert expand_template(body, '"{{ user.name }}" "{{arg 1}}"') == "Review: {{ user.name }} {{arg 1}}"


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("say {{log 'HELLO'}}{{ARGUMENTS}}", "hi", "say hi"),
        ("Fix: $ARGUMENTS", "the {{log ARGUMENTS}} bug", "Fix: the {{log ARGUMENTS}} bug"),
    ],
)
def test_a_log_helper_in_a_body_or_in_the_arguments_writes_nothing_to_stdout(
    body: str, args: str, expected: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # review 7 D2: the engine's own log printed '[Handlebars] …' to stdout (a non-JSON line in --mode json)
    assert expand_template(body, args) == expected
    assert capfd.readouterr().out == ""
