"""An audit that runs only some checks of its suites (``tags``, ``owners``, ``exclude_tags`` on the audit): the
same checks as ``watchdog scan --tags/--owner/--exclude-tags`` and the Python API select, on a real database; a
selection that matches nothing is reported by ``check-config`` and by the run, naming the audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import watchdog
from tests.test_chat_routing import make_project
from watchdog.run.audit import execute_audit
from watchdog.scan.suites import SuiteError
from watchdog.settings import load_settings

#: the checks of tests.test_chat_routing.SUITE: owners, tags (written out, not computed)
CHECKS = {
    "orders.amount.not_null": ({"@alice"}, {"shop", "finance"}),
    "orders.status.not_null": ({"@alice"}, {"shop", "finance"}),
    "customers.email.not_null": ({"@data-platform"}, {"shop"}),
    "customers.phone.not_null": ({"@bob"}, {"shop", "pii"}),
    "customers.id.not_null": ({"@data-platform"}, {"shop"}),
}


def selected_project(root: Path, selection: str) -> Path:
    config = make_project(root, "      - file: {dir: reports}\n")
    config.write_text(config.read_text().replace("    checks: [checks/shop.yaml]\n",
                                                 f"    checks: [checks/shop.yaml]\n{selection}"))
    return config


@pytest.mark.parametrize(("selection", "options"), [
    ("    tags: [finance]\n", {"tags": ["finance"]}),
    ('    owners: ["@data-platform", "@bob"]\n    exclude_tags: [pii]\n',
     {"owners": ["@data-platform", "@bob"], "exclude_tags": ["pii"]}),
    ('    tags: [shop]\n    owners: ["@alice", "@bob"]\n    exclude_tags: [pii]\n',
     {"tags": ["shop"], "owners": ["@alice", "@bob"], "exclude_tags": ["pii"]}),
])
def test_an_audit_runs_the_checks_its_selection_keeps(tmp_path: Path, selection: str, options: dict) -> None:
    config = selected_project(tmp_path, selection)
    run = execute_audit(load_settings(config), "shop")
    ran = sorted(f["name"] for f in json.loads((run.run_dir / "findings.json").read_text())["findings"])
    tags, owners, excluded = (set(options.get(k) or ()) for k in ("tags", "owners", "exclude_tags"))
    expected = sorted(name for name, (who, labels) in CHECKS.items()
                      if (not tags or labels & tags) and (not owners or who & owners) and not labels & excluded)
    assert ran == expected and ran
    api = watchdog.scan(f"sqlite:///{tmp_path / 'data' / 'shop.db'}", tmp_path / "checks" / "shop.yaml", **options)
    assert sorted(f.name for f in api.findings) == ran                    # the same selection as scan's


def test_a_selection_that_matches_nothing_is_reported_with_the_audit(tmp_path: Path, run_cli) -> None:
    config = selected_project(tmp_path, "    tags: [finanse]\n")
    checked = run_cli("check-config", "--config", str(config))
    assert checked.returncode != 0
    assert "nothing to check: the selection of audit 'shop' (tags: [finanse]) matches none" in checked.stderr
    assert "did you mean 'finance'" in checked.stderr and "allow_empty: true" in checked.stderr
    with pytest.raises(SuiteError, match=r"the selection of audit 'shop' \(tags: \[finanse\]\)"):
        execute_audit(load_settings(config), "shop")
    allowed = selected_project(tmp_path / "allowed", "    tags: [finanse]\n    allow_empty: true\n")
    assert run_cli("check-config", "--config", str(allowed)).returncode == 0


def test_a_selection_key_is_checked_with_the_line(tmp_path: Path) -> None:
    from watchdog.errors import ConfigError

    config = selected_project(tmp_path, "    tags: []\n    exclude: [pii]\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(config)
    message = str(caught.value)
    assert "audits.shop.tags" in message and "audits.shop.exclude" in message
