"""The stream dump input knows no particular protocol: a toy protocol with a ``dump``
(:class:`~wireinspect.streams.StreamDump`) gets a Format whose raw dumps and ``tshark -z
follow,tcp,raw`` text decode through the protocol's decoder and encode back through its encoder."""

from __future__ import annotations

from wireinspect.captures import stream_dump_format
from wireinspect.catalog import FORMATS, KAFKA_STREAM, STREAM_PROTOCOLS
from wireinspect.formats.common import Unparsed
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import EncodeContext
from wireinspect.formats.options import Options
from wireinspect.streams import StreamDump

SEEN = []


class _ToyDecoder:
    """Every data event becomes one unit holding its bytes."""

    def __init__(self, conversation, opts):
        self.conv = conversation

    def feed(self, ev):
        SEEN.append((ev.direction, ev.kind, ev.position))
        if ev.kind != "data":
            return []
        return [Unparsed(ev.position, ev.length, [], data=ev.data, protocol="toy", conversation=self.conv,
                         direction=ev.direction)]

    def close(self):
        return []


class _Toy:
    id = "toy"
    ports = (1,)
    dump = StreamDump(id="toy-stream", description="toy", recognised_by="TOY at byte 0",
                      sniff=lambda head, name: 70 if head.startswith(b"TOY") else 0,
                      direction=lambda head, size: "response" if size > 8 else "request",
                      honours=frozenset())

    @staticmethod
    def sniff(first):
        return 0

    @staticmethod
    def decoder(conversation, opts):
        return _ToyDecoder(conversation, opts)

    @staticmethod
    def encode(obj, ctx):
        raise AssertionError("unparsed objects are encoded by the input itself")


def test_toy_protocol_gets_a_stream_dump_format():
    fmt = stream_dump_format(_Toy)
    assert (fmt.id, fmt.description, fmt.recognised_by, fmt.honours) == ("toy-stream", "toy", "TOY at byte 0",
                                                                          frozenset())
    assert fmt.sniff(b"TOY...", "x") == 70 and fmt.sniff(b"nope", "x") == 0
    assert fmt.sniff(b"=====\nFollow: tcp,raw\n", "x") == 90
    SEEN.clear()
    data = b"TOY and some bytes"
    units = list(fmt.units(BytesSource(data, "t"), Options()))
    assert SEEN == [("response", "data", 0), ("response", "end", len(data))]
    assert [(u.position, bytes(u.data)) for u in units] == [(0, data)]
    ctx = EncodeContext(bytes_mode="hex")
    objs = [dict(u.to_json(bytes.hex), **u.raw_json(None, bytes.hex)) for u in units]
    assert [c for o in objs for _, c in fmt.encode(o, ctx)] == [data]
    assert {s for o in objs for s, _ in fmt.encode(o, ctx)} == {None}  # one direction: one output


def test_follow_text_gives_both_directions_named_apart():
    text = ("=" * 67 + "\nFollow: tcp,raw\nFilter: tcp.stream eq 0\n"
            "Node 0: 10.0.0.1:40000\nNode 1: 10.0.0.2:1\n"
            "544f59\n\t6f6b\n")
    fmt = stream_dump_format(_Toy)
    units = list(fmt.units(BytesSource(text.encode(), "f.txt"), Options()))
    assert [(u.direction, bytes(u.data)) for u in units] == [("request", b"TOY"), ("response", b"ok")]
    ctx = EncodeContext(bytes_mode="hex")
    out = [pair for u in units for pair in fmt.encode(dict(u.to_json(bytes.hex), **u.raw_json(None, bytes.hex)),
                                                       ctx)]
    assert out == [("request", b"TOY"), ("response", b"ok")]


def test_catalog_binds_the_kafka_stream_dump():
    assert KAFKA_STREAM in FORMATS and KAFKA_STREAM.id == "kafka-stream"
    with_dump = [p.id for p in STREAM_PROTOCOLS if getattr(p, "dump", None) is not None]
    assert with_dump == ["kafka"]
    assert [f.id for f in FORMATS if f.id.endswith("-stream")] == ["kafka-stream"]
