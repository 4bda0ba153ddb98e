"""README's first two commands are the set-up contract: demo first, tests second, and CI runs the latter."""

import re

from tests.conftest import REPO


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", (REPO / "README.md").read_text(), flags=re.S)


def test_readme_starts_with_the_demo_command_then_the_test_command():
    demo, tests = shell_blocks()[:2]
    assert demo.startswith("python3.11 -m venv .venv") and demo.endswith("watchdog demo")
    assert tests.startswith("python3.11 -m venv .venv") and tests.endswith("pytest")


def test_ci_runs_the_readme_test_command_verbatim():
    tests = shell_blocks()[1]
    assert tests in (REPO / ".ci" / "run").read_text().splitlines()
