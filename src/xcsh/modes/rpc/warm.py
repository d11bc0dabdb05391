"""Warm the current model's provider once the server is ready, and again after a model change.

See :mod:`xcsh.ai.warm`. ``XCSH_WARM=0`` in the environment turns it off (the first prompt then
imports the SDK itself, as before).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from xcsh.ai.warm import warm_in_background

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import RpcServer


def wire(server: RpcServer) -> None:
    if os.environ.get("XCSH_WARM", "1") == "0":
        return

    def start() -> None:
        model = server.session.model
        if model.get("api"):
            warm_in_background(model["api"], model.get("baseUrl") or "")  # once per api; cheap after

    server.on_ready.append(start)
    server.after_response.append(start)  # set_model / cycle_model may have changed the api
