"""Record batches inside captured Produce/Fetch frames take the fast JSON path (``Batch.settle``,
``Frame.json_line``): the lines equal what the full decoder gives when every batch's records are
parsed as the frame is decoded (the frame's problems included), on a real librdkafka capture of every
codec and on damaged copies of it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLES
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.records import Batch
from wireinspect.inputs.capture import capture_units
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options
from wireinspect.render.jsonl import dumps

PCAP = (SAMPLES / "capture" / "librdkafka.pcap").read_bytes()


def lines(data: bytes, mode: str, eager: bool) -> list:
    """Each unit's JSON object and problem codes; ``eager``: every batch's records parsed when decoded
    (the full decoder), else the fast path as ``dump --json`` takes it."""
    enc = bytes_encoder(mode)
    with pytest.MonkeyPatch.context() as m:
        if eager:
            m.setattr(Batch, "settle", lambda self, mode="base64": self.parse_records())
        out = []
        for u in capture_units(BytesSource(data, "x.pcap"), Options(), protocols=STREAM_PROTOCOLS):
            line = u.json_line(enc, mode, dumps, {}) if (u.json_line is not None and not eager) else dumps(u.to_json(enc))
            out.append((json.loads(line), sorted(p.code for p in u.problems)))
    return out


@pytest.mark.parametrize("mode", ["base64", "hex", "text"])
def test_sample_capture_fast_equals_full(mode):
    fast = lines(PCAP, mode, False)
    assert fast == lines(PCAP, mode, True)
    assert any(u["type"] == "frame" and u["apiName"] in ("Produce", "Fetch") for u, _ in fast)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(PCAP) - 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_damaged_capture_fast_equals_full(edits):
    data = bytearray(PCAP)
    for pos, val in edits:
        data[pos] = val
    data = bytes(data)
    assert lines(data, "base64", False) == lines(data, "base64", True)
