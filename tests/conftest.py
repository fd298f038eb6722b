import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
EXTERNAL = ROOT.parent / "shared" / "external"


@pytest.fixture
def external():
    if not EXTERNAL.is_dir():
        pytest.skip("../shared/external is not present")
    return EXTERNAL


def valid_samples():
    out = []
    for p in sorted(SAMPLES.rglob("*.log")):
        if "damaged" not in p.parts:
            out.append(p)
    return out
