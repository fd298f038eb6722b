"""Where the test data is: the checkout's root, its samples, and the real files beside the checkout
(``../shared/external``; tests that need them skip when it is missing)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
EXTERNAL = ROOT.parent / "shared" / "external"
