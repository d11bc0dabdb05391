"""The ``inspect_image`` tool: ask a vision-capable model a question about an image file.

Contract (reference ``inspect_image``): ``{path, question}``. The model is the one of
``modelRoles.vision``, else ``modelRoles.default``, else the session's current model;
it must accept image input and have credentials, or the call fails saying so. The
file must be PNG, JPEG, GIF or WebP (recognised by content, at most 20 MiB). One
request is sent (a short instruction, then the image and the question); the result
is the image block followed by the model's answer; ``details``: ``model``
(``provider/id``), ``imagePath``, ``mimeType``. Offered only where some available
model takes images. Class shared, abortable.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.agent.tool import AgentTool
from xcsh.ai.abort import AbortSignal
from xcsh.ai.options import StreamOptions
from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.paths import display_path, refuse_special_file, resolve_path
from xcsh.coding.tools.truncate import format_size

if TYPE_CHECKING:
    from xcsh.agent.types import AgentToolResult, ToolUpdate
    from xcsh.ai.types import Model
    from xcsh.coding.models import ModelRegistry
    from xcsh.coding.settings import Settings

INSTRUCTION = (
    "You examine one image for a coding agent and answer its question about it. Describe exactly what is "
    "visible that bears on the question (text, numbers, layout, errors, colours); say when something cannot "
    "be determined from the image. Answer concisely."
)

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Image file (PNG, JPEG, GIF or WebP), relative or absolute.",
        },
        "question": {"type": "string", "description": "What to find out about the image."},
    },
    "required": ["path", "question"],
    "additionalProperties": False,
}

_DESCRIPTION = (
    "Ask a vision model a question about an image file (screenshot, diagram, chart, photo) and get a text "
    "answer, e.g. 'What error does this screenshot show?'. Use `read` to simply attach an image instead."
)


def pick_model(registry: ModelRegistry, settings: Settings, current: Model) -> Model:
    """The vision role's model, else the default role's, else ``current`` (must take images)."""
    for role in ("modelRoles.vision", "modelRoles.default"):
        pattern = settings.get(role)
        if isinstance(pattern, str) and pattern.strip():
            try:
                model, _ = registry.resolve(pattern)
            except Exception:
                continue
            if registry.is_available(model) and "image" in model.get("input", []):
                return model
    if "image" not in current.get("input", []):
        raise ToolError(
            f"The model {current['provider']}/{current['id']} does not take images. "
            "Set modelRoles.vision to a vision-capable model to use inspect_image."
        )
    return current


def create_inspect_image_tool(
    cwd: Path, registry: ModelRegistry, settings: Settings, current_model: Callable[[], Model]
) -> AgentTool:
    """The ``inspect_image`` tool; ``current_model`` gives the session's model at call time."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        from xcsh.ai.registry import complete
        from xcsh.coding.tools.read import MAX_IMAGE_BYTES, image_mime_type  # the read tool's code: on use

        raw_path, question = args.get("path"), args.get("question")
        if not isinstance(raw_path, str) or not raw_path.strip():
            raise ToolError("path is required")
        if not isinstance(question, str) or not question.strip():
            raise ToolError("question is required")
        model = pick_model(registry, settings, current_model())
        api_key = registry.api_key_for(model["provider"])
        if not api_key and not registry.is_keyless(model["provider"]):
            raise ToolError(f"No API key available for {model['provider']}/{model['id']}.")
        path = resolve_path(cwd, raw_path)
        shown = display_path(cwd, path)
        refuse_special_file(path, shown)
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise ToolError(f"File not found: {shown}") from exc
        except OSError as exc:
            raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from exc
        mime = image_mime_type(data[:16])
        if mime is None:
            raise ToolError(
                "inspect_image takes PNG, JPEG, GIF and WebP files (recognised by their content)."
            )
        if len(data) > MAX_IMAGE_BYTES:
            raise ToolError(f"Image {shown} is too large ({format_size(len(data))}).")
        encoded = base64.b64encode(data).decode("ascii")
        image = {"type": "image", "data": encoded, "mimeType": mime}
        context: Any = {
            "systemPrompt": INSTRUCTION,
            "messages": [
                {"role": "user", "content": [image, {"type": "text", "text": question}], "timestamp": 0}
            ],
        }
        reply = await complete(model, context, StreamOptions(api_key=api_key, signal=signal))
        if reply.get("stopReason") == "aborted":
            raise ToolError("inspect_image request aborted.")
        if reply.get("stopReason") == "error":
            raise ToolError(str(reply.get("errorMessage") or "inspect_image request failed."))
        answer = "".join(
            str(b.get("text", "")) for b in reply.get("content", []) if b.get("type") == "text"
        ).strip()
        if not answer:
            raise ToolError("The vision model returned no text.")
        details = {"model": f"{model['provider']}/{model['id']}", "imagePath": str(path), "mimeType": mime}
        return {"content": [image, {"type": "text", "text": answer}], "details": details}  # type: ignore[list-item]

    return AgentTool(
        name="inspect_image",
        label="Inspect Image",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="shared",
        abortable=True,
    )
