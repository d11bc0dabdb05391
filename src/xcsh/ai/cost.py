"""Usage → cost, from the model's prices (USD per million tokens)."""

from __future__ import annotations

from xcsh.ai.types import Model, Usage


def apply_cost(model: Model, usage: Usage) -> Usage:
    """Fill ``usage["cost"]`` from ``model["cost"]`` and return ``usage``."""
    prices = model["cost"]
    cost = usage["cost"]
    cost["input"] = prices["input"] * usage["input"] / 1_000_000
    cost["output"] = prices["output"] * usage["output"] / 1_000_000
    cost["cacheRead"] = prices["cacheRead"] * usage["cacheRead"] / 1_000_000
    cost["cacheWrite"] = prices["cacheWrite"] * usage["cacheWrite"] / 1_000_000
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return usage
