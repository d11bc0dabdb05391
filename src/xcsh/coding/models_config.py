"""``<agentDir>/models.yml`` (or ``models.json``): custom providers and models.

Shape (reference names)::

    providers:
      NAME:
        baseUrl: http://127.0.0.1:8080/v1
        api: openai-completions
        apiKey: literal-key-or-ENV_VAR_NAME   # or  auth: none
        headers: {X-Extra: value}
        compat: {supportsDeveloperRole: false}
        models:
          - id: fake-model
            name: Fake            # default: id
            reasoning: false
            thinking: {minLevel: minimal, maxLevel: high, mode: effort}
            input: [text, image]  # default: [text]
            contextWindow: 128000 # default
            maxTokens: 16384      # default
            cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0}

A provider named like a built-in one overrides it: its ``baseUrl``/``headers``/``compat``
apply to the built-in models, its models replace same-id built-ins or add new ones, and
missing ``baseUrl``/``api``/``apiKey`` fall back to the built-in provider. Any problem
raises :class:`ModelsConfigError` naming the file and the offending field.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec

from xcsh.ai.catalog import provider_info
from xcsh.ai.thinking import EFFORT_LEVELS
from xcsh.coding.yaml_cache import read_config_bytes, read_yaml_file

CONFIG_FILE_NAMES = ("models.yml", "models.yaml", "models.json")
_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite")


class ModelsConfigError(Exception):
    """``models.yml`` could not be read or is invalid; the message names the file and problem."""


class CustomProvider(msgspec.Struct, kw_only=True):
    """One validated ``providers.NAME`` entry; ``models`` hold validated raw definitions."""

    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    keyless: bool = False
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    compat: dict[str, Any] = msgspec.field(default_factory=dict)
    models: list[dict[str, Any]] = msgspec.field(default_factory=list)

    @property
    def builtin(self) -> bool:
        return provider_info(self.name) is not None


def find_models_file(agent_dir: Path) -> Path | None:
    """The first of ``models.yml``, ``models.yaml``, ``models.json`` in ``agent_dir``."""
    for name in CONFIG_FILE_NAMES:
        candidate = agent_dir / name
        if candidate.is_file():
            return candidate
    return None


def load_models_config(path: Path, *, cache_dir: Path | None = None) -> list[CustomProvider]:
    """Read and validate ``path``; raises :class:`ModelsConfigError` on any problem.

    A YAML file's parse is kept in ``cache_dir`` while the file is unchanged
    (:mod:`xcsh.coding.yaml_cache`); JSON is parsed each time.
    """
    try:
        if path.suffix == ".json":
            data = _parse_text(read_config_bytes(path).decode("utf-8"), path)
        else:
            data = read_yaml_file(path, lambda text: _parse_text(text, path), cache_dir)
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelsConfigError(f"{path}: cannot read file: {exc}") from exc
    try:
        return parse_models_config(data)
    except _Invalid as exc:
        raise ModelsConfigError(f"{path}: {exc}") from None


def _parse_text(text: str, path: Path) -> Any:
    if path.suffix == ".json":
        if not text.strip():
            return None
        try:  # msgspec gives what json.loads gives; json.loads for what it refuses, and for the error text
            return msgspec.json.decode(text)
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            pass
        import json

        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelsConfigError(
                f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from None
        except RecursionError:
            raise ModelsConfigError(f"{path}: JSON nested too deeply") from None
    import yaml

    from xcsh.coding.yaml_load import safe_load

    try:
        return safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ModelsConfigError(f"{path}: invalid YAML{where}: {problem}") from None


class _Invalid(Exception):
    pass


def parse_models_config(data: Any) -> list[CustomProvider]:
    """Validate an already-parsed document; raises ``_Invalid`` (wrapped by the loader)."""
    if data is None:
        return []
    if not isinstance(data, dict):
        raise _Invalid(f"expected a mapping with a 'providers' key, got {_kind(data)}")
    providers = data.get("providers")
    if providers is None:
        return []
    if not isinstance(providers, dict):
        raise _Invalid(f"'providers' must be a mapping of provider name to settings, got {_kind(providers)}")
    return [_provider(str(name), config) for name, config in providers.items()]


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _string(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"{where} must be a non-empty string, got {_kind(value)}")
    return value


def _string_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Invalid(f"{where} must be a mapping of names to strings")
    return {str(k): v for k, v in value.items()}


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Invalid(f"{where} must be a mapping, got {_kind(value)}")
    return dict(value)


def _provider(name: str, config: Any) -> CustomProvider:
    where = f"providers.{name}"
    if not isinstance(config, dict):
        raise _Invalid(f"{where} must be a mapping, got {_kind(config)}")
    auth = config.get("auth", "apiKey")
    if auth not in ("apiKey", "none"):
        raise _Invalid(f"{where}.auth must be 'apiKey' or 'none', got {auth!r}")
    provider = CustomProvider(
        name=name,
        base_url=_string(config.get("baseUrl"), f"{where}.baseUrl"),
        api=_string(config.get("api"), f"{where}.api"),
        api_key=_string(config.get("apiKey"), f"{where}.apiKey"),
        keyless=auth == "none",
        headers=_string_map(config.get("headers"), f"{where}.headers"),
        compat=_mapping(config.get("compat"), f"{where}.compat"),
    )
    models = config.get("models")
    if models is None:
        models = []
    if not isinstance(models, list):
        raise _Invalid(f"{where}.models must be a list, got {_kind(models)}")
    provider.models = [_model(entry, f"{where}.models[{i}]") for i, entry in enumerate(models)]
    _check_provider(provider, config, where)
    return provider


def _check_provider(provider: CustomProvider, config: dict[str, Any], where: str) -> None:
    builtin = provider_info(provider.name)
    if not provider.models:
        if not any(key in config for key in ("baseUrl", "apiKey", "headers", "compat", "auth")):
            raise _Invalid(
                f'{where}: nothing to configure (expected "models", "baseUrl", "apiKey" or "compat")'
            )
        return
    if builtin is not None:
        return  # missing fields fall back to the built-in provider
    if provider.base_url is None and any("baseUrl" not in m for m in provider.models):
        raise _Invalid(f'{where}: "baseUrl" is required when defining custom models')
    for index, model in enumerate(provider.models):
        if provider.api is None and "api" not in model:
            raise _Invalid(
                f'{where}.models[{index}] ({model["id"]}): no "api" specified; set it on the provider or the model'
            )
    if provider.api_key is None and not provider.keyless:
        raise _Invalid(f'{where}: "apiKey" is required when defining custom models unless auth is "none"')


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _Invalid(f"{where} must be a positive integer, got {value!r}")
    return value


def _model(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise _Invalid(f"{where} must be a mapping, got {_kind(entry)}")
    model_id = entry.get("id")
    if not isinstance(model_id, str) or not model_id.strip():
        raise _Invalid(f'{where}: "id" is required and must be a non-empty string')
    out: dict[str, Any] = {"id": model_id}
    for key in ("name", "api", "baseUrl", "contextPromotionTarget"):
        value = _string(entry.get(key), f"{where}.{key}")
        if value is not None:
            out[key] = value
    if "reasoning" in entry:
        if not isinstance(entry["reasoning"], bool):
            raise _Invalid(f"{where}.reasoning must be true or false, got {entry['reasoning']!r}")
        out["reasoning"] = entry["reasoning"]
    for key in ("contextWindow", "maxTokens"):
        if key in entry:
            out[key] = _positive_int(entry[key], f"{where}.{key}")
    if "input" in entry:
        out["input"] = _input(entry["input"], f"{where}.input")
    if "cost" in entry:
        out["cost"] = _cost(entry["cost"], f"{where}.cost")
    if "thinking" in entry:
        out["thinking"] = _thinking(entry["thinking"], f"{where}.thinking")
    if "headers" in entry:
        out["headers"] = _string_map(entry["headers"], f"{where}.headers")
    if "compat" in entry:
        out["compat"] = _mapping(entry["compat"], f"{where}.compat")
    if "priority" in entry:
        out["priority"] = _positive_int(entry["priority"], f"{where}.priority")
    if "sampling" in entry:
        out["sampling"] = _sampling(entry["sampling"], f"{where}.sampling")
    return out


# each sampling key: the type it takes and its allowed range (inclusive low, high or None)
_SAMPLING_KEYS: dict[str, tuple[type, float, float | None]] = {
    "temperature": (float, 0.0, 2.0),
    "topP": (float, 0.0, 1.0),
    "topK": (int, 1, None),
    "minP": (float, 0.0, 1.0),
    "repeatPenalty": (float, 0.0, None),
}


def _sampling(value: Any, where: str) -> dict[str, float | int]:
    if not isinstance(value, dict):
        raise _Invalid(f"{where} must be a mapping of {', '.join(_SAMPLING_KEYS)}, got {_kind(value)}")
    out: dict[str, float | int] = {}
    for key, setting in value.items():
        if key not in _SAMPLING_KEYS:
            raise _Invalid(f"{where}: unknown key {key!r} (expected {', '.join(_SAMPLING_KEYS)})")
        kind, low, high = _SAMPLING_KEYS[key]
        numeric = isinstance(setting, int) if kind is int else isinstance(setting, (int, float))
        if (
            isinstance(setting, bool)
            or not numeric
            or not math.isfinite(setting)  # .nan passes every comparison, .inf has no upper bound
            or setting < low
            or (high is not None and setting > high)
        ):
            span = f"in {low}..{high}" if high is not None else f">= {low}"
            noun = "an integer" if kind is int else "a number"
            raise _Invalid(f"{where}.{key} must be {noun} {span}, got {setting!r}")
        out[key] = setting
    return out


def _input(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not value or any(v not in ("text", "image") for v in value):
        raise _Invalid(f'{where} must be a non-empty list of "text" and/or "image", got {value!r}')
    return list(dict.fromkeys(value))


def _cost(value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise _Invalid(f"{where} must be a mapping of {', '.join(_COST_KEYS)}, got {_kind(value)}")
    cost: dict[str, float] = {}
    for key in _COST_KEYS:
        price = value.get(key, 0)
        if (
            isinstance(price, bool)
            or not isinstance(price, (int, float))
            or not math.isfinite(price)
            or price < 0
        ):
            raise _Invalid(f"{where}.{key} must be a non-negative number, got {price!r}")
        cost[key] = price
    return cost


def _thinking(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _Invalid(f"{where} must be a mapping with minLevel and maxLevel, got {_kind(value)}")
    low, high = value.get("minLevel"), value.get("maxLevel")
    levels = ", ".join(EFFORT_LEVELS)
    if low not in EFFORT_LEVELS or high not in EFFORT_LEVELS:
        raise _Invalid(f"{where}: minLevel and maxLevel must each be one of {levels}")
    if EFFORT_LEVELS.index(low) > EFFORT_LEVELS.index(high):
        raise _Invalid(f"{where}: minLevel {low} is above maxLevel {high}")
    mode = value.get("mode", "effort")
    if not isinstance(mode, str) or not mode:
        raise _Invalid(f"{where}.mode must be a non-empty string")
    return {"minLevel": low, "maxLevel": high, "mode": mode}
