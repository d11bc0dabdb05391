"""The report of ``bench_probes.py``: the table of figures and the issue's targets (ratios to the best peer)."""

from __future__ import annotations

from typing import Any

PEERS = ("pi", "omp")  # the agents a target's ratio is taken against ("floor" only calibrates)


# (table row, probe, figure, unit)
ROWS = [
    ("spawn → first get_state answer", "startup", "median_ms", "ms"),
    ("spawn → first get_state answer, first start in a fresh agent dir", "startup", "first_start_ms", "ms"),
    ("get_state round trip, median", "round_trip", "median_ms", "ms"),
    ("get_state round trip, p99", "round_trip", "p99_ms", "ms"),
    ("immediate prompt → first text_delta, OpenAI", "immediate_openai", "median_ms", "ms"),
    ("immediate prompt → first text_delta, Anthropic", "immediate_anthropic", "median_ms", "ms"),
    ("idle 2 s, first prompt → first text_delta, OpenAI", "idle_openai", "idle_first_median_ms", "ms"),
    ("idle 2 s, first prompt → first text_delta, Anthropic", "idle_anthropic", "idle_first_median_ms", "ms"),
    ("second prompt → first text_delta, OpenAI", "idle_openai", "second_median_ms", "ms"),
    ("second prompt → first text_delta, Anthropic", "idle_anthropic", "second_median_ms", "ms"),
    ("300 prompts: ms per prompt, first 20", "many_prompts", "first20_median_ms", "ms"),
    ("300 prompts: ms per prompt, last 20", "many_prompts", "last20_median_ms", "ms"),
    ("300 prompts: agent CPU, whole run", "many_prompts", "agent_cpu_s", "s"),
    ("20,000-delta answer: prompt → agent_end", "long_answer", "prompt_to_agent_end_s", "s"),
    ("20,000-delta answer: agent CPU", "long_answer", "agent_cpu_s", "s"),
    ("20,000-delta answer: agent CPU from the first answer", "long_answer", "agent_cpu_from_ready_s", "s"),
    ("20,000-delta answer: peak RSS", "long_answer", "peak_rss_mb", "MB"),
    ("64 KiB tool arguments: prompt → agent_end", "tool_arguments", "prompt_to_agent_end_s", "s"),
    ("64 KiB tool arguments: agent CPU", "tool_arguments", "agent_cpu_s", "s"),
    (
        "64 KiB tool arguments: agent CPU from the first answer",
        "tool_arguments",
        "agent_cpu_from_ready_s",
        "s",
    ),
]


# (target, probe, figure, the largest xcsh ÷ best-peer ratio that meets it) — the targets
TARGETS = [
    ("spawn → first get_state ≤ 0.1×", "startup", "median_ms", 0.1),
    ("get_state round trip ≤ 1× (median)", "round_trip", "median_ms", 1.0),
    ("immediate prompt → first text_delta ≤ 0.1×, OpenAI", "immediate_openai", "median_ms", 0.1),
    ("immediate prompt → first text_delta ≤ 0.1×, Anthropic", "immediate_anthropic", "median_ms", 0.1),
    ("idle first prompt → first text_delta ≤ 0.5×, OpenAI", "idle_openai", "idle_first_median_ms", 0.5),
    ("idle first prompt → first text_delta ≤ 0.5×, Anthropic", "idle_anthropic", "idle_first_median_ms", 0.5),
    ("second prompt → first text_delta ≤ 0.5×, OpenAI", "idle_openai", "second_median_ms", 0.5),
    ("second prompt → first text_delta ≤ 0.5×, Anthropic", "idle_anthropic", "second_median_ms", 0.5),
    ("300 prompts: ms per prompt ≤ 0.25× (last 20)", "many_prompts", "last20_median_ms", 0.25),
    ("20,000-delta answer: agent CPU ≤ 0.15×", "long_answer", "agent_cpu_s", 0.15),
    ("20,000-delta answer: peak RSS ≤ 0.15×", "long_answer", "peak_rss_mb", 0.15),
    ("64 KiB tool arguments: agent CPU ≤ 0.1×", "tool_arguments", "agent_cpu_s", 0.1),
]


def targets(results: dict[str, dict[str, Any]], names: list[str]) -> str:
    """Each target: xcsh's figure, the best peer's, the ratio and whether it is met."""
    peers = [n for n in names if n in PEERS]
    lines = ["| target | xcsh | best peer | ratio | met |", "|---|---|---|---|---|"]
    for label, probe, figure, limit in TARGETS:
        ours = results.get("xcsh", {}).get(probe, {}).get(figure)
        theirs = [(results[n].get(probe, {}).get(figure), n) for n in peers]
        found = [(v, n) for v, n in theirs if isinstance(v, (int, float)) and v > 0]
        if not isinstance(ours, (int, float)) or not found:
            continue
        best, who = min(found)
        ratio = ours / best
        lines.append(
            f"| {label} | {ours:,} | {best:,} ({who}) | {ratio:.2f}× | {'yes' if ratio <= limit else 'no'} |"
        )
    many = results.get("xcsh", {}).get("many_prompts", {})
    if "last_over_first" in many:
        flat = many["last_over_first"]
        lines.append(
            f"| 300 prompts flat: last 20 within 20 % of first 20 | {flat:.2f}× | — | — | {'yes' if flat <= 1.2 else 'no'} |"
        )
    return "\n".join(lines)


def _cell(results: dict[str, Any], probe: str, figure: str) -> str:
    value = results.get(probe)
    if value is None:
        return "—"
    if "failed" in value:
        return str(value["failed"])
    found = value.get(figure)
    return "—" if found is None else f"{found:,}"


def table(results: dict[str, dict[str, Any]], names: list[str]) -> str:
    peers = [n for n in names if n in PEERS]
    head = ["probe", *names] + (["vs best peer"] if peers and "xcsh" in names else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, probe, figure, unit in ROWS:
        if not any(probe in results[n] for n in names):
            continue
        cells = [_cell(results[n], probe, figure) for n in names]
        row = [f"{label} ({unit})", *cells]
        if len(head) > len(names) + 1:
            ours = results["xcsh"].get(probe, {}).get(figure)
            theirs = [results[n].get(probe, {}).get(figure) for n in peers]
            best = min((v for v in theirs if isinstance(v, (int, float)) and v > 0), default=None)
            row.append(f"{ours / best:.2f}×" if isinstance(ours, (int, float)) and best else "—")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
