"""The keyless ``local`` provider: the embedded model served by xllamacpp on loopback.

On the first request it prepares the weights (joined once into the user cache dir), starts the
runtime and then speaks to it like any OpenAI-compatible server, with tools via
schema-constrained output. Nothing happens at import or start-up.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import msgspec

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.local import DEFAULT_MODEL_ID, default_model
from xcsh.ai.local.runtime import RuntimeSpec, ensure_runtime
from xcsh.ai.local.weights import LocalModelError, ensure_weights
from xcsh.ai.options import StreamOptions
from xcsh.ai.providers import openai_completions
from xcsh.ai.types import Context, Model

MAX_CONTEXT_WINDOW = 32768

# What the llama.cpp server understands; explicit so no detection by name or URL applies.
LOCAL_COMPAT: dict[str, object] = {
    "constrainedToolCalls": True,
    "maxTokensField": "max_tokens",
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": False,
    "supportsUsageInStreaming": True,
    "supportsToolChoice": False,
    "supportsStore": False,
}


def model_file(model: Model) -> Path:
    """The GGUF for ``model``: its id when that is a ``.gguf`` path, else the bundled weights."""
    if model["id"].endswith(".gguf"):
        path = Path(model["id"]).expanduser()
        if not path.is_file():
            raise LocalModelError(f"model file not found: {path}")
        return path
    if model["id"] != DEFAULT_MODEL_ID:
        raise LocalModelError(f"unknown local model '{model['id']}' (available: {DEFAULT_MODEL_ID})")
    return ensure_weights()


THREADS_ENV = "XCSH_LOCAL_THREADS"


def runtime_spec(model: Model, gguf: Path) -> RuntimeSpec:
    """What the runtime serves; ``XCSH_LOCAL_THREADS`` sets llama.cpp's thread count.

    Unset, llama.cpp picks (one thread per core). On a machine whose cores are busy with
    other work, one thread avoids the threads waiting on each other at every step.
    """
    raw = os.environ.get(THREADS_ENV, "").strip()
    threads = int(raw) if raw.isdigit() and int(raw) > 0 else None
    return RuntimeSpec(
        model_path=gguf, context_window=min(model["contextWindow"], MAX_CONTEXT_WINDOW), threads=threads
    )


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    """Ensure the runtime, then stream through the OpenAI chat-completions provider."""
    gguf = await asyncio.to_thread(model_file, model)
    endpoint = await ensure_runtime(runtime_spec(model, gguf))
    served: Model = {
        **model,
        "baseUrl": f"{endpoint.url}/v1",
        "reasoning": False,
        "compat": {**model.get("compat", {}), **LOCAL_COMPAT},
        # an entry without tuned sampling (a .gguf path) gets the embedded model's, not the
        # server's defaults, which are tuned for chat rather than tool use
        "sampling": model.get("sampling") or default_model()["sampling"],
    }
    # A fresh loopback connection per request: the embedded server closes kept-alive
    # connections after a few requests, and reusing one it just closed fails the call.
    headers = {**options.headers, "Connection": "close"}
    local_options = msgspec.structs.replace(
        options, api_key=endpoint.api_key, reasoning=None, headers=headers
    )
    await openai_completions.run(served, context, local_options, builder)
