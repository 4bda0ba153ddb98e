"""``llm.local``: a llama.cpp server (the ``xllamacpp`` wheel, ``pip install 'watchdog-dq[local]'``) on 127.0.0.1
for one run, serving a GGUF file the user brings. Nothing is downloaded: the file must exist.

The server runs in a child process (``python -m watchdog.graph.local MODEL PORT CONTEXT THREADS``) so that it
is stopped for sure when the run ends (terminate, then kill), and with ``OMP_WAIT_POLICY=PASSIVE`` so idle
threads do not spin on shared cores.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from watchdog.errors import Terminal, WatchdogError
from watchdog.settings import LocalModel


class LocalModelError(WatchdogError, Terminal):
    """The local model server could not be started."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/health", timeout=2) as resp:  # noqa: S310 - loopback only
            return bool(resp.status == 200)
    except OSError:
        return False


def model_path(local: LocalModel, root: Path) -> Path:
    """The GGUF file ``llm.local.model`` names (relative to the config's folder)."""
    given = Path(local.model).expanduser()
    return given if given.is_absolute() else (root / given).expanduser()


@contextmanager
def local_server(local: LocalModel, root: Path) -> Iterator[str]:
    """Serve ``local.model`` on a free loopback port; yield the OpenAI base URL; stop the server afterwards."""
    model = model_path(local, root)
    if not model.is_file():
        raise LocalModelError(f"llm.local.model: no such file {model} (bring a GGUF file; nothing is downloaded)")
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        raise LocalModelError("llm.local needs the llama.cpp server: pip install 'watchdog-dq[local]'") from None
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    # llama.cpp logs a lot: a file, never a pipe it could fill; closed in the finally below
    log = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "watchdog.graph.local", str(model), str(port), str(local.context),
                             str(local.threads)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=log, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + local.start_timeout_s
        while not _healthy(base):
            if proc.poll() is not None:
                log.seek(0)
                tail = log.read().strip().splitlines()[-1:]
                raise LocalModelError(f"the llama.cpp server for {model.name} exited ({proc.returncode}): "
                                      + (tail[0][:300] if tail else "no message"))
            if time.monotonic() > deadline:
                raise LocalModelError(f"the llama.cpp server for {model.name} was not ready after "
                                      f"{local.start_timeout_s:g} s (raise llm.local.start_timeout_s)")
            time.sleep(0.5)
        yield base + "/v1"
    finally:
        stop(proc)
        log.close()


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def serve(model: str, port: int, context: int, threads: int) -> None:  # pragma: no cover - runs in the child
    import signal

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.port = port
    params.hostnames = ["127.0.0.1"]
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    server = xllamacpp.Server(params)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print(f"listening {server.listening_address}", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":  # pragma: no cover
    serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
