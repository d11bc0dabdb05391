"""The prompting commands (rpc-protocol §5.1) and the field types every command shares.

They are part of :mod:`xcsh.rpc.commands` (which imports them from here, so the schema, the
docs and the clients see one set of classes), in a module of their own because a process
whose first command is a prompt validates it before anything else: creating these few
``TypedDict``s costs a fraction of the ~50 in :mod:`xcsh.rpc.commands` (docs/performance.md,
"Fifth session: immediate prompt").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from msgspec import Meta

from xcsh.ai.types import ImageContent

# ---- shared field types ----------------------------------------------------------------
Id = Annotated[
    Any,
    Meta(
        description="Correlation id, echoed in the command's response. A string in practice; "
        "any JSON value is echoed as sent, and null counts as absent."
    ),
]
Message = Annotated[str, Meta(description="The user message text.")]
Images = Annotated[
    list[ImageContent] | None,
    Meta(description="Images attached to the message (base64 `data` and `mimeType`)."),
]


# ---- prompting (§5.1) --------------------------------------------------------------------
class PromptCommand(TypedDict):
    """Start a run with a user message; answered at once, the run is observed through events.

    While the agent is busy, `streamingBehavior` queues the message; without it the prompt
    fails with a second response. A continuation the agent started by itself never makes
    a prompt fail (rpc-protocol §5.1 project decision).
    """

    type: Literal["prompt"]
    id: NotRequired[Id]
    message: Message
    images: NotRequired[Images]
    streamingBehavior: NotRequired[
        Annotated[
            Literal["steer", "followUp"] | None,
            Meta(description="How to queue the message when the agent is busy."),
        ]
    ]
    locale: NotRequired[
        Annotated[
            str | None,
            Meta(description="Reference extra: answer in this locale from now on (as `set_locale`)."),
        ]
    ]


class SteerCommand(TypedDict):
    """Queue a steering message, delivered at the next turn (or with the next run when idle)."""

    type: Literal["steer"]
    id: NotRequired[Id]
    message: Message
    images: NotRequired[Images]


class FollowUpCommand(TypedDict):
    """Queue a follow-up message, delivered when the agent would otherwise stop."""

    type: Literal["follow_up"]
    id: NotRequired[Id]
    message: Message
    images: NotRequired[Images]


class AbortCommand(TypedDict):
    """Stop the current run (and any retry wait or scheduled continuation); answered once idle."""

    type: Literal["abort"]
    id: NotRequired[Id]


class AbortAndPromptCommand(TypedDict):
    """`abort`, then `prompt` with this message; a later failure is a second response."""

    type: Literal["abort_and_prompt"]
    id: NotRequired[Id]
    message: Message
    images: NotRequired[Images]
