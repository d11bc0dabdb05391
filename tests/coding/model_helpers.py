"""The model-registry tests' shared pieces: a fake provider's models.yml and a registry loaded
from it without the embedded local model. Import as ``coding.model_helpers``."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.models import ModelRegistry, model_key

FAKE_YML = """\
providers:
  fake:
    baseUrl: http://127.0.0.1:8080/v1
    apiKey: test-key
    api: openai-completions
    models:
      - id: fake-model
        reasoning: false
        contextWindow: 128000
        maxTokens: 4096
      - id: fake-reasoner
        reasoning: true
        thinking: {minLevel: minimal, maxLevel: high, mode: effort}
"""

NO_LOCAL = {"local"}  # the embedded model's availability depends on what is installed here


def registry(
    tmp_path: Path, yml: str | None = FAKE_YML, env: dict[str, str] | None = None, name: str = "models.yml"
) -> ModelRegistry:
    if yml is not None:
        (tmp_path / name).write_text(yml, encoding="utf-8")
    return ModelRegistry.load(tmp_path, env=env or {}, disabled_providers=NO_LOCAL)


def keys(models: list[dict[str, object]] | list[object]) -> list[str]:
    return [model_key(m) for m in models]
