import os
import shutil
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


def twin_fixture(module, attr: str = "_compiled"):
    """An autouse fixture (assign it in a test module) that runs every test of the module twice: with
    ``module.<attr>``, the compiled twin of a hot loop (wireinspect/codec/native.py), and with it
    ``None``, the pure-Python twin alone. The compiled run skips where the extension is not built."""
    compiled = getattr(module, attr)

    @pytest.fixture(autouse=True, params=["compiled", "pure"])
    def impl(request, monkeypatch):
        if request.param == "compiled" and compiled is None:
            pytest.skip("the C extension is not built here (pip install . builds it)")
        monkeypatch.setattr(module, attr, compiled if request.param == "compiled" else None)
        return request.param

    return impl


def pytest_configure(config):
    """The external tools some tests run are skipped where absent, except those named in
    WIREINSPECT_TOOLS_REQUIRED (.ci/run installs them): a missing one stops the run instead."""
    missing = [t for t in os.environ.get("WIREINSPECT_TOOLS_REQUIRED", "").split() if not shutil.which(t)]
    if missing:
        raise pytest.UsageError(f"WIREINSPECT_TOOLS_REQUIRED: not on PATH: {' '.join(missing)} (.ci/run installs them)")
