"""Token estimates and threshold maths (pure functions)."""

from __future__ import annotations

from xcsh.coding.compaction.tokens import (
    ThresholdSettings,
    compaction_threshold,
    context_tokens,
    estimate_tokens,
    exceeds_threshold,
    overflows_window,
    prompt_tokens,
    scaled_keep_budget,
)


def usage(
    input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0, total: int = 0
) -> dict[str, int]:
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": total,
    }


def test_estimates_are_a_quarter_of_the_characters_rounded_up() -> None:
    assert estimate_tokens({"role": "user", "content": "abcde"}) == 2
    assert estimate_tokens({"role": "user", "content": [{"type": "text", "text": "abcd"}]}) == 1
    assert estimate_tokens({"role": "user", "content": []}) == 0


def test_assistant_estimate_counts_text_thinking_and_tool_calls() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "a" * 8},
            {"type": "thinking", "thinking": "b" * 4},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}},
        ],
    }
    # 8 + 4 + len("read") + len('{"path":"x"}') = 28 characters
    assert estimate_tokens(message) == 7


def test_tool_result_images_count_4800_characters() -> None:
    message = {
        "role": "toolResult",
        "content": [
            {"type": "text", "text": "abcd"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ],
    }
    assert estimate_tokens(message) == (4 + 4800) // 4


def test_bash_and_summary_messages_are_estimated_from_their_text() -> None:
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "a\nb\n"}) == 2
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 9}) == 3
    assert estimate_tokens({"role": "branchSummary", "summary": "x" * 4}) == 1
    assert estimate_tokens({"role": "somethingElse", "content": "ignored"}) == 0


def test_context_tokens_prefer_the_provider_total() -> None:
    assert context_tokens(usage(100, 10, total=120)) == 120
    assert context_tokens(usage(100, 10, 5, 5)) == 120
    assert prompt_tokens(usage(100, 10, 5, 5)) == 110
    assert prompt_tokens(usage(0, 10, total=10)) == 10


def test_default_threshold_leaves_fifteen_percent_or_the_reserve() -> None:
    defaults = ThresholdSettings()
    assert compaction_threshold(128_000, defaults) == 108_800
    assert compaction_threshold(200_000, defaults) == 170_000
    assert compaction_threshold(50_000, defaults) == 50_000 - 16_384


def test_explicit_thresholds_take_precedence_and_are_clamped() -> None:
    assert compaction_threshold(10_000, ThresholdSettings(threshold_percent=50)) == 5_000
    assert compaction_threshold(10_000, ThresholdSettings(threshold_percent=150)) == 9_900
    assert (
        compaction_threshold(10_000, ThresholdSettings(threshold_percent=50, threshold_tokens=7_000)) == 7_000
    )
    assert compaction_threshold(10_000, ThresholdSettings(threshold_tokens=50_000)) == 9_999


def test_threshold_is_exceeded_only_above_it_and_never_without_a_window() -> None:
    settings = ThresholdSettings()
    assert exceeds_threshold(108_801, 128_000, settings)
    assert not exceeds_threshold(108_800, 128_000, settings)
    assert not exceeds_threshold(10**9, 0, settings)


def test_usage_overflow_compares_the_prompt_side_with_the_window() -> None:
    assert overflows_window({"usage": usage(900, 500, 200)}, 1000)
    assert not overflows_window({"usage": usage(900, 5000)}, 1000)
    assert not overflows_window({}, 1000)


def test_keep_budget_shrinks_when_the_provider_counts_more_than_estimated() -> None:
    assert scaled_keep_budget(20_000, 120_000, 5) == 1  # never below one token
    assert scaled_keep_budget(20_000, 40_000, 20_000) == 10_000
    assert scaled_keep_budget(20_000, 1, 100) == 20_000
    assert scaled_keep_budget(20_000, None, 100) == 20_000
