"""Property-based fuzzing of the real `xcsh --mode rpc` process (hypothesis).

Batches of arbitrary lines — every command with arbitrary JSON in every field, arbitrary
JSON values, arbitrary bytes, huge and deeply nested lines — go to one process. After each
batch: the process is alive, every line that needs an answer got exactly one, a final
`get_state` is answered and shows only valid values (checked against the schema).

CI runs a short profile (well under a minute). A longer run on demand:
``XCSH_FUZZ_EXAMPLES=500 .venv/bin/python -m pytest tests/e2e/test_fuzz_protocol.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BASE_ARGS, Workspace, expected_answers
from xcsh.rpc.protocol import SPECS
from xcsh.rpc.schema import FrameChecker
from xcsh.rpc.sync_client import SyncRpcClient
from xcsh.rpc.typeschema import fields, is_typeddict, required_keys, unwrap
from xcsh.testing.fake_llm import FakeLLM

EXAMPLES = int(os.environ.get("XCSH_FUZZ_EXAMPLES", "20"))

# Commands whose valid form would reach outside the sandbox or need a scripted model reply:
# the fuzzer always gives them one field of the wrong type, so they are refused.
MUST_FAIL = {
    "prompt": "message",
    "abort_and_prompt": "message",
    "bash": "command",
    "switch_session": "sessionPath",
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
not_strings = json_values.filter(lambda v: not isinstance(v, str))


def _valid_value(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of the declared type (read from the same TypedDicts the server validates with)."""
    base, _ = unwrap(annotation)
    if base is Any:
        return json_values
    scalars: dict[Any, st.SearchStrategy[Any]] = {
        str: st.text(max_size=20),
        bool: st.booleans(),
        int: st.integers(),
        float: st.floats(allow_nan=False, allow_infinity=False),
        type(None): st.none(),
    }
    if base in scalars:
        return scalars[base]
    origin, args = get_origin(base), get_args(base)
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (Union, UnionType):
        return st.one_of(*(_valid_value(a) for a in args))
    if origin is list:
        return st.lists(_valid_value(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), _valid_value(args[1]), max_size=3)
    if is_typeddict(base):
        hints = fields(base)
        needed = required_keys(base)
        return st.fixed_dictionaries(
            {k: _valid_value(v) for k, v in hints.items() if k in needed},
            optional={k: _valid_value(v) for k, v in hints.items() if k not in needed},
        )
    raise TypeError(f"no fuzzing rule for {base!r}")


@st.composite
def command_frames(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(sorted(SPECS)))
    frame: dict[str, Any] = {"type": name}
    for field, annotation in fields(SPECS[name].request).items():
        if field == "type":
            continue
        choice = draw(st.sampled_from(["absent", "valid", "junk"]))
        if choice == "valid":
            frame[field] = draw(_valid_value(annotation))
        elif choice == "junk":
            frame[field] = draw(json_values)
    if name in MUST_FAIL:
        frame[MUST_FAIL[name]] = draw(not_strings)
    if draw(st.booleans()):
        frame[draw(st.text(max_size=6))] = draw(json_values)  # an undeclared field
    return frame


def _line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


DEEP = 100_000
SPECIAL_LINES = [
    b'{"type":{"a":1}}',
    b'{"type":[]}',
    b'{"type":["get_state"]}',
    b"null",
    b"[" * DEEP + b"]" * DEEP,
    b'{"type":"set_todos","phases":' + b"[" * 900 + b"]" * 900 + b"}",
    b'{"type":"steer","message":"' + b"x" * (2 << 20) + b'"}',
    b'{"type":' + b"[" * 900 + b"]" * 900 + b"}",
    b"\xff\xfe" * 1000,
]

lines = st.one_of(
    command_frames().map(_line),
    json_values.map(_line),
    st.binary(max_size=300).map(lambda b: b.replace(b"\n", b" ")),
    st.sampled_from(SPECIAL_LINES),
)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SyncRpcClient, FakeLLM]]:
    fake = FakeLLM().start()
    workspace = Workspace(tmp_path_factory.mktemp("fuzz"), fake.base_url)
    client = SyncRpcClient(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=60, history=50_000)
    try:
        yield client, fake
    finally:
        code = client.close()
        fake.stop()
        assert code == 0
        assert fake.requests == [], "a fuzzed line started a model call"


_checker = FrameChecker()
_batches = iter(range(1_000_000))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(batch=st.lists(lines, min_size=1, max_size=25))
def test_no_line_of_any_shape_stops_the_process_or_goes_unanswered(
    fuzzed: tuple[SyncRpcClient, FakeLLM], batch: list[bytes]
) -> None:
    client, _ = fuzzed
    barrier = f"barrier-{next(_batches)}"
    mark = client.mark()
    client.send_raw(
        b"".join(line + b"\n" for line in batch) + _line({"id": barrier, "type": "get_state"}) + b"\n"
    )
    state = client.wait_for(lambda f: f.get("id") == barrier and f.get("type") == "response", since=mark)
    expected = sum(expected_answers(line) for line in batch)

    def answered(_: dict[str, Any]) -> bool:
        return sum(1 for f in client.frames[mark:] if f["type"] == "response") >= expected + 1

    client.wait_for(answered, since=mark)
    responses = [f for f in client.frames[mark:] if f["type"] == "response"]
    assert client.client.process.returncode is None
    assert len(responses) == expected + 1, [r.get("error", r.get("command")) for r in responses]
    assert state["success"] is True
    assert _checker.violations(state) == []  # no invalid value is visible in the state
    assert state["data"]["isStreaming"] is False
