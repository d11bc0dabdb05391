"""What hosts and tool processes are shown of the credentials xcsh reads."""

from __future__ import annotations

from typing import Any, cast

from xcsh.ai.types import Model
from xcsh.coding.secrets import builtin_key_names, public_model, tool_environment, withheld_names


def test_public_models_hide_header_values_and_url_userinfo_but_not_the_rest() -> None:
    model = cast(
        Model,
        {
            "id": "m",
            "provider": "p",
            "baseUrl": "https://bob:s3cret@host.example/v1",
            "headers": {"X-K": "v"},
        },
    )
    shown = cast(dict[str, Any], public_model(model))
    assert shown["headers"] == {"X-K": "[redacted]"}
    assert shown["baseUrl"] == "https://[redacted]@host.example/v1"
    assert (shown["id"], shown["provider"]) == ("m", "p")
    assert cast(dict[str, Any], model)["headers"] == {"X-K": "v"}  # the model itself is untouched


def test_tool_environment_drops_every_builtin_provider_key_variable() -> None:
    names = builtin_key_names()
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} <= names
    base = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "PATH": "/bin", "HOME": "/h"}
    assert tool_environment(base) == {"PATH": "/bin", "HOME": "/h"}
    assert names <= withheld_names()


def test_query_values_of_the_base_url_are_redacted_in_models_and_provider_errors() -> None:
    from xcsh.ai.errors import redact_credentials

    url = "https://bob:s3cretpass@host.example/v1?api-key=QSECRET123&region=eu&access_token=TOKEN4567#x"
    model = cast(Model, {"id": "m", "provider": "p", "baseUrl": url})
    shown = public_model(model)
    assert shown["baseUrl"] == (
        "https://[redacted]@host.example/v1?api-key=[redacted]&region=[redacted]&access_token=[redacted]#x"
    )
    error = f"connection failed for {url}: QSECRET123 rejected"
    cleaned = redact_credentials(error, model, None)
    assert "QSECRET123" not in cleaned and "TOKEN4567" not in cleaned and "s3cretpass" not in cleaned
    assert "region=eu" in cleaned


def test_a_base_url_with_only_a_query_or_only_userinfo_is_redacted_and_a_plain_one_is_shown_as_is() -> None:
    def shown(url: str) -> str:
        return public_model(cast(Model, {"id": "m", "provider": "p", "baseUrl": url}))["baseUrl"]

    assert (
        shown("http://127.0.0.1:9/v1?sig=ABCDEFGH12&x=1")
        == "http://127.0.0.1:9/v1?sig=[redacted]&x=[redacted]"
    )
    assert shown("https://u:passw0rd99@host/v1") == "https://[redacted]@host/v1"
    assert shown("https://host.example/v1") == "https://host.example/v1"


def test_a_user_name_alone_and_every_query_value_but_the_harmless_names_are_redacted() -> None:
    from xcsh.ai.errors import redact_credentials

    def shown(url: str) -> str:
        return public_model(cast(Model, {"id": "m", "provider": "p", "baseUrl": url}))["baseUrl"]

    url = "http://USERTOKEN1@127.0.0.1:9/v1?code=QSECRET1&pass=QSECRET2&pwd=QSECRET3&api-key=QSECRET4"
    assert shown(url) == (
        "http://[redacted]@127.0.0.1:9/v1?code=[redacted]&pass=[redacted]&pwd=[redacted]&api-key=[redacted]"
    )
    kept = "https://x.openai.azure.com/openai?api-version=2024-06-01&API_VERSION=1&alt=sse&beta=true"
    assert shown(kept) == kept
    assert shown("https://host/v1?BARETOKEN99&version=2") == "https://host/v1?[redacted]&version=2"
    assert (
        shown("https://host/v1?empty=&a@b=c") == "https://host/v1?empty=&a@b=[redacted]"
    )  # "@" in the query
    error = "401 from http://USERTOKEN1@127.0.0.1:9: QSECRET1, QSECRET2 and QSECRET3 and QSECRET4 refused"
    cleaned = redact_credentials(error, cast(Model, {"id": "m", "provider": "p", "baseUrl": url}), None)
    assert not any(
        secret in cleaned for secret in ("USERTOKEN1", "QSECRET1", "QSECRET2", "QSECRET3", "QSECRET4")
    )
    both = "https://USERNAME77:PASSWORD77@host/v1"
    cleaned = redact_credentials("user USERNAME77, password PASSWORD77", cast(Model, {"baseUrl": both}), None)
    assert cleaned == "user [redacted], password [redacted]"
