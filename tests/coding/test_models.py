"""The model registry: models.yml loading and errors, keys, availability (selectors, scopes and
listing: test_model_resolution.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coding.model_helpers import FAKE_YML, keys, registry
from xcsh.coding.auth import looks_like_env_name, resolve_config_key
from xcsh.coding.models import (
    ModelRegistry,
    ModelsConfigError,
)


def load_error(tmp_path: Path, yml: str, name: str = "models.yml") -> str:
    with pytest.raises(ModelsConfigError) as info:
        registry(tmp_path, yml, name=name)
    message = str(info.value)
    assert message.startswith(str(tmp_path / name) + ": ")
    assert "Traceback" not in message
    return message


# ---- loading --------------------------------------------------------------------------
def test_custom_models_get_reference_defaults(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    model = reg.find("fake", "fake-reasoner")
    assert model == {
        "id": "fake-reasoner",
        "name": "fake-reasoner",
        "api": "openai-completions",
        "provider": "fake",
        "baseUrl": "http://127.0.0.1:8080/v1",
        "reasoning": True,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
        "thinking": {"minLevel": "minimal", "maxLevel": "high", "mode": "effort"},
    }
    assert reg.source == tmp_path / "models.yml"


def test_only_fake_models_are_available_without_keys(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    assert keys(reg.available_models()) == ["fake/fake-model", "fake/fake-reasoner"]  # S24
    assert len(reg.all_models()) > 2


def test_custom_models_come_after_the_catalogue_and_before_the_local_model(tmp_path: Path) -> None:
    models = keys(registry(tmp_path).all_models())
    assert models.index("fake/fake-model") > models.index("anthropic/claude-sonnet-4-6")
    assert models[-1] == "local/qwen2.5-coder-1.5b-instruct"
    assert models[-3:-1] == ["fake/fake-model", "fake/fake-reasoner"]


def test_missing_models_file_gives_the_bare_catalogue(tmp_path: Path) -> None:
    reg = registry(tmp_path, yml=None)
    assert reg.source is None
    assert reg.find("fake", "fake-model") is None
    assert reg.available_models() == []
    assert reg.default_model() is None


def test_models_json_is_read_when_there_is_no_yml(tmp_path: Path) -> None:
    json_text = (
        '{"providers": {"j": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",'
        ' "auth": "none", "models": [{"id": "jm", "name": "JSON model", "input": ["text", "image"]}]}}}'
    )
    reg = registry(tmp_path, json_text, name="models.json")
    model = reg.find("j", "jm")
    assert model is not None and model["name"] == "JSON model" and model["input"] == ["text", "image"]
    assert keys(reg.available_models()) == ["j/jm"]


def test_model_level_fields_override_provider_level_ones(tmp_path: Path) -> None:
    yml = """\
providers:
  mixed:
    baseUrl: http://127.0.0.1:1/v1
    api: openai-completions
    auth: none
    headers: {X-Team: core, X-Env: test}
    compat: {supportsDeveloperRole: true, maxTokensField: max_tokens}
    models:
      - id: a
        api: anthropic-messages
        headers: {X-Env: model}
        compat: {maxTokensField: max_completion_tokens}
        cost: {input: 1.5, output: 6}
        contextPromotionTarget: mixed/b
      - id: b
"""
    reg = registry(tmp_path, yml)
    a, b = reg.find("mixed", "a"), reg.find("mixed", "b")
    assert a is not None and b is not None
    assert a["api"] == "anthropic-messages" and b["api"] == "openai-completions"
    assert a["headers"] == {"X-Team": "core", "X-Env": "model"}
    assert a["compat"] == {"supportsDeveloperRole": True, "maxTokensField": "max_completion_tokens"}
    assert a["cost"] == {"input": 1.5, "output": 6, "cacheRead": 0, "cacheWrite": 0}
    assert a["contextPromotionTarget"] == "mixed/b"
    assert b["headers"] == {"X-Team": "core", "X-Env": "test"}


def test_custom_reasoning_model_without_thinking_gets_inferred_thinking(tmp_path: Path) -> None:
    yml = """\
providers:
  r:
    baseUrl: http://127.0.0.1:1/v1
    api: openai-completions
    apiKey: k
    models:
      - id: thinker
        reasoning: true
      - id: plain
        thinking: {minLevel: low, maxLevel: high}
"""
    reg = registry(tmp_path, yml)
    thinker, plain = reg.find("r", "thinker"), reg.find("r", "plain")
    assert thinker is not None and plain is not None
    assert thinker["thinking"] == {"minLevel": "minimal", "maxLevel": "xhigh", "mode": "effort"}
    assert "thinking" not in plain  # only reasoning models carry thinking metadata


def test_builtin_provider_override_changes_base_url_of_its_catalogue_models(tmp_path: Path) -> None:
    yml = """\
providers:
  openrouter:
    baseUrl: http://127.0.0.1:9/api/v1
    headers: {X-Proxy: 'on'}
"""
    reg = registry(tmp_path, yml)
    model = reg.find("openrouter", "openai/gpt-5.4")
    assert model is not None
    assert model["baseUrl"] == "http://127.0.0.1:9/api/v1"
    assert model["headers"] == {"X-Proxy": "on"}
    assert reg.find("anthropic", "claude-sonnet-4-6")["baseUrl"] == "https://api.anthropic.com"


def test_builtin_provider_models_replace_same_id_entries_and_add_new_ones(tmp_path: Path) -> None:
    yml = """\
providers:
  anthropic:
    apiKey: sk-from-yml
    models:
      - id: claude-sonnet-4-6
        contextWindow: 200000
      - id: claude-next
        reasoning: true
"""
    reg = registry(tmp_path, yml)
    sonnet = reg.find("anthropic", "claude-sonnet-4-6")
    assert sonnet is not None
    assert sonnet["contextWindow"] == 200000
    assert sonnet["name"] == "Claude Sonnet 4.6"  # untouched catalogue fields stay
    assert sonnet["thinking"]["mode"] == "anthropic-adaptive"
    new = reg.find("anthropic", "claude-next")
    assert new is not None
    assert (new["api"], new["baseUrl"]) == ("anthropic-messages", "https://api.anthropic.com")
    assert keys(reg.all_models()).count("anthropic/claude-sonnet-4-6") == 1
    assert reg.api_key_for("anthropic") == "sk-from-yml"
    assert "anthropic/claude-next" in keys(reg.available_models())


def test_sampling_in_models_yml_is_kept_on_new_models_and_merged_into_catalogue_entries(
    tmp_path: Path,
) -> None:
    yml = """\
providers:
  anthropic:
    models:
      - id: claude-sonnet-4-6
        sampling: {topK: 40}
  llamacpp:
    baseUrl: http://127.0.0.1:9/v1
    api: openai-completions
    auth: none
    models:
      - id: coder
        sampling: {temperature: 0.3, topP: 0.9, topK: 20, minP: 0.05, repeatPenalty: 1.05}
"""
    reg = registry(tmp_path, yml)
    coder = reg.find("llamacpp", "coder")
    assert coder is not None
    assert coder["sampling"] == {
        "temperature": 0.3,
        "topP": 0.9,
        "topK": 20,
        "minP": 0.05,
        "repeatPenalty": 1.05,
    }
    sonnet = reg.find("anthropic", "claude-sonnet-4-6")
    assert sonnet is not None and sonnet["sampling"] == {"topK": 40}


# ---- broken files ---------------------------------------------------------------------
def test_yaml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    message = load_error(tmp_path, "providers:\n  fake:\n    baseUrl: [unclosed\n    api: x\n")
    assert "invalid YAML at line" in message
    assert "line 4" in message or "line 3" in message


def test_json_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    message = load_error(tmp_path, '{"providers": {\n  "x": }', name="models.json")
    assert "invalid JSON at line 2" in message


@pytest.mark.parametrize(
    ("yml", "expected"),
    [
        ("- just\n- a list\n", "expected a mapping with a 'providers' key, got a list"),
        ("providers: [a, b]\n", "'providers' must be a mapping"),
        ("providers:\n  p: 3\n", "providers.p must be a mapping, got a number"),
        (
            "providers:\n  p:\n    api: openai-completions\n    apiKey: k\n    models: [{id: m}]\n",
            'providers.p: "baseUrl" is required',
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h/v1\n    apiKey: k\n    models: [{id: m}]\n",
            'providers.p.models[0] (m): no "api" specified',
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h/v1\n    api: openai-completions\n    models: [{id: m}]\n",
            '"apiKey" is required when defining custom models unless auth is "none"',
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n    models: [{name: m}]\n",
            'providers.p.models[0]: "id" is required',
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, contextWindow: lots}]\n",
            "providers.p.models[0].contextWindow must be a positive integer, got 'lots'",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n    models: [{id: m, maxTokens: 0}]\n",
            "providers.p.models[0].maxTokens must be a positive integer",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, reasoning: maybe}]\n",
            "providers.p.models[0].reasoning must be true or false",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n    models: [{id: m, input: [audio]}]\n",
            "providers.p.models[0].input must be a non-empty list",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, thinking: {minLevel: high, maxLevel: low}}]\n",
            "minLevel high is above maxLevel low",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, cost: {input: free}}]\n",
            "providers.p.models[0].cost.input must be a non-negative number",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, sampling: {temperature: 3}}]\n",
            "providers.p.models[0].sampling.temperature must be a number in 0.0..2.0, got 3",
        ),
        (  # fuzz-found: NaN passes every comparison; frames then carried null costs
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, cost: {input: .nan}}]\n",
            "providers.p.models[0].cost.input must be a non-negative number, got nan",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, cost: {output: .inf}}]\n",
            "providers.p.models[0].cost.output must be a non-negative number, got inf",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, sampling: {temperature: .nan}}]\n",
            "providers.p.models[0].sampling.temperature must be a number in 0.0..2.0, got nan",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, sampling: {repeatPenalty: .inf}}]\n",
            "providers.p.models[0].sampling.repeatPenalty must be a number >= 0.0, got inf",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, sampling: {topK: 2.5}}]\n",
            "providers.p.models[0].sampling.topK must be an integer >= 1, got 2.5",
        ),
        (
            "providers:\n  p:\n    baseUrl: http://h\n    api: x\n    auth: none\n"
            "    models: [{id: m, sampling: {temprature: 0.5}}]\n",
            "providers.p.models[0].sampling: unknown key 'temprature'",
        ),
        ("providers:\n  p:\n    auth: maybe\n", "providers.p.auth must be 'apiKey' or 'none'"),
        (
            "providers:\n  p:\n    baseUrl: 42\n",
            "providers.p.baseUrl must be a non-empty string, got a number",
        ),
        ("providers:\n  p:\n    models: {id: m}\n", "providers.p.models must be a list"),
        ("providers:\n  p: {}\n", "providers.p: nothing to configure"),
    ],
)
def test_invalid_config_is_reported_with_the_offending_field(tmp_path: Path, yml: str, expected: str) -> None:
    assert expected in load_error(tmp_path, yml)


def test_empty_file_is_not_an_error(tmp_path: Path) -> None:
    assert registry(tmp_path, "").find("fake", "fake-model") is None


# ---- keys -----------------------------------------------------------------------------
def test_key_order_is_runtime_then_environment_then_models_yml(tmp_path: Path) -> None:
    yml = "providers:\n  openai:\n    apiKey: from-yml\n"
    reg = registry(tmp_path, yml, env={"OPENAI_API_KEY": "from-env"})
    assert reg.api_key_for("openai") == "from-env"
    reg.set_runtime_api_key("openai", "from-flag")
    assert reg.api_key_for("openai") == "from-flag"
    assert registry(tmp_path, yml, env={}).api_key_for("openai") == "from-yml"


def test_models_yml_api_key_may_name_an_environment_variable(tmp_path: Path) -> None:
    yml = FAKE_YML.replace("apiKey: test-key", "apiKey: FAKE_SERVICE_KEY")
    assert registry(tmp_path, yml, env={"FAKE_SERVICE_KEY": "secret"}).api_key_for("fake") == "secret"
    unset = registry(tmp_path, yml, env={})
    assert unset.api_key_for("fake") is None  # an unset variable name is never sent as the key
    assert unset.available_models() == []


def test_config_key_resolution_rules() -> None:
    assert resolve_config_key("sk-literal", {}) == "sk-literal"
    assert resolve_config_key("MY_KEY", {"MY_KEY": "v"}) == "v"
    assert resolve_config_key("MY_KEY", {}) is None
    assert resolve_config_key("lowercase_name", {}) == "lowercase_name"


_ENV_NAME_PATTERN = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+")


@given(st.text(alphabet="AZaz09_ \n-É", max_size=12))
def test_the_env_name_check_agrees_with_its_regular_expression(value: str) -> None:
    assert looks_like_env_name(value) == bool(_ENV_NAME_PATTERN.fullmatch(value))


def test_the_env_name_check_on_edge_cases() -> None:
    cases = [
        "A_B",
        "FOO_API_KEY",
        "K2_V3",
        "A",
        "A_",
        "_A",
        "A__B",
        "a_B",
        "A_b",
        "A_B\n",
        "2A_B",
        "",
        "_",
        "É_A",
    ]
    for value in cases:
        assert looks_like_env_name(value) == bool(_ENV_NAME_PATTERN.fullmatch(value)), value


def test_google_models_become_available_with_either_google_variable(tmp_path: Path) -> None:
    for variable in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        reg = registry(tmp_path, yml=None, env={variable: "g"})
        providers = {m["provider"] for m in reg.available_models()}
        assert providers == {"google"}
        assert reg.api_key_for("google") == "g"


def test_runtime_key_makes_a_provider_available(tmp_path: Path) -> None:
    reg = registry(tmp_path, yml=None)
    assert reg.default_model() is None
    reg.set_runtime_api_key("anthropic", "sk-runtime")
    default = reg.default_model()
    assert default is not None and default["provider"] == "anthropic"


def test_keyless_custom_provider_is_available_and_has_no_key(tmp_path: Path) -> None:
    yml = "providers:\n  k:\n    baseUrl: http://127.0.0.1:1/v1\n    api: openai-completions\n    auth: none\n    models: [{id: m}]\n"
    reg = registry(tmp_path, yml)
    assert keys(reg.available_models()) == ["k/m"]
    assert reg.is_keyless("k")
    assert reg.api_key_for("k") is None


def test_disabled_provider_is_never_available(tmp_path: Path) -> None:
    (tmp_path / "models.yml").write_text(FAKE_YML)
    reg = ModelRegistry.load(tmp_path, env={"OPENAI_API_KEY": "k"}, disabled_providers={"fake", "local"})
    assert {m["provider"] for m in reg.available_models()} == {"openai"}


def test_default_model_is_the_first_available_in_registry_order(tmp_path: Path) -> None:
    reg = registry(tmp_path, env={"GROQ_API_KEY": "g"})
    default = reg.default_model()
    assert default is not None and default["provider"] == "groq"
    assert registry(tmp_path).default_model()["id"] == "fake-model"
