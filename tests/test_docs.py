"""Every problem code the source can emit is documented (docs/problems.md and the per-format pages it links)."""

import re

from tests.conftest import ROOT


def test_every_problem_code_is_documented():
    doc = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    documented = set(re.findall(r"`([a-z][a-z0-9_]*)`", doc))
    used = set()
    for path in (ROOT / "wireinspect").rglob("*.py"):
        used |= set(re.findall(r'(?:Problem|problem)\(\s*"([a-z][a-z0-9_]*)"', path.read_text()))
    missing = sorted(used - documented)
    assert not missing, f"undocumented problem codes: {missing}"
