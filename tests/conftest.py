import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)


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


# CI runs the property tests with a fixed seed sequence (reproducible); elsewhere they explore.
from hypothesis import settings as _hsettings  # noqa: E402

_hsettings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    _hsettings.load_profile("ci")
