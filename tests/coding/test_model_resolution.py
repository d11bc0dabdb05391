"""The model registry: resolving selectors (provider/id, levels, fuzzy patterns), scoped models
(``--models``) and ``--list-models``."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding.model_helpers import registry
from xcsh.ai.thinking import next_level, resolve_level
from xcsh.coding.models import (
    ModelResolutionError,
    format_model_list,
    model_key,
)


# ---- resolution -----------------------------------------------------------------------
def test_provider_slash_id_resolves_exactly(tmp_path: Path) -> None:
    model, level = registry(tmp_path).resolve("fake/fake-reasoner")
    assert (model_key(model), level) == ("fake/fake-reasoner", None)


def test_level_suffix_is_split_off_when_it_is_a_valid_level(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    model, level = reg.resolve("fake/fake-reasoner:high")
    assert (model["id"], level) == ("fake-reasoner", "high")
    model, level = reg.resolve("fake-model:off")
    assert (model["id"], level) == ("fake-model", "off")
    with pytest.raises(ModelResolutionError, match='Model "fake-model:turbo" not found'):
        reg.resolve("fake-model:turbo")


def test_ids_containing_colons_match_before_a_level_is_split_off(tmp_path: Path) -> None:
    yml = "providers:\n  c:\n    baseUrl: http://127.0.0.1:1/v1\n    api: openai-completions\n    auth: none\n    models: [{id: 'coder:high'}, {id: coder}]\n"
    reg = registry(tmp_path, yml)
    assert reg.resolve("c/coder:high")[0]["id"] == "coder:high"
    assert reg.resolve("c/coder:low") == (reg.find("c", "coder"), "low")


def test_bare_id_and_fuzzy_patterns_are_case_insensitive(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    assert reg.resolve("FAKE-REASONER")[0]["id"] == "fake-reasoner"
    assert reg.resolve("Reasoner")[0]["id"] == "fake-reasoner"
    assert reg.resolve("claude sonnet 4.6")[0]["id"] == "claude-sonnet-4-6"  # matches the display name


def test_exact_id_wins_over_a_substring_match(tmp_path: Path) -> None:
    reg = registry(tmp_path, env={"OPENAI_API_KEY": "k"})
    assert model_key(reg.resolve("gpt-5")[0]) == "openai/gpt-5"
    assert model_key(reg.resolve("o3")[0]) == "openai/o3"


def test_fuzzy_match_prefers_available_models(tmp_path: Path) -> None:
    unkeyed = registry(tmp_path)
    assert unkeyed.resolve("gpt-5.4")[0]["provider"] == "openai"  # registry order when nothing is keyed
    keyed = registry(tmp_path, env={"OPENROUTER_API_KEY": "k"})
    assert model_key(keyed.resolve("5.4-mini")[0]) == "openrouter/openai/gpt-5.4-mini"
    assert model_key(keyed.resolve("gpt-5.4-mini")[0]) == "openai/gpt-5.4-mini"  # an exact id still wins


def test_slash_ids_of_aggregators_resolve_exactly(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    model, _ = reg.resolve("anthropic/claude-sonnet-4.6")  # not Anthropic's own id: OpenRouter's
    assert model_key(model) == "openrouter/anthropic/claude-sonnet-4.6"
    assert model_key(reg.resolve("anthropic/sonnet-4-6")[0]) == "anthropic/claude-sonnet-4-6"


def test_provider_option_restricts_the_search_case_insensitively(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    assert model_key(reg.resolve("gpt-5.4", provider="OpenRouter")[0]) == "openrouter/openai/gpt-5.4"
    assert model_key(reg.resolve("fake/fake-model", provider="fake")[0]) == "fake/fake-model"


def test_unknown_provider_gives_the_reference_message(tmp_path: Path) -> None:
    with pytest.raises(ModelResolutionError) as info:
        registry(tmp_path).resolve("fake-model", provider="nope")
    assert str(info.value) == 'Unknown provider "nope". Use --list-models to see available providers/models.'


def test_unknown_model_gives_a_clear_message(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    with pytest.raises(ModelResolutionError) as info:
        reg.resolve("no-such-model")
    assert str(info.value) == 'Model "no-such-model" not found. Use --list-models to see available models.'
    with pytest.raises(ModelResolutionError, match='Model "fake/zzz" not found'):
        reg.resolve("zzz", provider="fake")
    with pytest.raises(ModelResolutionError):
        reg.resolve("   ")


def test_resolved_level_is_then_clamped_by_the_thinking_rules(tmp_path: Path) -> None:
    model, level = registry(tmp_path).resolve("fake/fake-reasoner:xhigh")
    assert level == "xhigh"
    assert resolve_level(model, level) == "high"


# ---- scoped models (--models) ----------------------------------------------------------
def test_scope_keeps_pattern_order_levels_and_only_available_models(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    scoped = reg.resolve_scope(["fake-reasoner:low", "fake/fake-model", "claude-sonnet-4-6"])
    assert [(model_key(m), lvl) for m, lvl in scoped] == [
        ("fake/fake-reasoner", "low"),
        ("fake/fake-model", None),
    ]


def test_scope_accepts_globs_commas_and_drops_duplicates(tmp_path: Path) -> None:
    reg = registry(tmp_path, env={"ANTHROPIC_API_KEY": "k"})
    scoped = reg.resolve_scope(["fake/*:medium,claude-opus-4-6", "*reasoner", "nothing-matches-this"])
    assert [(model_key(m), lvl) for m, lvl in scoped] == [
        ("fake/fake-model", "medium"),
        ("fake/fake-reasoner", "medium"),
        ("anthropic/claude-opus-4-6", None),
    ]


def test_scoped_cycling_order_and_each_models_own_level(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    scoped = reg.resolve_scope(["fake-model", "fake-reasoner:xhigh"])
    # cycle_model walks the scoped list forward, applying each model's own (resolved) level
    walk = [scoped[(i + 1) % len(scoped)] for i in range(3)]
    effective = [(m["id"], resolve_level(m, lvl)) for m, lvl in walk]
    assert effective == [("fake-reasoner", "high"), ("fake-model", None), ("fake-reasoner", "high")]
    reasoner = walk[0][0]
    assert next_level(reasoner, "high") == "off"


# ---- --list-models ---------------------------------------------------------------------
def test_model_list_shows_available_models_in_a_table(tmp_path: Path) -> None:
    table = format_model_list(registry(tmp_path).available_models())
    lines = table.splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    assert lines[1].split() == ["fake", "fake-model", "128K", "4.1K", "-", "no"]
    assert lines[2].split() == ["fake", "fake-reasoner", "128K", "16K", "minimal,low,medium,high", "no"]
    assert len(lines) == 3
    assert lines[1].index("fake-model") == lines[0].index("model")  # columns are aligned


def test_model_list_filters_by_fuzzy_pattern(tmp_path: Path) -> None:
    models = registry(tmp_path, env={"ANTHROPIC_API_KEY": "k"}).available_models()
    table = format_model_list(models, "fake reas")
    assert [line.split()[:2] for line in table.splitlines()[1:]] == [["fake", "fake-reasoner"]]
    # every token must appear as an in-order character sequence of "provider id"
    opus = format_model_list(models, "anth claude-opus-4-6")
    assert [line.split()[1] for line in opus.splitlines()[1:]] == ["claude-opus-4-6"]
    assert "1.0M" in opus  # Opus 4.6 has a million-token window
    assert format_model_list(models, "zzzz") == 'No models matching "zzzz"'


def test_model_list_without_models_says_how_to_add_keys() -> None:
    message = format_model_list([])
    assert message.startswith("No models available.")
    assert "ANTHROPIC_API_KEY" in message and "models.yml" in message
