"""API-key resolution for providers: runtime key, then environment, then ``models.yml``.

Order (first hit wins):

1. a runtime key set with :meth:`ApiKeys.set_runtime` (the ``--api-key`` flag);
2. the provider's environment variables from the built-in catalogue
   (``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` then ``GOOGLE_API_KEY``, …);
3. the ``apiKey`` of the provider in ``models.yml`` — either a literal key or the name
   of an environment variable holding it.
"""

from __future__ import annotations

from collections.abc import Mapping

from xcsh.ai.catalog import env_api_key

_CAPITALS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CAPITALS_AND_DIGITS = _CAPITALS | frozenset("0123456789")


def looks_like_env_name(value: str) -> bool:
    """Whether ``value`` is shaped like an environment variable name such as ``FOO_API_KEY``:
    two or more words joined by ``_``, each an ASCII capital followed by capitals and digits
    (the pattern ``[A-Z][A-Z0-9]*(_[A-Z][A-Z0-9]*)+``, checked without compiling a regular
    expression at every start). Such a value is never sent as a literal key: when the variable
    is unset the provider simply has no key.
    """
    parts = value.split("_")
    return len(parts) > 1 and all(
        part[:1] in _CAPITALS and all(char in _CAPITALS_AND_DIGITS for char in part) for part in parts
    )


def resolve_config_key(value: str, env: Mapping[str, str]) -> str | None:
    """A ``models.yml`` ``apiKey`` value as a usable key.

    The value of the environment variable named ``value`` when it is set; None when
    ``value`` looks like an unset variable name; otherwise ``value`` itself.
    """
    from_env = env.get(value)
    if from_env:
        return from_env
    if looks_like_env_name(value):
        return None
    return value


class ApiKeys:
    """Keys for every provider, resolved on demand from runtime, environment and config."""

    def __init__(self, env: Mapping[str, str], config_keys: Mapping[str, str] | None = None) -> None:
        self._env = dict(env)
        self._config = dict(config_keys or {})
        self._runtime: dict[str, str] = {}

    def set_runtime(self, provider: str, key: str) -> None:
        """Use ``key`` for ``provider`` ahead of any other source (``--api-key``)."""
        self._runtime[provider] = key

    def set_config(self, provider: str, value: str) -> None:
        """Record ``provider``'s ``models.yml`` ``apiKey`` value (literal or variable name)."""
        self._config[provider] = value

    def config_env_names(self) -> set[str]:
        """Environment variables ``models.yml`` names as an ``apiKey`` (credentials we read)."""
        return {value for value in self._config.values() if value in self._env or looks_like_env_name(value)}

    def get(self, provider: str) -> str | None:
        """The key for ``provider``, or None when no source has one."""
        runtime = self._runtime.get(provider)
        if runtime:
            return runtime
        from_env = env_api_key(provider, self._env)
        if from_env:
            return from_env
        configured = self._config.get(provider)
        return resolve_config_key(configured, self._env) if configured else None
