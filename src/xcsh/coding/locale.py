"""Locales: which language the model answers in (``set_locale``, ``prompt.locale``, env).

The reference supports thirteen locales; a code is normalised (``ja_JP.UTF-8`` → ``ja``,
``zh-Hans`` → ``zh-cn``) and mapped onto one of them. English, or a locale outside the
list, adds no language instruction to the system prompt.
"""

from __future__ import annotations

from collections.abc import Mapping

DISPLAY_NAMES: dict[str, str] = {
    "ar": "Arabic",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "hi": "Hindi",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "pt-br": "Brazilian Portuguese",
    "th": "Thai",
    "zh-cn": "Simplified Chinese",
    "zh-tw": "Traditional Chinese",
}
_ALIASES = {
    "zh-hans": "zh-cn",
    "zh-sg": "zh-cn",
    "zh": "zh-cn",
    "zh-hant": "zh-tw",
    "zh-hk": "zh-tw",
    "zh-mo": "zh-tw",
    "pt": "pt-br",
    "c": "en",
    "posix": "en",
}


def normalize(code: str) -> str:
    """Lower case, ``_`` as ``-``, without an encoding (``.UTF-8``) or modifier (``@euro``)."""
    return code.split(".", 1)[0].split("@", 1)[0].strip().replace("_", "-").lower()


def supported(code: str) -> str | None:
    """The supported locale ``code`` maps to, or None."""
    value = normalize(code)
    parts = value.split("-")
    for candidate in (value, "-".join(parts[:2]), parts[0]):
        if candidate in DISPLAY_NAMES:
            return candidate
        if candidate in _ALIASES:
            return _ALIASES[candidate]
    return None


def display_name(code: str | None) -> str | None:
    """The language name for the system prompt, or None for English and unsupported codes."""
    if not code:
        return None
    mapped = supported(code)
    if mapped is None or mapped == "en":
        return None
    return DISPLAY_NAMES[mapped]


def initial_locale(env: Mapping[str, str]) -> str | None:
    """``$XCSH_LOCALE``, ``$PI_LOCALE``, then the system's ``$LC_ALL``/``$LC_MESSAGES``/``$LANG``."""
    for name in ("XCSH_LOCALE", "PI_LOCALE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "").strip()
        if value:
            return supported(value) or normalize(value)
    return None
