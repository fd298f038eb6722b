"""Garbage never raises: frame decoders, the conversation decoder and the capture readers turn any
bytes into units with problems (hypothesis)."""

from __future__ import annotations

import io
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.capture_helpers import conversation_packets, write_pcap
from tests.formats.kafka.protocol.test_protocol_frames import API_REQ, API_RESP
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.protocol.frames import decode_request, decode_response
from wireinspect.formats.kafka.protocol.specs_loader import specs
from wireinspect.formats.kafka.protocol.stream import KafkaDecoder
from wireinspect.inputs.capture import capture_units
from wireinspect.inputs.source import BytesSource
from wireinspect.formats.options import Options
from wireinspect.streams import Conversation, Event

ENC = bytes_encoder("base64")
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = sorted(specs().names)


@FAST
@given(st.sampled_from(KEYS), st.integers(0, 18), st.binary(max_size=120))
def test_any_body_for_any_api(key, version, body):
    head = struct.pack(">hhi", key, version, 1) + b"\x00\x01c"
    for data in (struct.pack(">i", len(head) + len(body) + 1) + head + b"\x00" + body,
                 struct.pack(">i", len(body) + 4) + struct.pack(">i", 1) + body):
        f = decode_request(data, 0)
        f.to_json(ENC), f.to_tree()
        g = decode_response(data, 0, (key, version))
        g.to_json(ENC), g.to_tree()


@FAST
@given(st.lists(st.sampled_from([API_REQ, API_RESP, b"\x7f\xff\xff\xff", b"\x00"]) | st.binary(max_size=40),
                max_size=8), st.integers(1, 50))
def test_conversation_decoder_any_stream(parts, chunk):
    stream = b"".join(p if isinstance(p, bytes) else b"".join(p) for p in parts)
    dec = KafkaDecoder(Conversation(0))
    units = []
    for i in range(0, len(stream), chunk):
        units += dec.feed(Event("request" if (i // chunk) % 2 else "response", "data", i, stream[i:i + chunk]))
    units += dec.close()
    for u in units:
        u.to_json(ENC), u.to_tree()


def _capture():
    chunks = [("request", API_REQ), ("response", API_RESP)] * 3
    bio = io.BytesIO()
    write_pcap(bio, conversation_packets("10.0.0.1:1", "10.0.0.2:9092", chunks, mss=9))
    return bio.getvalue()


CAPTURE = _capture()


@FAST
@given(st.integers(0, len(CAPTURE) - 1), st.binary(min_size=1, max_size=8), st.integers(0, len(CAPTURE)))
def test_damaged_capture_never_raises(at, junk, cut):
    data = (CAPTURE[:at] + junk + CAPTURE[at + len(junk):])[:max(cut, 24)]
    for u in capture_units(BytesSource(data, "x"), Options(), protocols=STREAM_PROTOCOLS):
        u.to_json(ENC), u.to_tree()
