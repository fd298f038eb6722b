"""Fixtures for the Kafka internal-topic decoders: bytes written by independent, real implementations,
and the values a decoder should find in them (see ``fixtures/README.md``).

* ``load(name) -> bytes``: a fixture's bytes. ``name`` is a file stem in ``fixtures/`` (stored as
  ``<name>.hex``: hex digits, ``#`` comment lines naming the writer), or ``external/<path>`` for real
  broker files kept outside the repository in ``../shared/external/kafka-internal/<path>``
  (``FileNotFoundError`` when that folder is absent: use ``available(name)`` or skip). For a local
  run against files kept elsewhere, ``WIREINSPECT_EXTERNAL`` names the folder that stands for
  ``../shared/external`` (``tests/paths.py``).
* ``expected(name) -> list[dict]``: the values derived from the bytes by ``fixtures/independent_reader.py``
  (record batches read with ``struct``, structs walked from the message-spec JSON), one dict per
  record for a log/checkpoint, one dict for a consumer-protocol blob.
* ``writer_view(name)``: for the ``java-server__*`` logs, the writer's own reading of them.
* ``names(external=None)``: every fixture name (local, external or both).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests import paths

HERE = Path(__file__).resolve().parent / "fixtures"
EXTERNAL = paths.EXTERNAL / "kafka-internal"  # ../shared/external, or $WIREINSPECT_EXTERNAL (tests/paths.py)


def _path(name: str) -> Path:
    if name.startswith("external/"):
        return EXTERNAL / name[len("external/"):]
    return HERE / (name + ".hex")


def load(name: str) -> bytes:
    p = _path(name)
    if name.startswith("external/"):
        return p.read_bytes()
    text = "".join(line.split("#", 1)[0] for line in p.read_text().splitlines())
    return bytes.fromhex("".join(text.split()))


def header(name: str) -> list[str]:
    """The ``#`` comment lines of a local fixture (who wrote the bytes, and how)."""
    if name.startswith("external/"):
        return []
    return [line[1:].strip() for line in _path(name).read_text().splitlines() if line.startswith("#")]


def expected(name: str) -> list[dict]:
    return json.loads((HERE / (name + ".expected.json")).read_text())


def writer_view(name: str) -> list[dict] | None:
    """For ``java-server__*`` logs: what Kafka 4.0.0's own deserializers read from the bytes (its JSON
    converters' field names), record by record; ``None`` for other fixtures."""
    p = HERE / (name + ".writer.json")
    return json.loads(p.read_text()) if p.is_file() else None


def available(name: str) -> bool:
    return _path(name).is_file()


def names(external: bool | None = None) -> list[str]:
    """Local fixture names (``external=False``), external ones (``True``) or all (``None``)."""
    out = []
    if external in (None, False):
        out += sorted(p.name[:-4] for p in HERE.glob("*.hex"))
    if external in (None, True):
        root = HERE / "external"
        out += sorted("external/" + str(p.relative_to(root))[:-len(".expected.json")]
                      for p in root.rglob("*.expected.json"))
    return out
