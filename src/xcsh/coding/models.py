"""The model registry: bundled catalogue + ``models.yml``, availability, keys and selectors.

Registry order: the built-in catalogue, then models added by ``models.yml``, then the
catalogue's ``fallback`` providers (the keyless embedded ``local`` model), so a local
model is chosen only when nothing else is available.

A model is *available* when its provider is not disabled and either needs no key
(``auth: none``, or ``local`` with the embedded runtime installed) or has one
(runtime ``--api-key``, environment variable, or ``models.yml`` ``apiKey``).

Selectors (``--model``, ``--models``): ``provider/id``, ``id``, or a case-insensitive
substring of an id or name, each with an optional ``:level`` suffix (``off``…``xhigh``).
"""

from __future__ import annotations

import copy
import fnmatch
import importlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from xcsh.ai.catalog import builtin_models, builtin_providers, provider_info
from xcsh.ai.thinking import infer_thinking, parse_level, supported_efforts
from xcsh.coding.auth import ApiKeys
from xcsh.coding.models_config import (
    CONFIG_FILE_NAMES,
    CustomProvider,
    ModelsConfigError,
    find_models_file,
    load_models_config,
)
from xcsh.coding.yaml_cache import cache_dir_for
from xcsh.coding.yaml_cache import forget as forget_cached_yaml

if TYPE_CHECKING:
    from xcsh.ai.types import Model, ThinkingLevel

__all__ = ["ModelRegistry", "ModelResolutionError", "ModelsConfigError", "format_model_list", "model_key"]

logger = logging.getLogger(__name__)

_DATED_RE = re.compile(r"-\d{8}$")
_GLOB_CHARS = ("*", "?", "[")
_CUSTOM_DEFAULTS = {"contextWindow": 128000, "maxTokens": 16384}
_LOCAL_PROVIDER = "local"


class ModelResolutionError(Exception):
    """A model selector or provider name matched nothing; the message is user-facing."""


def model_key(model: Model) -> str:
    """``provider/id``."""
    return f"{model['provider']}/{model['id']}"


class ModelRegistry:
    """All known models in registry order, with key lookup and selector resolution.

    Methods return copies of the stored models, so callers may modify what they get.
    """

    def __init__(
        self,
        models: Iterable[Model],
        *,
        keys: ApiKeys,
        keyless_providers: Iterable[str] = (),
        disabled_providers: Iterable[str] = (),
        source: Path | None = None,
    ) -> None:
        self._models = list(models)
        self._keys = keys
        self._keyless = set(keyless_providers)
        self._disabled = set(disabled_providers)
        self._local_installed: bool | None = None
        self.source = source  # the models.yml that was read, if any

    @classmethod
    def load(
        cls,
        agent_dir: Path,
        *,
        env: Mapping[str, str] | None = None,
        disabled_providers: Iterable[str] = (),
    ) -> ModelRegistry:
        """Catalogue + ``<agent_dir>/models.yml`` (or ``.yaml``/``.json``); env defaults to ``os.environ``.

        Raises :class:`ModelsConfigError` when the file exists but is invalid.
        """
        values = dict(os.environ if env is None else env)
        path = find_models_file(agent_dir)
        cache_dir = cache_dir_for(agent_dir)
        for name in CONFIG_FILE_NAMES:  # a models file removed or replaced leaves no entry behind
            if path is None or path.name != name:
                forget_cached_yaml(agent_dir / name, cache_dir)
        custom = load_models_config(path, cache_dir=cache_dir) if path is not None else []
        keys = ApiKeys(values, {p.name: p.api_key for p in custom if p.api_key})
        keyless = {p.id for p in builtin_providers() if p.keyless} | {p.name for p in custom if p.keyless}
        return cls(
            _merge(custom),
            keys=keys,
            keyless_providers=keyless,
            disabled_providers=disabled_providers,
            source=path,
        )

    # ---- listing ----------------------------------------------------------------------
    def all_models(self) -> list[Model]:
        """Every model, available or not, in registry order."""
        return [copy.deepcopy(m) for m in self._models]

    def available_models(self) -> list[Model]:
        """Models whose provider is enabled and keyless or keyed, in registry order."""
        return [copy.deepcopy(m) for m in self._models if self.is_available(m)]

    def any_available(self, test: Callable[[Model], bool]) -> bool:
        """Whether ``test`` holds for an available model (given the registry's own entries, not
        copies: ``test`` must only read them). Asked at every start-up (does any take images?):
        ``test`` goes first, so availability (keys, the local runtime's presence) is looked up
        only for the models it accepts."""
        return any(test(m) and self.is_available(m) for m in self._models)

    def providers(self) -> list[str]:
        """Provider names that have at least one model, in registry order."""
        return list(dict.fromkeys(m["provider"] for m in self._models))

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model with exactly this provider and id, or None."""
        for model in self._models:
            if model["provider"] == provider and model["id"] == model_id:
                return copy.deepcopy(model)
        return None

    def default_model(self) -> Model | None:
        """The first available model in registry order, or None."""
        for model in self._models:
            if self.is_available(model):
                return copy.deepcopy(model)
        return None

    # ---- keys and availability ----------------------------------------------------------
    def set_runtime_api_key(self, provider: str, key: str) -> None:
        """Use ``key`` for ``provider`` ahead of environment and config (``--api-key``)."""
        self._keys.set_runtime(provider, key)

    def key_env_names(self) -> set[str]:
        """Environment variables ``models.yml`` names as API keys (the catalogue's are known anyway)."""
        return self._keys.config_env_names()

    def api_key_for(self, provider: str) -> str | None:
        """The key for ``provider``: runtime key, then environment variables, then models.yml."""
        return self._keys.get(provider)

    def is_keyless(self, provider: str) -> bool:
        """True when ``provider`` needs no API key."""
        return provider in self._keyless

    def is_available(self, model: Model) -> bool:
        provider = model["provider"]
        if provider in self._disabled:
            return False
        if provider in self._keyless:
            return self._keyless_ready(provider) or self.api_key_for(provider) is not None
        return self.api_key_for(provider) is not None

    def _keyless_ready(self, provider: str) -> bool:
        if provider != _LOCAL_PROVIDER:
            return True
        if self._local_installed is None:
            self._local_installed = _local_runtime_installed()
        return self._local_installed

    # ---- selectors -----------------------------------------------------------------------
    def resolve(self, pattern: str, provider: str | None = None) -> tuple[Model, ThinkingLevel | None]:
        """The model a ``--model`` selector names, and the ``:level`` it carried (unresolved).

        Searches all models, preferring exact ids, then available models, then undated
        aliases, then registry order. ``provider`` restricts the search (case-insensitive).
        """
        text = pattern.strip()
        candidates = self._models
        display = text
        if provider is not None:
            canonical = self._canonical_provider(provider)
            if canonical is None:
                raise ModelResolutionError(
                    f'Unknown provider "{provider}". Use --list-models to see available providers/models.'
                )
            candidates = [m for m in self._models if m["provider"] == canonical]
            prefix = f"{canonical}/"
            display = text if text.lower().startswith(prefix.lower()) else prefix + text
        if text:
            found = self._match_with_level(text, candidates)
            if found is not None:
                return copy.deepcopy(found[0]), found[1]
        raise ModelResolutionError(f'Model "{display}" not found. Use --list-models to see available models.')

    def resolve_scope(self, patterns: Iterable[str]) -> list[tuple[Model, ThinkingLevel | None]]:
        """The scoped model list of ``--models``: available models matching each pattern, in order.

        Patterns may be comma-separated and may use globs (``anthropic/*``, ``*sonnet*``)
        matched against ``provider/id`` or ``id``; each may end in ``:level``. A pattern
        matching nothing is logged and skipped; duplicates keep their first position.
        """
        available = [m for m in self._models if self.is_available(m)]
        scoped: list[tuple[Model, ThinkingLevel | None]] = []
        seen: set[str] = set()
        for raw in patterns:
            for pattern in (p.strip() for p in raw.split(",")):
                if not pattern:
                    continue
                matches, level = self._scope_matches(pattern, available)
                if not matches:
                    logger.warning('No models match pattern "%s"', pattern)
                for model in matches:
                    if model_key(model) not in seen:
                        seen.add(model_key(model))
                        scoped.append((copy.deepcopy(model), level))
        return scoped

    def _canonical_provider(self, name: str) -> str | None:
        wanted = name.strip().lower()
        for provider in self.providers():
            if provider.lower() == wanted:
                return provider
        return None

    def _scope_matches(
        self, pattern: str, available: list[Model]
    ) -> tuple[list[Model], ThinkingLevel | None]:
        if any(ch in pattern for ch in _GLOB_CHARS):
            glob, level = _split_level(pattern)
            glob = glob.lower()
            matches = [
                m
                for m in available
                if fnmatch.fnmatchcase(model_key(m).lower(), glob)
                or fnmatch.fnmatchcase(m["id"].lower(), glob)
            ]
            return matches, level
        found = self._match_with_level(pattern, available)
        return ([found[0]], found[1]) if found is not None else ([], None)

    def _match_with_level(
        self, text: str, candidates: list[Model]
    ) -> tuple[Model, ThinkingLevel | None] | None:
        # the whole text first: ids may themselves contain ':' (OpenRouter's ":free")
        model = self._match(text, candidates)
        if model is not None:
            return model, None
        head, level = _split_level(text)
        if level is not None and head:
            model = self._match(head, candidates)
            if model is not None:
                return model, level
        return None

    def _match(self, text: str, candidates: list[Model]) -> Model | None:
        lower = text.lower()
        scoped: list[Model] = []
        rest = lower
        if "/" in lower:
            head, rest = lower.split("/", 1)
            scoped = [m for m in candidates if m["provider"].lower() == head]
            exact = [m for m in scoped if m["id"].lower() == rest]
            if exact:
                return self._best(exact)
        exact = [m for m in candidates if m["id"].lower() == lower]
        if exact:
            return self._best(exact)
        if scoped:
            partial = [m for m in scoped if rest in m["id"].lower() or rest in m["name"].lower()]
            if partial:
                return self._best(partial)
        partial = [m for m in candidates if lower in m["id"].lower() or lower in m["name"].lower()]
        return self._best(partial) if partial else None

    def _best(self, models: list[Model]) -> Model:
        order = {id(m): i for i, m in enumerate(self._models)}
        return min(
            models,
            key=lambda m: (
                not self.is_available(m),
                bool(_DATED_RE.search(m["id"])),
                order.get(id(m), len(order)),
            ),
        )


def _split_level(text: str) -> tuple[str, ThinkingLevel | None]:
    head, sep, suffix = text.rpartition(":")
    level = parse_level(suffix) if sep else None
    return (head, level) if level is not None else (text, None)


def _local_runtime_installed() -> bool:
    try:
        local = importlib.import_module("xcsh.ai.local")
    except ImportError:
        return False
    return bool(local.is_installed())


# ---- merging the catalogue with models.yml -------------------------------------------------
def _merge(custom: list[CustomProvider]) -> list[Model]:
    overrides = {p.name: p for p in custom}
    catalogue = builtin_models()
    index: dict[tuple[str, str], Model] = {}
    for model in catalogue:
        override = overrides.get(model["provider"])
        if override is not None:
            _apply_provider(model, override)
        index[(model["provider"], model["id"])] = model
    added: dict[tuple[str, str], Model] = {}
    for provider in custom:
        for definition in provider.models:
            key = (provider.name, definition["id"])
            existing = index.get(key)
            if existing is not None:
                _overlay(existing, definition)
            else:
                added[key] = _new_model(provider, definition)
    fallback = {p.id for p in builtin_providers() if p.fallback}
    head = [m for m in catalogue if m["provider"] not in fallback]
    tail = [m for m in catalogue if m["provider"] in fallback]
    return [*head, *added.values(), *tail]


def _apply_provider(model: Model, provider: CustomProvider) -> None:
    if provider.base_url:
        model["baseUrl"] = provider.base_url
    if provider.headers:
        model["headers"] = {**model.get("headers", {}), **provider.headers}
    if provider.compat:
        model["compat"] = {**model.get("compat", {}), **provider.compat}


def _overlay(model: Model, definition: dict[str, object]) -> None:
    target: dict[str, object] = model  # type: ignore[assignment]  # a Model is a dict with known keys
    for key, value in definition.items():
        if key in ("headers", "compat", "sampling") and isinstance(value, dict):
            current = target.get(key)
            target[key] = {**(current if isinstance(current, dict) else {}), **value}
        elif key != "id":
            target[key] = copy.deepcopy(value)
    _finish_thinking(model)


def _new_model(provider: CustomProvider, definition: dict[str, object]) -> Model:
    info = provider_info(provider.name)
    model_id = str(definition["id"])
    raw: dict[str, object] = {
        "id": model_id,
        "name": definition.get("name", model_id),
        "api": definition.get("api") or provider.api or (info.api if info else ""),
        "provider": provider.name,
        "baseUrl": definition.get("baseUrl") or provider.base_url or (info.base_url if info else ""),
        "reasoning": definition.get("reasoning", False),
        "input": definition.get("input", ["text"]),
        "cost": definition.get("cost", {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}),
        "contextWindow": definition.get("contextWindow", _CUSTOM_DEFAULTS["contextWindow"]),
        "maxTokens": definition.get("maxTokens", _CUSTOM_DEFAULTS["maxTokens"]),
    }
    for key in ("thinking", "contextPromotionTarget", "priority", "sampling"):
        if key in definition:
            raw[key] = definition[key]
    headers = {**provider.headers, **_dict(definition.get("headers"))}
    if headers:
        raw["headers"] = headers
    compat = {**provider.compat, **_dict(definition.get("compat"))}
    if compat:
        raw["compat"] = compat
    model: Model = copy.deepcopy(raw)  # type: ignore[assignment]  # fields validated by models_config
    _finish_thinking(model)
    return model


def _dict(value: object) -> dict[str, object]:
    return dict(value) if isinstance(value, dict) else {}


def _finish_thinking(model: Model) -> None:
    """Reasoning models always carry ``thinking``; others never do (reference enrichment)."""
    if not model["reasoning"]:
        model.pop("thinking", None)
    elif "thinking" not in model:
        inferred = infer_thinking(model)
        if inferred is not None:
            model["thinking"] = inferred


# ---- --list-models -------------------------------------------------------------------------
def _format_count(n: int) -> str:
    if n < 1_000:
        return str(n)
    if n < 10_000:
        return f"{n / 1_000:.1f}K"
    if n < 1_000_000:
        return f"{round(n / 1_000)}K"
    if n < 10_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{round(n / 1_000_000)}M"


def _fuzzy_contains(query: str, text: str) -> bool:
    """True when ``query``'s characters appear in ``text`` in order (case-insensitive)."""
    remaining = iter(text.lower())
    return all(char in remaining for char in query.lower())


def format_model_list(models: Iterable[Model], pattern: str | None = None) -> str:
    """The ``--list-models [pattern]`` table for ``models`` (pass the available ones), no trailing newline.

    Columns: provider, model, context, max-out, thinking (supported efforts), images.
    A pattern keeps models whose ``provider id`` contains every space-separated token as
    an in-order (fuzzy) character sequence.
    """
    rows = list(models)
    if not rows:
        return (
            "No models available. Set an API key environment variable "
            "(ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, …) "
            "or add a provider to models.yml in the agent directory."
        )
    if pattern and pattern.strip():
        tokens = pattern.split()
        rows = [m for m in rows if all(_fuzzy_contains(t, f"{m['provider']} {m['id']}") for t in tokens)]
        if not rows:
            return f'No models matching "{pattern}"'
    rows.sort(key=lambda m: (m["provider"].lower(), m["id"].lower()))
    table = [["provider", "model", "context", "max-out", "thinking", "images"]]
    for model in rows:
        efforts = supported_efforts(model)
        table.append(
            [
                model["provider"],
                model["id"],
                _format_count(model["contextWindow"]),
                _format_count(model["maxTokens"]),
                ",".join(efforts) if efforts else ("yes" if model["reasoning"] else "-"),
                "yes" if "image" in model["input"] else "no",
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table
    )
