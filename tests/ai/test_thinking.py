"""Thinking levels against models: supported efforts, §9.3 resolution, cycling (S25/S26)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from xcsh.ai.catalog import find_builtin
from xcsh.ai.thinking import infer_thinking, next_level, parse_level, resolve_level, supported_efforts
from xcsh.ai.types import Model


def model(model_id: str = "custom", **overrides: Any) -> Model:
    base: dict[str, Any] = {
        "id": model_id,
        "name": model_id,
        "api": "openai-completions",
        "provider": "fake",
        "baseUrl": "http://127.0.0.1:8080/v1",
        "reasoning": True,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 4096,
    }
    base.update(overrides)
    return cast(Model, base)


FAKE_REASONER = model("fake-reasoner", thinking={"minLevel": "minimal", "maxLevel": "high", "mode": "effort"})
FAKE_MODEL = model("fake-model", reasoning=False)


def builtin(provider: str, model_id: str) -> Model:
    found = find_builtin(provider, model_id)
    assert found is not None, f"{provider}/{model_id} missing from the catalogue"
    return found


# ---- supported efforts -----------------------------------------------------------------
def test_non_reasoning_model_supports_no_effort() -> None:
    assert supported_efforts(FAKE_MODEL) == []


def test_explicit_thinking_range_gives_the_supported_efforts() -> None:
    assert supported_efforts(FAKE_REASONER) == ["minimal", "low", "medium", "high"]
    narrow = model(thinking={"minLevel": "low", "maxLevel": "medium", "mode": "effort"})
    assert supported_efforts(narrow) == ["low", "medium"]


@pytest.mark.parametrize(
    ("provider", "model_id", "expected"),
    [
        ("openai", "gpt-5.4", ["low", "medium", "high", "xhigh"]),
        ("openai", "gpt-5", ["minimal", "low", "medium", "high"]),
        ("openai", "gpt-5.1-codex-mini", ["medium", "high"]),
        ("google", "gemini-3-pro-preview", ["low", "high"]),
        ("google", "gemini-3-flash-preview", ["minimal", "low", "medium", "high"]),
        ("google", "gemini-2.5-pro", ["minimal", "low", "medium", "high"]),
        ("anthropic", "claude-opus-4-6", ["minimal", "low", "medium", "high", "xhigh"]),
        ("anthropic", "claude-sonnet-4-6", ["minimal", "low", "medium", "high"]),
        ("openrouter", "openai/gpt-5.4", ["low", "medium", "high", "xhigh"]),
        ("openrouter", "google/gemini-3.1-pro-preview", ["low", "high"]),
    ],
)
def test_family_rules_shape_the_catalogue_efforts(provider: str, model_id: str, expected: list[str]) -> None:
    assert supported_efforts(builtin(provider, model_id)) == expected


def test_family_rules_cut_an_explicit_range_that_is_too_wide() -> None:
    too_wide = {"minLevel": "minimal", "maxLevel": "xhigh", "mode": "effort"}
    assert supported_efforts(model("gpt-5.2", api="openai-responses", thinking=too_wide)) == [
        "low",
        "medium",
        "high",
        "xhigh",
    ]
    sonnet = model("claude-sonnet-4-6", api="anthropic-messages", thinking=too_wide)
    assert supported_efforts(sonnet) == ["minimal", "low", "medium", "high"]
    assert supported_efforts(model("gemini-3-pro", api="google-generative-ai", thinking=too_wide)) == [
        "low",
        "high",
    ]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"api": "openai-responses"}, ["minimal", "low", "medium", "high", "xhigh"]),
        ({"api": "anthropic-messages"}, ["minimal", "low", "medium", "high"]),
        ({"api": "google-generative-ai"}, ["low", "medium", "high"]),
        ({"api": "openai-completions"}, ["minimal", "low", "medium", "high", "xhigh"]),
        ({"api": "openai-completions", "provider": "openrouter"}, ["minimal", "low", "medium", "high"]),
        (
            {"api": "openai-completions", "compat": {"supportsReasoningEffort": False}},
            ["minimal", "low", "medium", "high"],
        ),
    ],
)
def test_reasoning_model_without_thinking_metadata_gets_a_range_from_its_api(
    overrides: dict[str, Any], expected: list[str]
) -> None:
    assert supported_efforts(model("mystery-reasoner", **overrides)) == expected


def test_infer_thinking_describes_the_inferred_range_and_mode() -> None:
    assert infer_thinking(model("mystery", api="google-generative-ai")) == {
        "minLevel": "low",
        "maxLevel": "high",
        "mode": "budget",
    }
    assert infer_thinking(model("gemini-3-flash-preview", api="google-generative-ai")) == {
        "minLevel": "minimal",
        "maxLevel": "high",
        "mode": "google-level",
    }
    assert infer_thinking(model("claude-opus-4-6", api="anthropic-messages")) == {
        "minLevel": "minimal",
        "maxLevel": "xhigh",
        "mode": "anthropic-adaptive",
    }
    assert infer_thinking(model("claude-sonnet-4-5", api="anthropic-messages"))["mode"] == (
        "anthropic-budget-effort"
    )
    assert infer_thinking(FAKE_MODEL) is None


# ---- resolution (§9.3 table) -------------------------------------------------------------
@pytest.mark.parametrize("target", [FAKE_MODEL, FAKE_REASONER])
def test_unset_stays_unset_and_off_stays_off(target: Model) -> None:
    assert resolve_level(target, None) is None
    assert resolve_level(target, "off") == "off"


@pytest.mark.parametrize("level", ["minimal", "low", "medium", "high", "xhigh"])
def test_any_effort_on_a_non_reasoning_model_becomes_unset(level: str) -> None:
    assert resolve_level(FAKE_MODEL, level) is None


@pytest.mark.parametrize("target", [FAKE_MODEL, FAKE_REASONER])
def test_unknown_level_string_becomes_unset(target: Model) -> None:
    assert resolve_level(target, "bogus") is None
    assert resolve_level(target, "HIGH") is None
    assert resolve_level(target, "") is None


def test_supported_effort_is_kept_as_is() -> None:
    for level in ("minimal", "low", "medium", "high"):
        assert resolve_level(FAKE_REASONER, level) == level


def test_default_xhigh_clamps_to_the_highest_supported_level() -> None:
    assert resolve_level(FAKE_REASONER, "xhigh") == "high"  # S26


def test_unsupported_effort_drops_to_the_highest_supported_level_below_it() -> None:
    gemini_pro = builtin("google", "gemini-3-pro-preview")  # low, high
    assert resolve_level(gemini_pro, "medium") == "low"
    assert resolve_level(gemini_pro, "xhigh") == "high"


def test_effort_below_every_supported_level_rises_to_the_lowest() -> None:
    gemini_pro = builtin("google", "gemini-3-pro-preview")
    assert resolve_level(gemini_pro, "minimal") == "low"
    codex_mini = builtin("openai", "gpt-5.1-codex-mini")  # medium, high
    assert resolve_level(codex_mini, "low") == "medium"


def test_parse_level_accepts_only_the_six_names() -> None:
    assert [parse_level(v) for v in ("off", "minimal", "xhigh")] == ["off", "minimal", "xhigh"]
    assert [parse_level(v) for v in ("max", "inherit", None, 3)] == [None, None, None, None]


# ---- cycling (cycle_thinking_level) ---------------------------------------------------------
def test_cycling_a_non_reasoning_model_gives_none() -> None:
    assert next_level(FAKE_MODEL, None) is None
    assert next_level(FAKE_MODEL, "off") is None


def test_cycling_walks_off_then_every_supported_effort_and_wraps() -> None:
    # S26: the model starts at high (xhigh clamped); cycling wraps to off, then minimal, low …
    sequence = []
    level = resolve_level(FAKE_REASONER, "xhigh")
    for _ in range(6):
        level = next_level(FAKE_REASONER, level)
        sequence.append(level)
    assert sequence == ["off", "minimal", "low", "medium", "high", "off"]


def test_cycling_from_unset_or_an_unlisted_level_gives_off() -> None:
    assert next_level(FAKE_REASONER, None) == "off"
    assert next_level(FAKE_REASONER, "xhigh") == "off"  # not supported by this model
    assert next_level(FAKE_REASONER, "bogus") == "off"


def test_cycling_from_inherit_counts_it_as_off() -> None:
    assert next_level(FAKE_REASONER, "inherit") == "minimal"


def test_cycling_uses_the_model_family_efforts() -> None:
    gemini_pro = builtin("google", "gemini-3-pro-preview")
    assert [next_level(gemini_pro, lvl) for lvl in ("off", "low", "high")] == ["low", "high", "off"]
