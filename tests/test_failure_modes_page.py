"""docs/failure-modes.md is the page findings and messages point to: every anchor the code
uses is a section of it, every alarm kind has one, and every test it cites as proof exists."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from streamwarden.monitoring.findings import FAILURE_MODE, FindingKind

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "failure-modes.md"
LINK = re.compile(r"failure-modes\.md#([a-z-]+)")
#: ``file.py::test_name`` (optionally ``::test_a`` and ``::test_b`` on one line).
CITED = re.compile(r"`([\w/]+\.py)::(test_\w+)`(?: and `::(test_\w+)`)?")


def sections() -> set[str]:
    return {m.group(1) for m in re.finditer(r"^## ([a-z-]+)$", PAGE.read_text(), re.M)}


def anchors_in(paths: list[Path]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in paths:
        for anchor in LINK.findall(path.read_text(encoding="utf-8")):
            found.setdefault(anchor, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_anchor_the_code_links_to_is_a_section_of_the_page():
    code = [*ROOT.joinpath("src").rglob("*.py"), *ROOT.joinpath("engine", "src").rglob("*.java")]
    linked = anchors_in(code)
    assert "state-without-deadline" in linked  # the check sees the links at all
    assert {a: where for a, where in linked.items() if a not in sections()} == {}


def test_every_doctor_finding_points_to_a_section_of_the_page():
    text = "".join(p.read_text() for p in ROOT.joinpath("src/streamwarden/doctor").glob("*.py"))
    # a finding's last argument is its section: ..., "fix text", "anchor",\n )
    anchors = set(re.findall(r'^\s+"([a-z]+(?:-[a-z]+)+)",\n\s+\)$', text, re.M))
    anchors |= set(re.findall(r'^_SEE = "([a-z-]+)"$', text, re.M))
    assert {"memory-contradictions", "exposed-driver", "restart-blocked"} <= anchors
    assert anchors - sections() == set()


def test_every_kind_of_alarm_has_a_section():
    assert set(FAILURE_MODE) == set(typing.get_args(FindingKind))
    assert set(FAILURE_MODE.values()) <= sections()


def test_every_test_the_page_cites_exists():
    cited = 0
    for match in CITED.finditer(PAGE.read_text()):
        source = (ROOT / "tests" / match.group(1)).read_text()
        for name in filter(None, match.groups()[1:]):
            assert re.search(rf"^def {name}\(", source, re.M), f"{match.group(1)}::{name}"
            cited += 1
    assert cited >= 40
