"""The command line: ``python -m watchdog.testing.openai_stub --port 8099 --reply "text"``."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

from .server import StubOpenAI
from .steps import reply, structured


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m watchdog.testing.openai_stub",
                                     description="Serve a scripted OpenAI-compatible API on 127.0.0.1.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8099, help="0 picks a free port")
    parser.add_argument("--reply", action="append", default=[], help="a scripted reply (repeatable, FIFO)")
    parser.add_argument("--structured", action="append", default=[], help="a scripted structured answer (JSON text)")
    parser.add_argument("--model", action="append", default=[], help="a model listed by GET /v1/models")
    parser.add_argument("--when-empty", choices=("repeat", "error"), default="repeat")
    args = parser.parse_args(argv)
    script = [reply(t) for t in args.reply] + [structured(json.loads(s)) for s in args.structured]
    stub = StubOpenAI(script or [reply("stub reply")], when_empty=args.when_empty,
                      models=args.model or ["gpt-test"], host=args.host, port=args.port)
    with stub:
        print(f"OpenAI stub listening on {stub.base_url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0
