"""The xllamacpp OpenAI-compatible server, run in a child process on a loopback port.

Why a child process: the native library logs (and could print) on its own file
descriptors, and our stdout belongs to the RPC protocol. The child gets a pipe as stdout
that carries exactly one line, the "ready" report; before loading anything it points its
fd 1 at stderr, so any native output ends up there. It also watches its stdin and exits
when the parent closes it (normal stop) or dies (the pipe breaks), so a crashed agent
never leaves a 2 GB server behind. Its process group is also guarded by the watchdog
(:mod:`xcsh.ai.watchdog`), which ends it should the child fail to notice (stuck in native code).

One runtime serves the process: :func:`ensure_runtime` starts it on the first request,
reuses it for later ones (restarting it if it died or another model is asked for) and an
``atexit`` hook stops it.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import queue
import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from xcsh.ai import watchdog
from xcsh.ai.local import INSTALL_HINT, runtime_installed
from xcsh.ai.local.weights import LocalModelError, LocalModelNotInstalledError

logger = logging.getLogger(__name__)

_VERBOSE_ENV = "XCSH_LOCAL_VERBOSE"


# What the runtime child keeps of our environment: finding Python and its packages, locale and
# temp dir, and the native library's own thread/GPU settings. Nothing else (no provider key):
# the child needs none of it, and once exec'ed its /proc/<pid>/environ is readable again.
_RUNTIME_ENV = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "LD_LIBRARY_PATH"}
    | {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "XDG_CACHE_HOME", _VERBOSE_ENV}
)
_RUNTIME_ENV_PREFIXES = ("LC_", "OMP_", "GGML_", "LLAMA_", "CUDA_", "HIP_", "ROCR_", "GPU_", "VK_")


def runtime_environment() -> dict[str, str]:
    """The runtime child's environment: :data:`_RUNTIME_ENV` and its prefixes, nothing else."""
    return {
        name: value
        for name, value in os.environ.items()
        if name in _RUNTIME_ENV or name.startswith(_RUNTIME_ENV_PREFIXES)
    }


class LocalRuntimeError(LocalModelError):
    """The runtime process failed to start or stopped answering."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeSpec:
    """What to serve: the GGUF file and the context size (tokens) of its single slot."""

    model_path: Path
    context_window: int = 16384
    threads: int | None = None


@dataclass(frozen=True, slots=True)
class RuntimeEndpoint:
    """How to reach a running runtime: base URL (no ``/v1``) and its API key."""

    url: str
    api_key: str


class LocalRuntime:
    """One server child process. ``start()`` blocks until it answers ``/health``."""

    def __init__(self, spec: RuntimeSpec) -> None:
        self.spec = spec
        self._process: subprocess.Popen[bytes] | None = None
        self._endpoint: RuntimeEndpoint | None = None

    @property
    def endpoint(self) -> RuntimeEndpoint:
        if self._endpoint is None:
            raise LocalRuntimeError("the local runtime is not running")
        return self._endpoint

    @property
    def alive(self) -> bool:
        """Whether the child runs; one found exited (reaped here) is released from the watchdog."""
        process = self._process
        if process is None:
            return False
        if process.poll() is None:
            return True
        watchdog.release(process.pid)
        return False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self, timeout_s: float = 300.0) -> RuntimeEndpoint:
        """Spawn the child, wait for its ready line and a healthy ``/health``."""
        if not runtime_installed():
            raise LocalModelNotInstalledError(
                f"The local model runtime (xllamacpp) is not installed. Install it with: {INSTALL_HINT}"
            )
        if not self.spec.model_path.is_file():
            raise LocalRuntimeError(f"model file not found: {self.spec.model_path}")
        api_key = secrets.token_hex(16)
        config = {
            "model": str(self.spec.model_path),
            "n_ctx": self.spec.context_window,
            "threads": self.spec.threads,
            "api_key": api_key,
            "verbosity": 3 if os.environ.get(_VERBOSE_ENV) else 1,
        }
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "xcsh.ai.local.runtime"],  # -P: no module from the cwd
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # inherited: the native logs go to our stderr
            start_new_session=True,  # a terminal's Ctrl-C is ours to handle, not the child's
            env=runtime_environment(),
        )
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        try:
            watchdog.guard(process.pid)
            # the config (with the key) travels on stdin, never on the visible command line
            process.stdin.write(json.dumps(config).encode() + b"\n")
            process.stdin.flush()
            line = _read_line(process.stdout, timeout_s)
            if not line:
                code = process.wait(timeout=5)
                raise LocalRuntimeError(
                    f"the local model runtime exited (code {code}) while loading "
                    f"{self.spec.model_path.name}; its log is on stderr"
                )
            url = str(json.loads(line)["url"])
            _wait_healthy(url, started + timeout_s)
        except BaseException:
            self.stop()
            raise
        self._endpoint = RuntimeEndpoint(url=url, api_key=api_key)
        logger.info(
            "local runtime for %s ready at %s in %.1fs",
            self.spec.model_path.name,
            url,
            time.monotonic() - started,
        )
        return self._endpoint

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask the child to exit (close its stdin), then kill it if it lingers."""
        process, self._process, self._endpoint = self._process, None, None
        if process is None:
            return
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout_s)
        watchdog.release(process.pid)
        if process.stdout is not None:
            process.stdout.close()


def _read_line(stream: IO[bytes], timeout_s: float) -> bytes:
    """One line from a pipe, or b"" at EOF; bounded by ``timeout_s``."""
    lines: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(
        target=lambda: lines.put(stream.readline()),
        name="xcsh-local-ready",
        daemon=True,
    )
    reader.start()
    try:
        return lines.get(timeout=timeout_s)
    except queue.Empty:
        raise LocalRuntimeError(f"the local model runtime did not start within {timeout_s:.0f}s") from None


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _wait_healthy(url: str, deadline: float) -> None:
    while True:
        try:
            with _NO_PROXY.open(f"{url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() >= deadline:
            raise LocalRuntimeError(f"the local model runtime at {url} is not healthy")
        time.sleep(0.1)  # polling a child process, not a test: the server has no readiness push


_lock = threading.Lock()
_current: LocalRuntime | None = None
_atexit_registered = False


def _ensure_sync(spec: RuntimeSpec, timeout_s: float) -> RuntimeEndpoint:
    global _current, _atexit_registered
    with _lock:
        if _current is not None and _current.spec == spec and _current.alive:
            return _current.endpoint
        if _current is not None:
            _current.stop()
            _current = None
        if not _atexit_registered:
            atexit.register(stop_runtime)
            _atexit_registered = True
        runtime = LocalRuntime(spec)
        endpoint = runtime.start(timeout_s)
        _current = runtime
        return endpoint


async def ensure_runtime(spec: RuntimeSpec, *, timeout_s: float = 300.0) -> RuntimeEndpoint:
    """The endpoint of a running runtime for ``spec``, starting (or restarting) it if needed.

    Loading happens in a worker thread; a caller cancelled meanwhile leaves the start to
    finish, so the next request finds the runtime ready.
    """
    return await asyncio.to_thread(_ensure_sync, spec, timeout_s)


def current_runtime() -> LocalRuntime | None:
    """The runtime this process started, if one is running."""
    runtime = _current
    return runtime if runtime is not None and runtime.alive else None


def stop_runtime() -> None:
    """Stop the process's runtime (also run at interpreter exit)."""
    global _current
    with _lock:
        if _current is not None:
            _current.stop()
            _current = None


# ---- the child process -------------------------------------------------------------------


def _serve() -> None:
    ready = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # from here on, anything written to fd 1 (native code included) lands on stderr
    sys.stdout = sys.stderr
    config = json.loads(sys.stdin.buffer.readline())
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = config["model"]
    params.n_ctx = int(config["n_ctx"])
    params.n_parallel = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port; the server reports it
    params.api_keys = [config["api_key"]]
    params.verbosity = int(config["verbosity"])
    params.ui = False
    params.cache_ram_mib = 1024
    if config.get("threads"):
        params.cpuparams.n_threads = int(config["threads"])
        params.cpuparams_batch.n_threads = int(config["threads"])
    server = xllamacpp.Server(params)
    ready.write(json.dumps({"url": server.listening_address}) + "\n")
    ready.flush()
    # serve until the parent closes our stdin or goes away
    while sys.stdin.buffer.read(65536):
        pass
    os._exit(0)  # skip the slow native teardown: the process is going away anyway


if __name__ == "__main__":
    _serve()
