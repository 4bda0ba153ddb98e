"""Every YAML, shell and Python example in docs/ (and README.md) runs, and the site's pages are all in the nav.

Conventions for anyone adding or editing a page (read these before you write one):

**A new page** is ``docs/NAME.md`` plus one line under ``nav:`` in ``mkdocs.yml`` (a page left out of the nav
fails ``mkdocs build --strict`` and ``test_every_page_is_in_the_nav``). Link pages relatively
(``[audits](audits.md#delivery)``). Build the site as CI does::

    python3.11 -m venv .venv-docs && .venv-docs/bin/pip install -q -r docs/requirements.txt
    .venv-docs/bin/mkdocs build --strict

(MkDocs gets its own venv: it depends on PyPI's unrelated ``watchdog`` package, which must never be installed
beside this one. The CLI reference page is generated at build time from the click commands, by
``docs/hooks/cli_reference.py`` running ``.venv/bin/python``.)

**Each page runs as a story**, top to bottom, in its own fresh folder laid out like a clone after ``watchdog
demo``: ``config/watchdog.yaml`` and ``checks/*.yaml`` copied from the repository, and the demo database at
``reports/demo/crm.db`` (so ``--db crm`` and ``sqlite:///reports/demo/crm.db`` work). Blocks are handled by
their fence's language:

* ``yaml`` -- by its top-level keys: a **suite** (``tables:``, ``custom_sql:``, ``allow_empty:``) must pass
  ``watchdog check-config --checks`` and is then scanned against the demo database, where no check may end in
  status ``error``; anything else is a **config**, loaded by the settings loader (``load_settings``).
  A fence with ``title="PATH"`` (Material shows it as the file name) is also written to ``PATH`` in the page's
  folder, so later blocks can use it: ``title="config/watchdog.yaml"`` replaces the configuration.
* ``console`` -- lines starting with ``$ `` are commands (a trailing ``\\`` continues one); other lines are
  sample output and are not compared. ``sh`` / ``bash`` -- every line is a command. Commands run in ``bash``
  in the page's folder, one after another, with ``.venv/bin`` first on ``PATH``, no LLM key, and
  ``SMTP_HOST``/``SMTP_PORT`` pointing at a real SMTP receiver on loopback (write ``${SMTP_PORT:-25}`` in a
  config). Each must exit 0; a ``watchdog`` command may also exit 1 or 2 (failed or warned checks). A command
  ending in ``# exit N`` must exit N. Long-running commands need a bound (``watchdog serve --for 2``).
  (A plain ``watchdog`` command that only reads and writes files -- :data:`IN_PROCESS` -- runs in this process
  through the CLI's own entry point, with the same exit codes and the same environment; that only saves time.)
* ``python`` -- run as a script with the project's Python in the page's folder; it must exit 0.
* ``text``, ``json``, ``ini``, ``mermaid``, ``dockerfile``, ... -- shown, not run (output and file formats).

**A marker** -- an HTML comment on the line right before the fence -- changes that:

* ``<!-- docs-test: skip KIND: reason -->`` for a block that cannot run here. KIND must be one of
  :data:`CANNOT_RUN_HERE` (systemd, docker, kubernetes, ...), and the reason is required.
* ``<!-- docs-test: suite -->`` / ``<!-- docs-test: config -->`` forces the YAML kind;
  ``<!-- docs-test: file -->`` only writes the block to its ``title`` path (a later command on the page
  must use that path, else the block is never executed and the test fails).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import REPO

DOCS = REPO / "docs"
#: what a ``skip`` marker may name: things this machine (and CI) cannot run, each for a reason it states
CANNOT_RUN_HERE = {
    "systemd": "needs a systemd host",
    "docker": "needs a container engine",
    "kubernetes": "needs a cluster",
    "crontab": "installs into the system's crontab",
    "install": "installs packages into a new environment (CI's user-install step runs `pip install -e .`)",
    "service": "runs until stopped (a receiver or a daemon); the test provides its own",
    "remote-db": "needs a database server that is not on this machine (Trino, Snowflake, Spark cluster, ...)",
    "hosted-llm": "needs a hosted model endpoint and its API key",
    "local-model": "needs a GGUF model file the user brings",
    "mcp-client": "is a client's configuration file",
    "orchestrator": "needs Airflow or Dagster, which are not dependencies",
}
RUN_LANGS = {"yaml", "yml", "console", "sh", "bash", "python"}
SHOWN_LANGS = {"text", "json", "ini", "mermaid", "dockerfile", "toml", "sql", "markdown", "md", "html", ""}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>```+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=ticks)[ \t]*$",
                   re.S | re.M)
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<what>[a-z-]+)(?:\s+(?P<kind>[a-z-]+))?(?::\s*(?P<reason>.*?))?\s*-->\s*$")
SUITE_KEYS = {"tables", "custom_sql", "allow_empty"}
#: pages whose audit example e-mails: the receiver must have got a message from each
SENDS_MAIL = {"README.md", "docs/getting-started.md", "docs/audits.md"}


@dataclass
class Block:
    page: str
    line: int
    lang: str
    title: str | None
    body: str
    marker: re.Match | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def blocks_of(path: Path) -> list[Block]:
    text = path.read_text()
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        info = match["info"].strip()
        lang = info.split()[0].lower() if info else ""
        title = re.search(r'title="([^"]+)"', info)
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        body = "\n".join(ln[len(match["indent"]):] for ln in match["body"].splitlines())
        found.append(Block(str(path.relative_to(REPO)), line, lang, title[1] if title else None, body,
                           MARKER.search(before)))
    return found


def page_blocks(path: Path) -> list[Block]:
    found = blocks_of(path)
    if path.name == "README.md":
        # README's first two commands (set up and run the demo; run the test suite) are its set-up contract:
        # tests/test_readme.py holds them and CI's user-install step runs the first one literally
        shells = [b for b in found if b.lang == "sh"][:2]
        found = [b for b in found if b not in shells]
    return found


DOC_PAGES = [*pages(), REPO / "README.md"]


# -- the site -------------------------------------------------------------------------------------------------

def nav_pages() -> set[str]:
    def walk(node) -> set[str]:
        if isinstance(node, str):
            return {node}
        if isinstance(node, list):
            return set().union(*(walk(n) for n in node)) if node else set()
        if isinstance(node, dict):
            return set().union(*(walk(v) for v in node.values())) if node else set()
        return set()

    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.SafeLoader)
    return walk(config["nav"])


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    on_disk = {str(p.relative_to(DOCS)) for p in pages() if "hooks" not in p.parts}
    listed = nav_pages()
    assert on_disk - listed == set(), "add these pages to mkdocs.yml's nav"
    assert listed - on_disk == set(), "these nav entries have no page"


def test_the_cli_reference_is_generated_from_every_click_command():
    from importlib.util import module_from_spec, spec_from_file_location

    from watchdog.cli.app import COMMAND_HOMES

    spec = spec_from_file_location("cli_reference", DOCS / "hooks" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.MARKER in (DOCS / "cli.md").read_text()
    text = module.render()
    for name in COMMAND_HOMES:
        assert f"## `watchdog {name}`" in text
        # the options of each command, as its own --help prints them
    assert "### `watchdog review approve`" in text and "--sample INTEGER" in text


def test_the_checks_reference_has_a_section_for_every_check_type():
    from watchdog.scan.check_types import check_types

    headings = set(re.findall(r"^## (\w+)$", (DOCS / "checks.md").read_text(), flags=re.M))
    assert set(check_types()) - headings == set(), "give each check type a `## name` section in docs/checks.md"


def test_every_block_is_run_or_marked_for_a_reason():
    problems = []
    for path in DOC_PAGES:
        for block in page_blocks(path):
            m = block.marker
            if block.lang not in RUN_LANGS | SHOWN_LANGS:
                problems.append(f"{block.where}: unknown fence language {block.lang!r}: use one of "
                                f"{sorted(RUN_LANGS | SHOWN_LANGS)}")
            if m is None:
                continue
            if m["what"] == "skip":
                problems += skip_misused(block)
                if m["kind"] not in CANNOT_RUN_HERE:
                    problems.append(f"{block.where}: skip kind {m['kind']!r} is not one of {sorted(CANNOT_RUN_HERE)}")
                if not (m["reason"] or "").strip():
                    problems.append(f"{block.where}: a skip marker needs a reason after the colon")
            elif m["what"] in {"suite", "config"}:
                if block.lang not in {"yaml", "yml"}:
                    problems.append(f"{block.where}: {m['what']} marks a yaml block")
            elif m["what"] == "file":
                if not block.title:
                    problems.append(f'{block.where}: a file marker needs title="PATH" on the fence')
            else:
                problems.append(f"{block.where}: unknown marker {m['what']!r}")
    assert problems == []


INSTALLING = re.compile(r"pip install|pipx |uv tool |-m venv|mkdocs |^source |^cd |^ln -s |--version")


def skip_misused(block: Block) -> list[str]:
    """A skip marker only where the block truly cannot run: never on a suite, and `install` only on installing."""
    assert block.marker is not None
    if block.lang in {"yaml", "yml"}:
        data = yaml.load(block.body, Loader=yaml.SafeLoader)
        if isinstance(data, dict) and SUITE_KEYS & set(data):
            return [f"{block.where}: a suite always runs (build the tables it needs in a block before it)"]
    if block.marker["kind"] == "install":
        others = [c for c in commands_of(block) if not INSTALLING.search(c.strip())]
        if others:
            return [f"{block.where}: an `install` skip holds commands that install nothing: {others}"]
    return []


# -- running the blocks ---------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def workspace_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out like a clone after `watchdog demo`: config/, checks/, reports/demo/crm.db."""
    from watchdog.run.demo_data import build_demo_database

    root = tmp_path_factory.mktemp("docs-template")
    shutil.copytree(REPO / "config", root / "config")
    shutil.copytree(REPO / "checks", root / "checks")
    (root / "reports" / "demo").mkdir(parents=True)
    build_demo_database(root / "reports" / "demo" / "crm.db")
    return root


@pytest.fixture(scope="session")
def smtp_receiver():
    from watchdog.testing.smtp_sink import SmtpSink

    with SmtpSink() as sink:
        yield sink


def run_env(smtp) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "WATCHDOG_", "CRM_DATABASE_URL", "SMTP_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(SMTP_HOST=smtp.host, SMTP_PORT=str(smtp.port), PYTHONDONTWRITEBYTECODE="1")
    return env


def commands_of(block: Block) -> list[str]:
    lines = block.body.splitlines()
    if block.lang == "console":
        joined = []
        for i, ln in enumerate(lines):
            if ln.startswith("$ "):
                cmd, j = ln[2:], i
                while cmd.endswith("\\") and j + 1 < len(lines):  # a command continued on the next line
                    j += 1
                    cmd = cmd[:-1] + " " + lines[j].strip()
                joined.append(cmd)
        return joined
    out: list[str] = []
    for ln in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1] + " " + ln.strip()
        elif ln.strip() and not ln.lstrip().startswith("#"):
            out.append(ln)
    return out


#: commands that only read and write files: run in this process through the CLI's own entry point (its one-line
#: errors and exit codes), which saves starting Python and importing watchdog for each; the others (demo, run,
#: serve: signals, daemons, child processes) and anything using the shell run in bash
IN_PROCESS = {"check-config", "scan", "profile", "suggest", "verify", "graph", "schedule", "history", "query",
              "status", "dashboard", "trail"}
SHELL = re.compile(r"[|&;<>$`*?(){}\[\]~!]")


def in_process_argv(command: str) -> list[str] | None:
    import shlex

    argv = shlex.split(command, comments=True)
    if len(argv) < 2 or argv[0] != "watchdog" or argv[1] not in IN_PROCESS:
        return None
    if SHELL.search(re.sub(r"'[^']*'|\"[^\"]*\"", "", command.split(" #", 1)[0])):
        return None
    return argv[1:]


def run_in_process(argv: list[str], folder: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
                   ) -> tuple[int, str]:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from watchdog.cli.main import main

    monkeypatch.chdir(folder)
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out, sigterm = io.StringIO(), signal.getsignal(signal.SIGTERM)  # the CLI makes SIGTERM an interrupt
    try:
        with redirect_stdout(out), redirect_stderr(out):
            main(argv)
    except SystemExit as exc:
        code = exc.code
        return (code if isinstance(code, int) else 0 if code is None else 1), out.getvalue()
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    return 0, out.getvalue()


def run_commands(block: Block, folder: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for command in commands_of(block):
        expected = re.search(r"#\s*exit\s+(\d+)\s*$", command)
        allowed = {int(expected[1])} if expected else ({0, 1, 2} if command.lstrip().startswith("watchdog") else {0})
        argv = in_process_argv(command)
        if argv is not None:
            code, output = run_in_process(argv, folder, env, monkeypatch)
        else:
            done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=180)
            code, output = done.returncode, done.stdout[-2000:] + "\n" + done.stderr[-2000:]
        assert code in allowed, f"{block.where}: `{command}` exited {code}\n{output[-4000:]}"


def check_suite(block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from watchdog.cli.app import cli

    suite = folder / (block.title or f"docs-example-{block.line}.yaml")
    suite.parent.mkdir(parents=True, exist_ok=True)
    suite.write_text(block.body + "\n")
    monkeypatch.chdir(folder)
    done = CliRunner().invoke(cli, ["check-config", "--checks", str(suite)])
    assert done.exit_code == 0, f"{block.where}: check-config refused the suite:\n{done.output}"
    out = folder / "reports" / "docs-scans" / str(block.line)
    done = CliRunner().invoke(cli, ["scan", "--db", "sqlite:///reports/demo/crm.db", "--checks", str(suite),
                                    "--out", str(out), "--sample", "0"])
    assert done.exit_code in (0, 1, 2), f"{block.where}: the scan ended in an error:\n{done.output}"
    assert done.exception is None or isinstance(done.exception, SystemExit), f"{block.where}: {done.exception!r}"
    import json

    findings = json.loads((out / "findings.json").read_text())["findings"]
    errors = [f"{f['name']}: {f['error']}" for f in findings if f["status"] == "error"]
    assert errors == [], f"{block.where}: checks in error on the demo database"


def check_config(block: Block, folder: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from watchdog.settings import load_settings

    path = folder / (block.title or f"config/docs-example-{block.line}.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.body + "\n")
    for key in ("SMTP_HOST", "SMTP_PORT"):
        monkeypatch.setenv(key, env[key])
    load_settings(path)


def yaml_kind(block: Block) -> str:
    if block.marker is not None and block.marker["what"] in {"suite", "config", "file"}:
        return block.marker["what"]
    data = yaml.load(block.body, Loader=yaml.SafeLoader)
    assert isinstance(data, dict), f"{block.where}: a YAML example is a mapping (a suite or a config)"
    return "suite" if SUITE_KEYS & set(data) else "config"


@pytest.mark.parametrize("path", DOC_PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_page_examples_run(path: Path, workspace_template: Path, smtp_receiver, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "page"
    shutil.copytree(workspace_template, folder)
    env = run_env(smtp_receiver)
    files_written: list[tuple[Block, str]] = []
    commands_seen: list[str] = []
    mails_before = len(smtp_receiver.received)
    for block in page_blocks(path):
        if block.marker is not None and block.marker["what"] == "skip":
            continue
        if block.lang in {"yaml", "yml"}:
            kind = yaml_kind(block)
            if kind == "file":
                target = folder / str(block.title)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(block.body + "\n")
                files_written.append((block, str(block.title)))
            elif kind == "suite":
                check_suite(block, folder, monkeypatch)
            else:
                check_config(block, folder, env, monkeypatch)
        elif block.lang in {"console", "sh", "bash"}:
            commands_seen.extend(commands_of(block))
            run_commands(block, folder, env, monkeypatch)
        elif block.lang == "python":
            script = folder / f"docs-example-{block.line}.py"
            script.write_text(block.body + "\n")
            done = subprocess.run([sys.executable, str(script)], cwd=folder, env=env, capture_output=True,
                                  text=True, timeout=180)
            assert done.returncode == 0, f"{block.where}: the Python example failed:\n{done.stderr[-3000:]}"
    unused = [b.where for b, title in files_written if not any(title in c for c in commands_seen)]
    assert unused == [], "file blocks that no command on their page uses"
    page = str(path.relative_to(REPO))
    if page in SENDS_MAIL:
        mails = smtp_receiver.received[mails_before:]
        assert mails, f"{page}: the audit example sent no e-mail"
        assert all(m.message["Subject"].startswith("[watchdog] ") for m in mails)
        assert "dq-team@example.com" in {r for m in mails for r in m.rcpt_tos}
