"""What starting the command line imports: ``import wireinspect.cli`` (every command) loads the format
descriptors and the stream protocol objects, not the decoders behind them; choosing the format of a
Kafka segment (every format's sniffer runs) loads no other format's decoder. Which modules are loaded
is checked, in a fresh interpreter; how long it takes is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.paths import ROOT, SAMPLES

SEGMENT = SAMPLES / "transactional" / "00000000000000000000.log"

# Decoders that neither the start of the command line nor the choice of a Kafka segment's format need.
NOT_AT_START = (
    "wireinspect.formats.jafka.messages", "wireinspect.formats.jafka.requests",
    "wireinspect.formats.rocketmq.bodies", "wireinspect.formats.rocketmq.remoting",
    "wireinspect.formats.rocketmq.commitlog", "wireinspect.formats.rocketmq.store",
    "wireinspect.formats.kafka.protocol.frames", "wireinspect.formats.kafka.protocol.walker",
    "wireinspect.formats.kafka.protocol.specs_loader",
    "wireinspect.formats.kafka.sidetables", "wireinspect.formats.kafka.checkpoints",
    "wireinspect.formats.kafka.logcheck", "wireinspect.formats.kafka.partition", "wireinspect.formats.kafka.indexes",
    "wireinspect.formats.kafka.internal.groups", "wireinspect.formats.kafka.internal.image",
    "wireinspect.formats.kafka.internal.transactions",
    "wireinspect.formats.kafka.recordtable", "wireinspect.formats.kafka.registry.labels",
    "wireinspect.inputs.capture.connections", "wireinspect.inputs.tcp",
    "rich",
)
# Not needed to start either (a Kafka segment needs them once it is read).
NOT_AT_IMPORT = ("wireinspect.formats.kafka.records", "wireinspect.formats.kafka.segment", "wireinspect.layout",
                 "crc32c")


def _loaded(code: str) -> set:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code + "\nimport json; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, cwd=ROOT, env=env).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_importing_the_command_line_imports_no_decoder():
    loaded = _loaded("import sys, wireinspect.cli")
    assert "wireinspect.catalog" in loaded and "wireinspect.formats.kafka.sidecar" in loaded
    assert sorted(loaded.intersection(NOT_AT_START + NOT_AT_IMPORT)) == []


def test_choosing_a_kafka_segments_format_imports_no_other_formats_decoder():
    loaded = _loaded("import sys, wireinspect.cli\n"
                     "from wireinspect.catalog import choose_format, claims_name\n"
                     f"path = {str(SEGMENT)!r}\n"
                     "head = open(path, 'rb').read(1 << 16)\n"
                     "assert choose_format(head, path).id == 'kafka-log' and not claims_name(path)")
    assert sorted(loaded.intersection(NOT_AT_START)) == []


def test_the_reports_are_imported_when_run():
    loaded = _loaded("import sys\nfrom wireinspect.catalog import REPORTS\n"
                     "REPORTS['group-offsets'](group=None)")
    assert "wireinspect.formats.kafka.internal.groups" in loaded
    assert "wireinspect.formats.kafka.internal.image" not in loaded


def test_the_light_copies_agree_with_the_declarations():
    """The constants the sniffers take from the light modules are those of the layouts."""
    from wireinspect.formats.jafka import requests, stream

    assert stream._HEAD.format == ">" + "".join(f.code for f in requests.REQUEST.fields[:2])
