"""Serve a GGUF model you supply on 127.0.0.1 through xllamacpp's OpenAI-compatible llama.cpp server.

Run with bench/.venv-llm's python (``bench/run --gguf PATH`` creates it and starts this)::

    bench/.venv-llm/bin/python bench/peers/llm_server.py PATH.gguf [--port 0] [--ctx 16384]

Prints one JSON line ``{"base_url": "http://127.0.0.1:PORT/v1", "model": "bench-local"}`` when the server
listens, then serves until its standard input closes or it gets SIGTERM. Nothing is downloaded: the
model file must already be on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading

MODEL_NAME = "bench-local"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("gguf")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ctx", type=int, default=16384, help="context window (the demo findings prompt is long)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    if not os.path.isfile(args.gguf):
        print(f"error: no such model file: {args.gguf}", file=sys.stderr)
        return 3

    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.gguf
    params.n_ctx = args.ctx
    params.hostnames = ["127.0.0.1"]  # this release's name (older docs: ``hostname``)
    params.port = args.port or free_port()
    params.model_alias = {MODEL_NAME}
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    try:
        server = xlc.Server(params)
    except RuntimeError as exc:  # e.g. not a GGUF file: llama.cpp logs the reason on stderr
        print(f"error: the model server did not start: {exc}", file=sys.stderr)
        return 3
    address = getattr(server, "listening_address", None) or f"http://127.0.0.1:{params.port}"
    print(json.dumps({"base_url": address.rstrip("/") + "/v1", "model": MODEL_NAME}), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    stop.wait()
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
