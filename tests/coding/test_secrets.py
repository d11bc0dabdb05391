"""What hosts and tool processes are shown of the credentials xcsh reads."""

from __future__ import annotations

from typing import Any, cast

from xcsh.ai.types import Model
from xcsh.coding.secrets import builtin_key_names, public_model, tool_environment, withheld_names


def test_public_models_hide_header_values_and_url_passwords_but_not_the_rest() -> None:
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
    assert shown["baseUrl"] == "https://bob:[redacted]@host.example/v1"
    assert (shown["id"], shown["provider"]) == ("m", "p")
    assert cast(dict[str, Any], model)["headers"] == {"X-K": "v"}  # the model itself is untouched


def test_tool_environment_drops_every_builtin_provider_key_variable() -> None:
    names = builtin_key_names()
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} <= names
    base = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "PATH": "/bin", "HOME": "/h"}
    assert tool_environment(base) == {"PATH": "/bin", "HOME": "/h"}
    assert names <= withheld_names()


def test_key_like_query_values_of_the_base_url_are_redacted_in_models_and_provider_errors() -> None:
    from xcsh.ai.errors import redact_credentials

    url = "https://bob:s3cretpass@host.example/v1?api-key=QSECRET123&region=eu&access_token=TOKEN4567#x"
    model = cast(Model, {"id": "m", "provider": "p", "baseUrl": url})
    shown = public_model(model)
    assert shown["baseUrl"] == (
        "https://bob:[redacted]@host.example/v1?api-key=[redacted]&region=eu&access_token=[redacted]#x"
    )
    error = f"connection failed for {url}: QSECRET123 rejected"
    cleaned = redact_credentials(error, model, None)
    assert "QSECRET123" not in cleaned and "TOKEN4567" not in cleaned and "s3cretpass" not in cleaned
    assert "region=eu" in cleaned


def test_a_base_url_with_only_a_query_or_only_userinfo_is_redacted_and_a_plain_one_is_shown_as_is() -> None:
    def shown(url: str) -> str:
        return public_model(cast(Model, {"id": "m", "provider": "p", "baseUrl": url}))["baseUrl"]

    assert shown("http://127.0.0.1:9/v1?sig=ABCDEFGH12&x=1") == "http://127.0.0.1:9/v1?sig=[redacted]&x=1"
    assert shown("https://u:passw0rd99@host/v1") == "https://u:[redacted]@host/v1"
    assert shown("https://host.example/v1") == "https://host.example/v1"
