"""Where the test data is: the checkout's root, its samples, and the real files beside the checkout
(``../shared/external``; tests that need them skip when it is missing).

``WIREINSPECT_EXTERNAL`` overrides that folder for a local run: set it to a directory laid out like
``../shared/external`` (``kafka-internal/``, ``redpanda/``...), e.g.
``WIREINSPECT_EXTERNAL=/tmp/rb/for-shared/external pytest tests/formats/kafka/internal``. It replaces
the whole folder: the kafka-internal tests skip a file it lacks, but the tests that walk every external
file expect all of ``../shared/external`` (copy it in; symbolic links to directories are not followed)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
EXTERNAL = Path(os.environ["WIREINSPECT_EXTERNAL"]) if os.environ.get("WIREINSPECT_EXTERNAL") \
    else ROOT.parent / "shared" / "external"
