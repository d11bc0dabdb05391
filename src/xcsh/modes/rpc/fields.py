"""Typed access to command fields: wrong types raise (→ the server's ``parse`` error)."""

from __future__ import annotations

from typing import Any

from xcsh.ai.types import ImageContent


class FieldError(TypeError):
    """A command field is missing or has the wrong type."""


def req_str(cmd: dict[str, Any], name: str) -> str:
    value = cmd.get(name)
    if not isinstance(value, str):
        raise FieldError(f"'{name}' must be a string")
    return value


def opt_str(cmd: dict[str, Any], name: str) -> str | None:
    value = cmd.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"'{name}' must be a string")
    return value


def req_bool(cmd: dict[str, Any], name: str) -> bool:
    value = cmd.get(name)
    if not isinstance(value, bool):
        raise FieldError(f"'{name}' must be a boolean")
    return value


def req_list(cmd: dict[str, Any], name: str) -> list[Any]:
    value = cmd.get(name)
    if not isinstance(value, list):
        raise FieldError(f"'{name}' must be an array")
    return value


def opt_images(cmd: dict[str, Any]) -> list[ImageContent] | None:
    images = cmd.get("images")
    if images is None:
        return None
    if not isinstance(images, list):
        raise FieldError("'images' must be an array of image contents")
    out: list[ImageContent] = []
    for index, image in enumerate(images):
        if (
            not isinstance(image, dict)
            or not isinstance(image.get("data"), str)
            or not isinstance(image.get("mimeType"), str)
        ):
            raise FieldError(f"images[{index}] must be {{type:'image', data, mimeType}}")
        out.append({"type": "image", "data": image["data"], "mimeType": image["mimeType"]})
    return out
