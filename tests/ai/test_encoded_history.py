"""A request body's remembered history is encoded once and spliced in as JSON text, with the
same bytes as encoding the body whole (docs/performance.md, "Fourth session: flat requests").

The random edits of tests/coding/test_history_cache.py compare the bytes after pruning,
truncation, compaction and model changes; these tests show the fragments are really used
(so that comparison cannot pass by never splicing) and what happens when msgspec cannot
encode a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import pytest

from xcsh.ai.clients import encode_body
from xcsh.ai.options import StreamOptions
from xcsh.ai.prefix_cache import PrefixCache
from xcsh.ai.providers import anthropic_messages, openai_completions, openai_responses
from xcsh.ai.providers.openai_compat import resolve_compat

MODEL: Any = {
    "id": "fake-model",
    "name": "fake",
    "api": "openai-completions",
    "provider": "fake-encoded",
    "baseUrl": "http://127.0.0.1:1/v1",
    "reasoning": False,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 128000,
    "maxTokens": 4096,
}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": MODEL["provider"],
        "model": MODEL["id"],
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }


# wire name → (the payload as sent, the body as a dict, the wire's cache)
Wire = tuple[Callable[[Any], bytes], Callable[[Any], dict[str, Any]], PrefixCache[Any, Any]]


def _wires() -> dict[str, Wire]:
    options = StreamOptions()
    flags = resolve_compat(MODEL)
    return {
        "chat": (
            lambda context: openai_completions.request_payload(MODEL, context, options, flags),
            lambda context: openai_completions.request_wire(MODEL, context, options, flags),
            openai_completions._HISTORY,
        ),
        "anthropic": (
            lambda context: anthropic_messages.request_payload(MODEL, context, options),
            lambda context: {**anthropic_messages.build_request(MODEL, context, options), "stream": True},
            anthropic_messages._HISTORY,
        ),
        "responses": (
            lambda context: openai_responses.request_payload(MODEL, context, options),
            lambda context: {**openai_responses.build_request(MODEL, context, options), "stream": True},
            openai_responses._HISTORY,
        ),
    }


@pytest.mark.parametrize("wire", ["chat", "anthropic", "responses"])
def test_each_remembered_message_is_encoded_once_and_the_body_keeps_its_bytes(wire: str) -> None:
    payload, body, cache = _wires()[wire]
    history: list[Any] = [_user("question 0")]
    previous: list[msgspec.Raw] = []
    for turn in range(1, 8):
        history = [*history, _assistant(f"answer {turn - 1}"), _user(f'question {turn} \u00e9 "q"\n')]
        context: Any = {"systemPrompt": "sys", "messages": history}
        sent = payload(context)
        assert sent == encode_body(body(context))  # the same bytes as encoding the whole body
        # everything before the newest answer is remembered, one fragment per message
        raws = list(cache._entries[0].raws)
        assert len(raws) == 2 * turn - 1
        assert b"question 0" in bytes(raws[0])
        assert all(a is b for a, b in zip(raws, previous, strict=False))  # none encoded again
        previous = raws
    # the payload is made of the stored fragments (a marker put in their place shows up)
    cache._entries[0].raws[0] = msgspec.Raw(b'{"marker":1}')
    history = [*history, _assistant("answer 7"), _user("question 8")]
    assert payload({"systemPrompt": "sys", "messages": history}).count(b'{"marker":1}') == 1


def test_the_cache_splices_the_latest_calls_outputs_and_nothing_else() -> None:
    def convert(items: Sequence[str], _params: object) -> list[dict[str, str]]:
        return [{"text": item} for item in items]

    cache: PrefixCache[str, dict[str, str]] = PrefixCache(convert, lambda item: item.startswith("a"))
    out = cache(["u1", "a1", "u2"])
    head = ["system"]
    spliced = cache.encoded([*head, *out], 1)
    assert spliced[0] == "system" and spliced[2:] == out[1:]
    assert isinstance(spliced[1], msgspec.Raw) and bytes(spliced[1]) == b'{"text":"u1"}'
    assert msgspec.json.encode(spliced) == msgspec.json.encode([*head, *out])
    assert cache.encoded([*head, {"text": "u1"}, *out[1:]], 1)[1] == {"text": "u1"}  # equal, not the same
    assert cache.encoded(out, 1) == out  # the run is not where the caller says
    out = cache(["u1", "a1", "u2", "a2", "u3"])
    spliced = cache.encoded(out)
    assert [type(v) for v in spliced] == [msgspec.Raw] * 3 + [dict] * 2
    out = cache(["u1", "a1", "u9"])  # a branch switch: the remembered part shrinks with it
    assert [type(v) for v in cache.encoded(out)] == [msgspec.Raw, dict, dict]


def test_a_flat_cache_splices_each_outputs_items_as_one_fragment_and_skips_empty_ones() -> None:
    def convert(items: Sequence[str], _params: object) -> list[list[int]]:
        return [[] if item.startswith("e") else [len(item), len(item) + 1] for item in items]

    cache: PrefixCache[str, list[int]] = PrefixCache(convert, lambda item: item.startswith("a"), flat=True)
    out = cache(["u1", "e", "ab", "u22"])
    values = [item for items in out for item in items]
    spliced = cache.encoded(values)
    assert [bytes(v) for v in spliced[:1]] == [b"2,3"]
    assert msgspec.json.encode(spliced) == msgspec.json.encode(values)


@pytest.mark.parametrize("wire", ["chat", "anthropic", "responses"])
def test_a_message_msgspec_cannot_encode_takes_the_standard_library_path_whole(wire: str) -> None:
    payload, _body, _cache = _wires()[wire]
    history: list[Any] = [_user("lone \ud800 surrogate"), _assistant("a0"), _user("q1")]
    for _ in range(2):  # the second time the bad message is remembered
        sent = payload({"systemPrompt": "sys", "messages": history})
        assert b"\\ud800" in sent and b'", "' in sent  # json.dumps: escaped, spaced separators
        history = [*history, _assistant("a1"), _user("q2")]


def _tool(name: str, description: str = "does things") -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {"path": {"type": "string", "minLength": 1.5}}},
    }


@pytest.mark.parametrize("wire", ["chat", "anthropic", "responses"])
def test_the_tool_definitions_are_converted_and_encoded_once_per_list_and_the_body_keeps_its_bytes(
    wire: str,
) -> None:
    payload, body, _cache = _wires()[wire]
    tools_cache = {
        "chat": openai_completions._TOOLS,
        "anthropic": anthropic_messages._TOOLS,
        "responses": openai_responses._TOOLS,
    }[wire]
    read, write = _tool("read", 'reads "files" \u00e9'), _tool("write")
    history: list[Any] = [_user("question 0")]
    converted: list[Any] = []
    for tools in ([read, write], [read, write], [read], [read, _tool("write", "writes")], [read, write]):
        context: Any = {"systemPrompt": "sys", "messages": history, "tools": list(tools)}
        sent = payload(context)
        whole = body(context)
        assert sent == encode_body(whole)  # the same bytes as encoding the whole body
        names = [t["name"].encode() for t in tools]
        assert all(sent.count(b'"' + name + b'"') == 1 for name in names)
        assert (b'"writes"' in sent) == (tools[-1]["description"] == "writes")
        again = body(context)["tools"]
        assert again is whole["tools"]  # the same objects: converted once for this list
        converted.append(whole["tools"])
    assert converted[0] is converted[1]  # an equal list of the same tools is not converted again
    assert converted[2] is not converted[1] and converted[4] is not converted[3]
    # the payload carries the stored JSON text (a marker put in its place shows up)
    tools_cache._encoded = (tools_cache._latest[1], msgspec.Raw(b'["marker"]'))
    assert payload({"messages": history, "tools": [read, write]}).count(b'["marker"]') == 1


def test_a_tool_lists_json_text_is_only_ever_given_for_that_list() -> None:
    from xcsh.ai.tool_defs import ToolDefinitions

    def text(value: Any) -> bytes:
        return bytes(value) if isinstance(value, msgspec.Raw) else msgspec.json.encode(value)

    cache: ToolDefinitions[Any] = ToolDefinitions(lambda tool: {"name": tool["name"]})
    a = cache([_tool("read")])
    assert isinstance(cache.encoded(a), msgspec.Raw) and text(cache.encoded(a)) == b'[{"name":"read"}]'
    b = cache([_tool("write")])  # another session's list (another thread, in a program embedding xcsh)
    assert text(cache.encoded(a)) == b'[{"name":"read"}]'  # never the other list's text
    assert isinstance(cache.encoded(b), msgspec.Raw) and text(cache.encoded(b)) == b'[{"name":"write"}]'
    assert text(cache.encoded(a)) == b'[{"name":"read"}]'


def test_the_loop_hands_over_the_same_tool_definitions_until_a_tool_or_its_fields_change() -> None:
    from xcsh.agent.loop import _Definitions, llm_tool
    from xcsh.agent.tool import AgentTool

    async def run(_id: str, _args: dict[str, Any], _signal: Any, _update: Any) -> Any:
        return {"content": []}

    read = AgentTool(name="read", description="reads", parameters=_tool("read")["parameters"], execute=run)
    write = AgentTool(
        name="write", description="writes", parameters=_tool("write")["parameters"], execute=run
    )
    definitions = _Definitions()
    first = definitions([read, write], True)
    assert first == [llm_tool(read, True), llm_tool(write, True)]
    second = definitions([read, write], True)
    assert second == first and all(a is b for a, b in zip(first, second, strict=True))
    for change in (
        lambda: definitions([read, write], False),
        lambda: definitions([write, read], True),
        lambda: definitions([read], True),
    ):
        changed = change()
        assert changed is not first and not all(a is b for a, b in zip(changed, first, strict=False))
        first = definitions([read, write], True)
    write.description = "writes files"  # a field changed on the same tool object
    changed = definitions([read, write], True)
    assert changed[1] == llm_tool(write, True) and changed[1] is not first[1]
    write.parameters = {"type": "object", "properties": {}}
    assert definitions([read, write], True)[1] == llm_tool(write, True)
