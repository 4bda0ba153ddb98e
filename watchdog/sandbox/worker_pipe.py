"""The pipe between a session and its worker process (SQLite's and DuckDB's): length-prefixed frames, the
reader thread, the kill. Light on purpose: the workers import it at start-up."""

from __future__ import annotations

import struct

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the workers import this module and typing would slow their start
if TYPE_CHECKING:
    import queue
    import subprocess
    from collections.abc import Callable
    from typing import IO, Any


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(struct.pack(">I", len(payload)) + payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> bytes | None:
    """The next frame's payload, or None at the end of the stream."""
    header = _read_exactly(stream, 4)
    return None if header is None else _read_exactly(stream, struct.unpack(">I", header)[0])


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_replies(stream: Any, replies: queue.Queue, receive: Callable[[Any], tuple | None]) -> None:
    """Forward the worker's replies; None at its end. Only this thread closes ``stream``: closing it
    from another thread could let a read in flight land on a new pipe that reused the descriptor."""
    import contextlib

    try:
        while True:
            message = receive(stream)
            replies.put(message)
            if message is None:
                return
    except Exception:  # noqa: BLE001 - the pipe broke: the worker is gone
        replies.put(None)
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """The worker's end of a pipe (always there: workers are started with both pipes)."""
    if stream is None:
        raise OSError("the worker has no pipe")
    return stream


def kill(proc: subprocess.Popen) -> None:
    """Stop the worker; its end of the reply pipe closes with it, which ends the reader thread."""
    import contextlib
    import subprocess

    with contextlib.suppress(OSError):
        pipe(proc.stdin).close()
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):  # pragma: no cover
        proc.wait(timeout=5)
