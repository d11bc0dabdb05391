"""The options of each model call follow the settings (thinking budgets read again after a change)."""

from __future__ import annotations

from pathlib import Path

from coding.session_helpers import fake_session
from xcsh.ai.abort import AbortController
from xcsh.ai.options import DEFAULT_THINKING_BUDGETS
from xcsh.testing.fake_llm import FakeLLM


def test_each_calls_thinking_budgets_are_the_settings_of_that_moment(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    session = fake_session(tmp_path, fake_llm.base_url)
    try:
        models = session._models
        signal = AbortController().signal

        def budgets() -> dict[str, int]:
            return models.stream_options(session.model, signal).thinking_budgets

        assert budgets() == DEFAULT_THINKING_BUDGETS
        session.settings.override("thinkingBudgets", {"low": 3000, "high": "lots"})
        assert budgets() == {**DEFAULT_THINKING_BUDGETS, "low": 3000}  # integers only
        first = budgets()
        first["low"] = 1  # a call's own copy
        assert budgets()["low"] == 3000
        session.settings.override("thinkingBudgets", {"low": 5000})
        assert budgets() == {**DEFAULT_THINKING_BUDGETS, "low": 5000}
        session.settings.override("thinkingBudgets", "not a mapping")
        assert budgets() == DEFAULT_THINKING_BUDGETS
    finally:
        session.shutdown()
