"""The bundled model catalogue: complete model objects, current families, provider key table."""

from __future__ import annotations

import subprocess
import sys

import pytest

from xcsh.ai.catalog import (
    builtin_models,
    builtin_providers,
    env_api_key,
    find_builtin,
    provider_env_vars,
    provider_info,
)
from xcsh.ai.thinking import EFFORT_LEVELS, supported_efforts

REQUIRED = {
    "id": str,
    "name": str,
    "api": str,
    "provider": str,
    "baseUrl": str,
    "reasoning": bool,
    "input": list,
    "cost": dict,
    "contextWindow": int,
    "maxTokens": int,
}

ENV_VARS = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
}


def ids(provider: str) -> list[str]:
    return [m["id"] for m in builtin_models() if m["provider"] == provider]


def test_every_model_has_every_model_field_with_the_right_type() -> None:
    for model in builtin_models():
        for field, kind in REQUIRED.items():
            assert isinstance(model.get(field), kind), f"{model.get('id')}: {field}"
        assert set(model["cost"]) == {"input", "output", "cacheRead", "cacheWrite"}
        assert all(isinstance(v, (int, float)) and v >= 0 for v in model["cost"].values())
        assert model["input"] and set(model["input"]) <= {"text", "image"}
        assert 0 < model["maxTokens"] <= model["contextWindow"]


def test_reasoning_models_carry_a_valid_thinking_range_and_others_none() -> None:
    for model in builtin_models():
        if model["reasoning"]:
            thinking = model["thinking"]
            assert thinking["minLevel"] in EFFORT_LEVELS and thinking["maxLevel"] in EFFORT_LEVELS
            assert EFFORT_LEVELS.index(thinking["minLevel"]) <= EFFORT_LEVELS.index(thinking["maxLevel"])
            assert thinking["mode"] in (
                "effort",
                "budget",
                "google-level",
                "anthropic-adaptive",
                "anthropic-budget-effort",
            )
            assert supported_efforts(model), model["id"]
        else:
            assert "thinking" not in model, model["id"]


def test_model_ids_are_unique_within_each_provider() -> None:
    keys = [(m["provider"], m["id"]) for m in builtin_models()]
    assert len(keys) == len(set(keys))


def test_each_model_uses_its_provider_api_and_base_url() -> None:
    for model in builtin_models():
        info = provider_info(model["provider"])
        assert info is not None
        assert (model["api"], model["baseUrl"]) == (info.api, info.base_url)


def test_current_anthropic_openai_and_google_families_are_present() -> None:
    anthropic = ids("anthropic")
    for family in ("claude-opus-4", "claude-sonnet-4", "claude-haiku-4"):
        assert any(i.startswith(family) for i in anthropic), family
    openai = ids("openai")
    assert any(i.startswith("gpt-5") and i.endswith("-mini") for i in openai)
    assert any(i.startswith("gpt-5") and i.endswith("-nano") for i in openai)
    assert any(i.startswith(("o3", "o4")) for i in openai)
    google = ids("google")
    for family in ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro", "gemini-3-flash"):
        assert any(i.startswith(family) for i in google), family


@pytest.mark.parametrize(
    ("provider", "api"),
    [
        ("anthropic", "anthropic-messages"),
        ("openai", "openai-responses"),
        ("google", "google-generative-ai"),
        ("openrouter", "openai-completions"),
        ("groq", "openai-completions"),
        ("xai", "openai-completions"),
        ("deepseek", "openai-completions"),
        ("mistral", "openai-completions"),
        ("cerebras", "openai-completions"),
    ],
)
def test_each_provider_has_models_on_its_wire_api(provider: str, api: str) -> None:
    models = [m for m in builtin_models() if m["provider"] == provider]
    assert models
    assert {m["api"] for m in models} == {api}


def test_provider_table_names_the_key_environment_variables() -> None:
    for provider, names in ENV_VARS.items():
        assert provider_env_vars(provider) == names
    assert provider_env_vars("local") == ()
    assert provider_env_vars("no-such-provider") == ()


def test_local_model_is_keyless_and_last_in_registry_order() -> None:
    models = builtin_models()
    assert models[-1] == {
        "id": "qwen2.5-coder-1.5b-instruct",
        "name": "Qwen2.5-Coder 1.5B Instruct (local, Q4_K_M)",
        "api": "local-llamacpp",
        "provider": "local",
        "baseUrl": "http://127.0.0.1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 32768,
        "maxTokens": 4096,
        "compat": {"constrainedToolCalls": True, "promptProfile": "small"},
        "sampling": {"temperature": 0.2},
    }
    local = provider_info("local")
    assert local is not None and local.keyless and local.fallback
    assert [p.id for p in builtin_providers() if p.keyless] == ["local"]


def test_gemini_key_is_preferred_over_google_key_and_empty_values_are_ignored() -> None:
    assert env_api_key("google", {"GEMINI_API_KEY": "g1", "GOOGLE_API_KEY": "g2"}) == "g1"
    assert env_api_key("google", {"GEMINI_API_KEY": "", "GOOGLE_API_KEY": "g2"}) == "g2"
    assert env_api_key("google", {}) is None
    assert env_api_key("anthropic", {"OPENAI_API_KEY": "o"}) is None


def test_lookups_return_copies_that_callers_may_modify() -> None:
    first = find_builtin("anthropic", "claude-sonnet-4-6")
    assert first is not None
    first["cost"]["input"] = 999
    builtin_models()[0]["name"] = "changed"
    again = find_builtin("anthropic", "claude-sonnet-4-6")
    assert again is not None and again["cost"]["input"] == 3
    assert builtin_models()[0]["name"] != "changed"
    assert find_builtin("anthropic", "no-such-model") is None


def test_importing_the_catalogue_module_does_not_read_the_json() -> None:
    probe = "import xcsh.ai.catalog as c; print(c._load.cache_info().currsize); c.builtin_models(); print(c._load.cache_info().currsize)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["0", "1"]


def test_the_local_modules_default_model_is_the_catalogues_entry_but_for_its_base_url() -> None:
    from xcsh.ai.local import default_model

    catalogue = next(m for m in builtin_models() if m["provider"] == "local")
    built = default_model()
    assert built["baseUrl"] == "" and built["sampling"] == {"temperature": 0.2}
    assert {**built, "baseUrl": catalogue["baseUrl"]} == catalogue
    assert default_model(context_window=2048)["contextWindow"] == 2048
