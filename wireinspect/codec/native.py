"""Optional compiled code: the C twins of the hot loops (``formats/kafka/_recordtable.c``, the magic-2
record reader and its projections; ``formats/kafka/_legacy.c``, the legacy message reader), built by ``pip install .`` where a C compiler is (``setup.py``; optional).
Without them, or with ``WIREINSPECT_PURE=1``, the Python twins do the work; the tests run both and
compare them on generated and damaged bytes."""

from __future__ import annotations

import os
from importlib import import_module


def compiled_twin(module: str, name: str):
    """The function ``name`` of the extension module ``module`` (a dotted name, e.g.
    ``"wireinspect.formats.kafka._recordtable"``), or ``None`` when ``WIREINSPECT_PURE`` is set or the
    extension is not built."""
    if os.environ.get("WIREINSPECT_PURE"):
        return None
    try:
        return getattr(import_module(module), name)
    except (ImportError, AttributeError):
        return None
