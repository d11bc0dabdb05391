"""The bundled model catalogue (``data/models.json``): built-in providers and their models.

The JSON is read on first use, not at import, so ``import xcsh.ai`` stays cheap. Every
lookup returns a deep copy: callers may enrich or override models without touching
the cached catalogue.

Registry order is the order of the ``models`` list. A provider flagged ``fallback``
(the keyless embedded ``local`` provider) is meant to come after everything else,
custom models included; the coding layer's registry honours that.
"""

# No ``from __future__ import annotations``: msgspec compiles a Struct's string annotations (one
# ForwardRef each) when a start first decodes into it (_Providers, _Models below).

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

if TYPE_CHECKING:
    from xcsh.ai.types import Model


class ProviderInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A built-in provider: its default wire API and base URL, and where its key comes from.

    ``env_vars`` are checked in order; the first one set (non-empty) supplies the key.
    ``keyless`` providers need no key. ``fallback`` providers sort after custom models.
    """

    id: str
    name: str
    api: str
    base_url: str
    env_vars: tuple[str, ...]
    keyless: bool = False
    fallback: bool = False


class _Providers(msgspec.Struct):
    """The catalogue file's ``providers`` only: decoding into it skips the models unbuilt."""

    providers: list[dict[str, Any]]


class _Models(msgspec.Struct):
    """The catalogue file's ``models`` only (each model a plain dict, as untyped decoding gives)."""

    models: list[dict[str, Any]]


@cache
def _load() -> tuple[tuple[ProviderInfo, ...], bytes]:
    """The providers, and the file's bytes: every model lookup decodes its own copy from them
    (the cheapest deep copy of pure JSON data, and a session start decodes the models once)."""
    path = Path(__file__).with_name("data") / "models.json"
    if path.is_file():
        raw = path.read_bytes()
    else:  # a packaging that keeps no plain files (zip): the resource reader (not paid otherwise)
        from importlib import resources

        raw = resources.files("xcsh.ai").joinpath("data", "models.json").read_bytes()
    providers = tuple(
        ProviderInfo(
            id=p["id"],
            name=p.get("name", p["id"]),
            api=p["api"],
            base_url=p["baseUrl"],
            env_vars=tuple(p.get("envVars", ())),
            keyless=bool(p.get("keyless", False)),
            fallback=bool(p.get("fallback", False)),
        )
        for p in msgspec.json.decode(raw, type=_Providers).providers
    )
    return providers, raw


def builtin_providers() -> list[ProviderInfo]:
    """Built-in providers in catalogue order."""
    return list(_load()[0])


def provider_info(provider: str) -> ProviderInfo | None:
    """The built-in provider named ``provider`` (exact name), or None."""
    for info in _load()[0]:
        if info.id == provider:
            return info
    return None


def builtin_models() -> "list[Model]":
    """Fresh copies of every catalogue model, in registry order."""
    return cast("list[Model]", msgspec.json.decode(_load()[1], type=_Models).models)


def find_builtin(provider: str, model_id: str) -> "Model | None":
    """A copy of the catalogue model ``provider``/``model_id`` (exact match), or None."""
    for model in builtin_models():
        if model["provider"] == provider and model["id"] == model_id:
            return model
    return None


def provider_env_vars(provider: str) -> tuple[str, ...]:
    """Environment variables that may hold ``provider``'s API key (empty for unknown providers)."""
    info = provider_info(provider)
    return info.env_vars if info is not None else ()


def env_api_key(provider: str, env: Mapping[str, str]) -> str | None:
    """The first non-empty key found in ``provider``'s environment variables, or None."""
    for name in provider_env_vars(provider):
        value = env.get(name)
        if value:
            return value
    return None
