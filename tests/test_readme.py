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


def test_the_demo_command_is_a_user_install():
    demo = shell_blocks()[0]
    assert "pip install -q -e . " in demo and "[" not in demo, "the demo installs only what it needs: no extras"


def test_readme_is_a_short_entry_over_the_docs_site():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move reference material into docs/"


def test_user_docs_carry_no_internal_history():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    pattern = re.compile(r"\bissue \d+|\bin this round\b|\bwhat changed in this round\b", re.I)
    found = [f"{p.name}: {m.group(0)}" for p in pages for m in pattern.finditer(p.read_text())]
    assert found == [], "user docs say what is, not how it came to be"


def test_every_results_file_the_docs_cite_is_in_the_repository():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    cited = {m for p in pages for m in re.findall(r"bench/results/([\w.-]+\.(?:json|txt))", p.read_text())}
    missing = sorted(name for name in cited if not (REPO / "bench" / "results" / name).exists())
    assert missing == [], f"docs quote measurements whose results files are not committed: {missing}"
