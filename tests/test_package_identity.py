"""`import watchdog` must be this repository's package, never PyPI's file-system `watchdog`."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import watchdog

REPO = Path(__file__).resolve().parent.parent


def test_import_watchdog_resolves_to_this_repository():
    assert Path(watchdog.__file__).resolve().parent == REPO / "watchdog"


def test_pypi_watchdog_is_not_installed_beside_it():
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("watchdog")
    except PackageNotFoundError:
        return
    raise AssertionError(f"the unrelated PyPI package 'watchdog' {dist.version} is installed; uninstall it")


# ---- when PyPI's watchdog is what `import watchdog` finds: one clear line, no traceback


OTHER_VERSION = "7.1.0"


def _standin(folder: Path) -> Path:
    """A package with the other project's shape: watchdog/{__init__,events,version}.py and observers/."""
    package = folder / "watchdog"
    (package / "observers").mkdir(parents=True)
    (package / "__init__.py").write_text('"""Filesystem events monitoring."""\n')
    (package / "version.py").write_text(f'VERSION_STRING = "{OTHER_VERSION}"\n')
    (package / "events.py").write_text("class FileSystemEventHandler:\n    pass\n")
    (package / "observers" / "__init__.py").write_text("class Observer:\n    pass\n")
    return folder


@pytest.fixture(scope="module")
def other_watchdog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose `watchdog` is PyPI's file-system events package: the real wheel installed into a throw-away
    target when pip can fetch it, else a stand-in of the same shape (offline)."""
    root = tmp_path_factory.mktemp("other-watchdog")
    wheels, target = root / "wheels", root / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    fetched = subprocess.run([*pip, "download", "--no-deps", "--only-binary", ":all:", "--timeout", "20",
                              f"watchdog=={OTHER_VERSION}", "-d", str(wheels)], capture_output=True, timeout=120)
    found = sorted(wheels.glob("watchdog-*.whl")) if fetched.returncode == 0 else []
    if found and subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(found[0])],
                                capture_output=True, timeout=120).returncode == 0:
        assert (target / "watchdog" / "observers").is_dir()
        return target
    shutil.rmtree(target, ignore_errors=True)
    return _standin(target)


def _python(code: str, *path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` with ``path`` first on sys.path (then this repository, for watchdog_dq), in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, path), str(REPO)])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=cwd)


def test_the_console_script_is_the_guarded_entry_point():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"watchdog": "watchdog_dq:run"}


def test_the_command_says_in_one_line_which_watchdog_it_found(other_watchdog, tmp_path):
    done = _python("import sys; sys.argv = ['watchdog', 'scan', '--db', 'sqlite:///x.db', '--checks', 'x.yaml'];"
                   "from watchdog_dq import run; run()", other_watchdog, cwd=tmp_path)  # what the console script runs
    assert done.returncode == 3 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: `import watchdog` finds another package, not watchdog-dq: ")
    assert str(other_watchdog / "watchdog" / "__init__.py") in lines[0]
    assert f"(watchdog {OTHER_VERSION}, the file-system events library)" in lines[0]
    assert f"`pipx install {REPO}`" in lines[0] and f"`uv tool install {REPO}`" in lines[0]


def test_the_api_says_in_one_line_which_watchdog_it_found(other_watchdog, tmp_path):
    done = _python("import watchdog_dq\ntry:\n    watchdog_dq.require()\nexcept ImportError as exc:\n"
                   "    print(type(exc).__name__, exc)\n", other_watchdog, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("WrongWatchdog `import watchdog` finds another package, not watchdog-dq")
    ours = _python("import watchdog_dq; print(watchdog_dq.require().__file__)", cwd=tmp_path)
    assert ours.stdout.strip() == str(REPO / "watchdog" / "__init__.py")


def test_two_packages_in_one_folder_are_said_so(other_watchdog, tmp_path):
    """pip installing both into one site-packages leaves the last one's __init__.py over the other's modules."""
    merged = tmp_path / "site" / "watchdog"
    shutil.copytree(other_watchdog / "watchdog", merged)
    for item in (REPO / "watchdog").iterdir():
        if item.name not in ("__init__.py", "__pycache__") and not (merged / item.name).exists():
            (merged / item.name).symlink_to(item)
    api = _python("from watchdog.api import scan", merged.parent, cwd=tmp_path)
    assert api.returncode == 1
    assert api.stderr.splitlines()[-1].startswith("ImportError: `import watchdog` gives another package's ")
    cli = _python("import sys; sys.argv = ['watchdog', '--version']; from watchdog_dq import run; run()",
                  merged.parent, cwd=tmp_path)
    assert cli.returncode == 3 and len(cli.stderr.splitlines()) == 1 and "Traceback" not in cli.stderr
