"""``llm.local``: the llama.cpp server child process, started for a run and always stopped (no weights needed
for these paths: a missing file and a file that is not a model)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from watchdog.graph.local import LocalModelError, local_server
from watchdog.graph.models import build_models
from watchdog.settings import LLMConfig, LocalModel


def children() -> set[int]:
    out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(os.getpid())], capture_output=True, text=True).stdout
    return {int(line.split()[0]) for line in out.splitlines() if line.split()[1:] != ["ps"]}


def test_a_missing_model_file_is_named_and_nothing_is_started(tmp_path: Path):
    before = children()
    with pytest.raises(LocalModelError) as caught, local_server(LocalModel(model="models/none.gguf"), tmp_path):
        pass
    assert str(caught.value) == (f"llm.local.model: no such file {tmp_path / 'models' / 'none.gguf'} "
                                 "(bring a GGUF file; nothing is downloaded)")
    assert children() - before == set()


def test_a_file_that_is_not_a_model_stops_the_server_with_one_line(tmp_path: Path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"GGUF" + os.urandom(4096))
    before = children()
    with pytest.raises(LocalModelError) as caught, local_server(LocalModel(model=str(bogus), start_timeout_s=120),
                                                                tmp_path):
        pass
    message = str(caught.value)
    assert message.startswith("the llama.cpp server for bogus.gguf exited") and "\n" not in message
    assert children() - before == set()  # reaped


def test_a_local_model_counts_as_an_endpoint_without_any_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    models = build_models(LLMConfig(local=LocalModel(model="m.gguf")), "http://127.0.0.1:8080/v1")
    assert str(models.specialist.openai_api_base) == "http://127.0.0.1:8080/v1"  # type: ignore[attr-defined]
