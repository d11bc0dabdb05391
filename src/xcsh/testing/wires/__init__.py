"""Vendor wire renderers for the fake LLM server.

Each module exposes ``render(step: Reply, request: dict) -> tuple[list[bytes], list[bytes]]``:
the SSE byte chunks up to and including the first content delta (``head``) and the
rest (``tail``), so the server can pause, hold or cut between them; and
``error_body(step: HttpError) -> dict``, the vendor's JSON error body.
"""
