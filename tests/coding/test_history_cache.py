"""The remembered history conversion never serves a stale form (docs/performance.md, profile 15).

Every conversion that is memoised over the history's prefix — the live context → LLM
messages, the OpenAI chat, Anthropic and Responses request messages, the compaction facts — is
compared with a fresh, uncached conversion after each edit a session makes to its live
context: appending, replacing a message (pruning), truncating (overflow recovery, branch
switch), rebuilding (compaction) and switching between histories. The request bodies built
from the remembered messages' stored JSON fragments are compared, byte for byte, with
encoding the same body whole (docs/performance.md, "Fourth session: flat requests").
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from xcsh.ai.clients import encode_body
from xcsh.ai.prefix_cache import PrefixCache
from xcsh.ai.providers import anthropic_messages, openai_completions, openai_responses
from xcsh.ai.providers.openai_compat import resolve_compat
from xcsh.coding import messages as coding_messages
from xcsh.coding.compaction import facts

Msg = dict[str, Any]
MODEL: Any = {
    "id": "fake-model",
    "name": "fake",
    "api": "openai-completions",
    "provider": "fake",
    "baseUrl": "http://127.0.0.1:1/v1",
    "reasoning": False,
    "input": ["text", "image"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 128000,
    "maxTokens": 4096,
}


def _message(rng: random.Random, serial: int, open_calls: list[str]) -> Msg:
    kind = rng.choice(["user", "user", "assistant", "calls", "result", "result", "bash", "summary", "image"])
    stamp = 1000 + serial
    if kind == "calls":
        ids = [f"call-{serial}-{i}" for i in range(rng.randint(1, 2))]
        open_calls.extend(ids)
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": f"doing {serial}"}]
            + [
                {
                    "type": "toolCall",
                    "id": i,
                    "name": "read" if serial % 3 else "bash",
                    "arguments": {"n": serial},
                }
                for i in ids
            ],
            "api": "openai-completions",
            "provider": rng.choice(["fake", "other"]),
            "model": "fake-model",
            "usage": {},
            "stopReason": rng.choice(["toolUse", "toolUse", "aborted"]),
            "timestamp": stamp,
        }
    if kind == "assistant":
        return {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"hm {serial}"},
                {"type": "text", "text": f"answer {serial}"},
            ],
            "api": "openai-completions",
            "provider": rng.choice(["fake", "other"]),
            "model": "fake-model",
            "usage": {},
            "stopReason": rng.choice(["stop", "stop", "error"]),
            "timestamp": stamp,
        }
    if kind == "result" and open_calls:
        call = open_calls.pop(rng.randrange(len(open_calls)))
        return {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": "bash",
            "content": [{"type": "text", "text": "x" * rng.randint(0, 400_000)}],
            "isError": False,
            "timestamp": stamp,
        }
    if kind == "bash":
        return {"role": "bashExecution", "command": "ls", "output": f"out {serial}", "timestamp": stamp}
    if kind == "summary":
        return {"role": "compactionSummary", "summary": f"summary {serial}", "timestamp": stamp}
    if kind == "image":
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            ],
            "timestamp": stamp,
        }
    return {"role": "user", "content": [{"type": "text", "text": f"question {serial}"}], "timestamp": stamp}


def _pruned(message: Msg, stamp: int) -> Msg:
    return {
        **message,
        "content": [{"type": "text", "text": "[Output truncated - 100000 tokens]"}],
        "prunedAt": stamp,
    }


def _edit(rng: random.Random, history: list[Msg], serial: int, open_calls: list[str]) -> list[Msg]:
    """One edit of the kind a session makes; returns the new history (a new list, messages never mutated)."""
    action = rng.random()
    if action < 0.6 or len(history) < 3:
        return [*history, _message(rng, serial, open_calls)]
    if action < 0.75:  # pruning replaces a tool result
        results = [i for i, m in enumerate(history) if m["role"] == "toolResult" and "prunedAt" not in m]
        if results:
            index = rng.choice(results)
            return [*history[:index], _pruned(history[index], serial), *history[index + 1 :]]
        return history
    if action < 0.9:  # overflow recovery or a branch switch drops the tail
        return history[: rng.randrange(1, len(history))]
    # compaction rebuilds the context: a summary, then the kept (same) messages
    keep = history[rng.randrange(len(history)) :]
    return [
        {"role": "compactionSummary", "summary": f"compacted {serial}", "timestamp": 1000 + serial},
        *keep,
    ]


Check = Callable[[Sequence[Msg]], None]


def _checks() -> list[Check]:
    flags = resolve_compat(MODEL)
    other_model = {**MODEL, "provider": "other"}

    def coding(history: Sequence[Msg]) -> None:
        assert coding_messages.convert_to_llm(list(history)) == coding_messages._convert_uncached(history)  # type: ignore[arg-type]

    def openai(history: Sequence[Msg]) -> None:
        llm = coding_messages._convert_uncached(history)  # type: ignore[arg-type]
        for model in (MODEL, other_model):
            context: Any = {"systemPrompt": "sys", "messages": llm}
            fresh = [
                {"role": "system", "content": "sys"},
                *openai_completions._convert_history(llm, (model, flags)),
            ]
            assert openai_completions.convert_messages(model, context, flags) == fresh

    def anthropic(history: Sequence[Msg]) -> None:
        llm = coding_messages._convert_uncached(history)  # type: ignore[arg-type]
        for model in (MODEL, other_model):
            assert anthropic_messages.convert_messages(llm, model) == anthropic_messages._convert_history(
                llm, model
            )
            request = anthropic_messages.build_request(model, {"messages": llm}, _options())
            again = anthropic_messages.build_request(model, {"messages": llm}, _options())
            assert request == again  # marking the cache breakpoint changed no remembered message

    def responses(history: Sequence[Msg]) -> None:
        llm = coding_messages._convert_uncached(history)  # type: ignore[arg-type]
        for model in (MODEL, other_model):
            fresh = [item for items in openai_responses._convert_history(llm, model) for item in items]
            # fallback item ids (msg_<index>_<n>) number the whole history, as a fresh conversion does
            assert openai_responses.convert_input(model, {"messages": llm}) == fresh

    def payloads(history: Sequence[Msg]) -> None:
        llm = coding_messages._convert_uncached(history)  # type: ignore[arg-type]
        options = _options()
        for model, system in ((MODEL, "sys"), (other_model, None), (MODEL, None)):
            context: Any = {"systemPrompt": system, "messages": llm}
            chat = openai_completions.request_payload(model, context, options, flags)
            assert chat == encode_body(openai_completions.request_wire(model, context, options, flags))
            anthropic = anthropic_messages.request_payload(model, context, options)
            body = {**anthropic_messages.build_request(model, context, options), "stream": True}
            assert anthropic == encode_body(body)
            responses = openai_responses.request_payload(model, context, options)
            body = {**openai_responses.build_request(model, context, options), "stream": True}
            assert responses == encode_body(body)

    def compaction(history: Sequence[Msg]) -> None:
        for tools in (frozenset(), frozenset({"read"})):
            assert facts.context_facts(history, tools) == facts._facts(history, tools)

    return [coding, openai, anthropic, responses, payloads, compaction]


def _options() -> Any:
    from xcsh.ai.options import StreamOptions

    return StreamOptions()


@pytest.mark.parametrize("seed", range(12))
def test_every_memoised_conversion_equals_a_fresh_one_after_any_history_edit(seed: int) -> None:
    rng = random.Random(seed)
    checks = _checks()
    histories: list[list[Msg]] = [[], []]
    open_calls: list[list[str]] = [[], []]
    for serial in range(160):
        which = rng.randrange(2)  # two sessions in one process take turns
        histories[which] = _edit(rng, histories[which], serial, open_calls[which])
        for check in checks:
            check(histories[which])


def test_a_replaced_message_is_converted_afresh_while_the_prefix_before_it_is_reused() -> None:
    calls: list[list[str]] = []

    def convert(items: Sequence[str], _params: object) -> list[str]:
        calls.append(list(items))
        return [item.upper() for item in items]

    cache: PrefixCache[str, str] = PrefixCache(convert, lambda item: item.startswith("a"))
    history = ["u1"]
    for turn in ("a1 u2", "a2 u3", "a3 u4"):  # one request per turn, as a session makes them
        history = [*history, *turn.split()]
        calls.clear()
        assert cache(history) == [h.upper() for h in history]
        assert all("u1" not in c for c in calls) or len(history) == 3  # the prefix is not converted again
    replaced = [*history[:4], "u3-pruned", *history[5:]]  # a new object in the middle
    calls.clear()
    assert cache(replaced) == [h.upper() for h in replaced]
    assert any("u3-pruned" in c for c in calls)
    assert all("u1" not in c and "u2" not in c for c in calls)  # up to the cut before the change is reused


def test_a_history_that_no_longer_starts_at_a_cut_after_truncation_is_not_merged_with_a_stale_prefix() -> (
    None
):
    def convert(items: Sequence[str], _params: object) -> list[str]:
        groups: list[list[str]] = []
        for item in items:  # each cut starts a group: a misplaced cut shows in the output
            if not groups or item.startswith("a"):
                groups.append([])
            groups[-1].append(item)
        return ["+".join(group) for group in groups]

    cache: PrefixCache[str, str] = PrefixCache(convert, lambda item: item.startswith("a"))
    assert cache(["u1", "a1", "u2", "a2", "u3"]) == ["u1", "a1+u2", "a2+u3"]
    assert cache(["u1", "a1", "u2", "u9"]) == ["u1", "a1+u2+u9"]
    assert cache(["u1", "a1", "u2", "a2", "u3"]) == ["u1", "a1+u2", "a2+u3"]


def test_an_equal_copy_of_a_remembered_message_is_adopted_without_converting_it_again() -> None:
    calls: list[list[dict[str, str]]] = []

    def convert(items: Sequence[dict[str, str]], _params: object) -> list[str]:
        calls.append(list(items))
        return [item["text"].upper() for item in items]

    cache: PrefixCache[dict[str, str], str] = PrefixCache(convert, lambda item: item["text"].startswith("a"))
    history = [{"text": "u1"}, {"text": "u2"}, {"text": "a1"}, {"text": "u3"}]
    assert cache(history) == ["U1", "U2", "A1", "U3"]
    copied = [history[0], {"text": "u2"}, *history[2:]]  # equal, another object (a rebuilt context)
    calls.clear()
    assert cache(copied) == ["U1", "U2", "A1", "U3"]
    assert calls == [[{"text": "a1"}, {"text": "u3"}]]  # only the tail after the newest cut
    assert cache._entries[0].inputs[1] is copied[1]  # the next check finds it by identity
    changed = [history[0], {"text": "u2!"}, *history[2:]]
    assert cache(changed) == ["U1", "U2!", "A1", "U3"]
