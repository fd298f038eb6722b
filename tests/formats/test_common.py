"""The shared units (:mod:`wireinspect.formats.common`): ``unparsed`` and ``note``, in every format.

One table of cases per unit type drives both directions: the unit's JSON and raw keys (decode side)
and the bytes :func:`encode_unparsed` gives back (encode side). Then every format that yields these
units: its damaged inputs give ``rawBytes``/``rawZeros`` (never a ``bytes`` key) and come back byte
for byte; notes stand for no bytes; every encode error path exits 2 naming the key.
"""

from __future__ import annotations

import ast
import base64
import json
import struct
from pathlib import Path

import pytest

from tests.capture_helpers import conversation_packets, frame, write_pcap
from tests.kafka_bytes import v2_batch
from tests.roundtrip import dump_json, encode_in_process, encode_text, lines, objects, roundtrip
from wireinspect.catalog import STREAM_PROTOCOLS
from wireinspect.formats.common import (MAX_ZEROS, NOTE_TYPES, STREAM_KEEP_MAX, Note, Unparsed, encode_unparsed,
                                        unparsed_bytes)
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.layout import EncodeContext
from wireinspect.model import Problem

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
from tests.paths import EXTERNAL  # noqa: E402  (WIREINSPECT_EXTERNAL overrides it)
ENC = bytes_encoder("base64")
B64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
CTX = EncodeContext()


class _Conv:
    index = 3

    def connection_json(self):
        return {"index": 3, "client": "10.0.0.1:40000", "server": "10.0.0.2:9876"}


def _reader(data: bytes, base: int = 0):
    return lambda pos, n: data[pos - base:pos - base + n]


# -- the unparsed table: (name, input bytes, constructor, expected JSON, expected raw keys) ----------------
GARBAGE = b"\xde\xad\xbe\xef garbage"
UNPARSED_CASES = [
    ("garbage in a file", GARBAGE, lambda: Unparsed(0, len(GARBAGE), [Problem("garbage", 0, "x")]),
     {"type": "unparsed", "position": 0, "length": len(GARBAGE), "records": []}, {"rawBytes": B64(GARBAGE)}),
    ("zero fill, known", bytes(4096), lambda: Unparsed(0, 4096, [Problem("zero_fill", 0, "z")], zeros=True),
     {"length": 4096}, {"rawZeros": 4096}),
    ("zero fill, looked at", bytes(300), lambda: Unparsed(0, 300, []),
     {"length": 300, "problems": []}, {"rawZeros": 300}),
    ("rocketmq unused space", bytes(40),
     lambda: Unparsed(0, 40, [], note="unused entries to the end of the file: 40 zero bytes", zeros=True),
     {"note": "unused entries to the end of the file: 40 zero bytes"}, {"rawZeros": 40}),
    ("zeros then a byte", bytes(10) + b"\x01", lambda: Unparsed(0, 11, [Problem("garbage", 0, "g")]),
     {"length": 11}, {"rawBytes": B64(bytes(10) + b"\x01")}),
    ("empty range", b"", lambda: Unparsed(0, 0, [Problem("truncated", 0, "t")]), {"length": 0}, {}),
    ("a stream's bytes", b"\x00\x00\x00\x07abc",
     lambda: Unparsed(100, 7, [Problem("garbage", 100, "g")], data=b"\x00\x00\x00\x07abc", protocol="rocketmq",
                      conversation=_Conv(), direction="response", what="frame"),
     {"protocol": "rocketmq", "connection": {"index": 3, "client": "10.0.0.1:40000", "server": "10.0.0.2:9876"},
      "direction": "response", "position": 100}, {"rawBytes": B64(b"\x00\x00\x00\x07abc")}),
    ("a stream's zeros", bytes(9),
     lambda: Unparsed(5, 9, [Problem("unparsed_bytes", 5, "u")], data=bytes(9), protocol="kafka"),
     {"protocol": "kafka", "connection": None, "direction": None}, {"rawZeros": 9}),
    ("a stretch across a TCP gap", b"ab",
     lambda: Unparsed(0, 10, [Problem("tcp_gap", 2, "8 bytes missing")], data=b"ab", protocol="kafka"),
     {"length": 10}, {"rawBytes": B64(b"ab")}),
    ("a gap with nothing kept", b"",
     lambda: Unparsed(0, 8, [Problem("tcp_gap", 0, "gap")], data=b"", protocol="jafka"),
     {"length": 8}, {"rawBytes": ""}),
    ("mid-stream tail", b"xyz",
     lambda: Unparsed(0, 3, [], data=b"xyz", protocol="kafka",
                      notes=[Problem("mid_stream_start", 0, "3 bytes before the first frame")]),
     {"problems": [], "notes": [{"code": "mid_stream_start"}]}, {"rawBytes": B64(b"xyz")}),
]


def _subset(expected, actual) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(_subset, expected, actual))
    return expected == actual


@pytest.mark.parametrize("name,data,make,fields,raw", UNPARSED_CASES, ids=[c[0] for c in UNPARSED_CASES])
def test_unparsed_table(name, data, make, fields, raw):
    u = make()
    d = u.to_json(ENC)
    assert _subset(fields, d), d
    assert d["type"] == "unparsed" and d["records"] == [] and "bytes" not in d
    keys = u.raw_json(_reader(data, u.position), ENC)
    assert keys == raw
    # encode: what raw_json gave, through JSON text, is the bytes again (a TCP gap's missing bytes excepted)
    obj = json.loads(json.dumps({**d, **keys}))
    assert b"".join(encode_unparsed(obj, CTX)) == data
    assert unparsed_bytes(obj, CTX) == data
    node = u.to_tree()
    assert (node.name, node.position, node.length) == ("unparsed", u.position, u.length)


def test_a_stream_stretch_not_kept_has_no_raw_key():
    u = Unparsed(0, STREAM_KEEP_MAX + 1, [Problem("garbage", 0, "g")], dropped=True, protocol="kafka")
    assert u.raw_json(lambda p, n: pytest.fail("a stream's unit never reads the input"), ENC) == {}


def test_zero_fill_is_encoded_in_chunks():
    chunks = encode_unparsed({"type": "unparsed", "rawZeros": (3 << 20) + 5}, CTX)
    assert len(chunks) == 4 and sum(map(len, chunks)) == (3 << 20) + 5 and not any(any(c) for c in chunks)
    assert len({id(c) for c in chunks[:3]}) == 1  # one shared buffer, not 3 MiB allocated


# -- the note table: (name, constructor, expected JSON) ---------------------------------------------
NOTE_CASES = [
    ("tcp gap between frames", lambda: Note(40, 0, [Problem("tcp_gap", 40, "20 bytes missing")], "20 bytes missing",
                                            protocol="rocketmq", conversation=_Conv(), direction="request"),
     {"type": "note", "protocol": "rocketmq", "connection": {"index": 3}, "direction": "request", "position": 40,
      "length": 0, "message": "20 bytes missing", "problems": [{"code": "tcp_gap"}]}),
    ("no handshake", lambda: Note(0, 0, [], notes=[Problem("tcp_no_handshake", 0, "no SYN")], protocol="kafka",
                                  direction="response"),
     {"type": "note", "protocol": "kafka", "connection": None, "problems": [],
      "notes": [{"code": "tcp_no_handshake"}]}),
    ("capture file finding", lambda: Note(1234, 16, [Problem("truncated_record", 1234, "t")], type="capture",
                                          display="capture file"),
     {"type": "capture", "position": 1234, "length": 16, "problems": [{"code": "truncated_record"}]}),
]


@pytest.mark.parametrize("name,make,fields", NOTE_CASES, ids=[c[0] for c in NOTE_CASES])
def test_note_table(name, make, fields):
    n = make()
    d = n.to_json(ENC)
    assert _subset(fields, d), d
    if n.protocol is None:
        assert not {"protocol", "connection", "direction"} & set(d)
    assert n.raw_json is None and n.type in NOTE_TYPES
    node = n.to_tree()
    assert node.type == n.type and node.length == n.length


# -- every format: damaged inputs give rawBytes/rawZeros and come back byte for byte ----------------------
def _rmq_record(body: bytes = b"hello") -> bytes:
    from tests.formats.rocketmq.test_rocketmq_encode import record

    return record(body=body)


def _kafka_log():
    b = [v2_batch(base_offset=i * 2, n=2) for i in range(3)]
    return b[0] + b"\xffgarbage\xff" + b[1] + b[2] + bytes(200)


def _jafka_log():
    from tests.formats.jafka.test_jafka_encode import m0

    m = [m0(b"payload %d" % i) for i in range(3)]
    return m[0] + b"\x7f" * 9 + m[1] + m[2] + bytes(40)


def _rmq_commitlog():
    r = [_rmq_record(b"body %d" % i) for i in range(3)]
    return r[0] + b"\x01" * 13 + r[1] + r[2] + bytes(500)


def _rmq_frames():
    from wireinspect.formats.rocketmq.jsonheader import json_header_bytes

    h = json_header_bytes({"code": 10, "flag": 0, "opaque": 7, "language": "JAVA", "version": 1})
    frame = struct.pack(">iB", 4 + len(h) + 3, 0) + len(h).to_bytes(3, "big") + h + b"abc"
    return frame + b"\xff\xfe\xfd garbage" + frame + b"\x00\x00"


def _kafka_stream():
    req = frame(struct.pack(">hhi", 18, 0, 1) + struct.pack(">h", 3) + b"cid")  # ApiVersions v0
    return req + b"\xff\xfe garbage \x00" + req + req[:9]


DAMAGED = [
    ("kafka-log", "00000000000000000000.log", _kafka_log),
    ("jafka-log", "00000000000000000000.kafka", _jafka_log),
    ("rocketmq-commitlog", "commitlog/00000000000000000000", _rmq_commitlog),
    ("rocketmq-remoting", "frames.bin", _rmq_frames),
    ("kafka-stream", "stream.bin", _kafka_stream),
]


@pytest.mark.parametrize("fid,name,build", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_damaged_inputs_round_trip_with_the_unified_raw_keys(tmp_path, fid, name, build):
    data = build()
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    code, text = dump_json(p, "--format", fid)
    objs = objects(text)
    gaps = [o for o in objs if o["type"] == "unparsed"]
    assert gaps, [o["type"] for o in objs]
    for o in gaps:
        assert "bytes" not in o and ({"rawBytes", "rawZeros"} & set(o) or o["length"] == 0), o
    assert roundtrip(p, tmp_path, "--keep-crc", dump_args=("--format", fid)) == data


def test_removing_an_unparsed_range_repairs_a_kafka_log(tmp_path):
    """An edit: drop the garbage between two batches; the log that comes back decodes clean."""
    from kafka.record.default_records import DefaultRecordBatch

    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(_kafka_log())
    code, text = dump_json(p)
    objs = [o for o in objects(text) if o["type"] != "unparsed"]
    out = tmp_path / "fixed.log"
    code, err = encode_text(lines(objs), out)
    assert code == 0, err
    fixed = out.read_bytes()
    assert dump_json(out)[0] == 0
    pos, offsets = 0, []
    while pos < len(fixed):  # kafka-python reads every batch back
        size = struct.unpack_from(">i", fixed, pos + 8)[0] + 12
        b = DefaultRecordBatch(fixed[pos:pos + size])
        assert b.validate_crc()
        offsets += [r.offset for r in b]
        pos += size
    assert offsets == list(range(6))


def test_capture_mid_connection_keeps_the_stream_bytes(tmp_path):
    """The bytes before the first frame of a stream captured mid-connection (Kafka 0.7/Jafka, through
    the shared StreamDecoder): one ``unparsed`` unit with a ``mid_stream_start`` note and no problem,
    whose ``rawBytes`` give the stream back (they used to be dropped: encode wrote zeros)."""
    from tests.formats.jafka.test_jafka_encode import m0, request
    from wireinspect.inputs.capture import reassembled
    from wireinspect.inputs.source import FileSource

    reqs = b"".join(request(0, topic="orders", partition=0, messages=[{"bytes": B64(m0(b"payload-%d" % i))}])
                    for i in range(3))
    pk = conversation_packets("10.0.0.1:40000", "10.0.0.2:6667", [("request", reqs)] * 3, mss=13)
    p = tmp_path / "mid.pcap"
    with open(p, "wb") as f:
        write_pcap(f, pk[5:])
    code, text = dump_json(p)
    objs = objects(text)
    tails = [o for o in objs if o["type"] == "unparsed"]
    assert tails and all(o["problems"] == [] and o["notes"][0]["code"] == "mid_stream_start" for o in tails), tails
    assert all("rawBytes" in o for o in tails)
    notes = [o for o in objs if o["type"] == "note"]
    assert notes and all(o["notes"][0]["code"] == "tcp_no_handshake" for o in notes)
    out = tmp_path / "streams"
    code, err = encode_text(text, str(out) + "/")
    assert code == 0, err
    want = reassembled(FileSource(str(p)), STREAM_PROTOCOLS)
    got = {f.name: f.read_bytes() for f in out.iterdir()}
    assert got == {f"mid.pcap.{i}-{d}": b for (i, d), b in want.items()}


# -- real files: every unparsed range of every sample and external file comes back ------------------------
def _real_files():
    out = []
    for top in (SAMPLES, EXTERNAL):
        if top.is_dir():
            out += [p for p in sorted(top.rglob("*")) if p.is_file() and p.suffix not in (".py", ".json", ".md")]
    return out


def _real_id(p) -> str:
    """``samples/...`` or ``external/...`` (wherever WIREINSPECT_EXTERNAL puts it)."""
    return str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else "external" / p.relative_to(EXTERNAL))


@pytest.mark.parametrize("path", _real_files(), ids=_real_id)
def test_real_files_round_trip(tmp_path, path):
    from wireinspect.catalog import choose_format
    from wireinspect.inputs.capture import reassembled
    from wireinspect.inputs.source import FileSource

    data = path.read_bytes()
    fmt = choose_format(data[:4096], str(path))
    if fmt is None or fmt.encode is None or fmt.dir_sniff is not None:
        pytest.skip(f"{path.name}: no encoder")
    out = encode_in_process(fmt.id, data, str(path))
    if fmt.id == "pcap":
        want = {f"{i}-{d}": b for (i, d), b in reassembled(FileSource(str(path)), STREAM_PROTOCOLS).items()}
        assert {k: v for k, v in out.items() if v} == {k: v for k, v in want.items() if v}
    else:
        assert out.get(None, b"") == data


# -- encode errors: exit 2, the key named, nothing written --------------------------------------------------
ERRORS = [
    ("rawZeros negative", {"format": "kafka-log", "type": "unparsed", "rawZeros": -1},
     ".rawZeros: -1 is not a length"),
    ("rawZeros absurd", {"format": "rocketmq-commitlog", "type": "unparsed", "rawZeros": 1 << 40},
     f".rawZeros: {1 << 40} is not a length of zero fill (0..{MAX_ZEROS} bytes)"),
    ("rawZeros not an int", {"format": "jafka-log", "type": "unparsed", "rawZeros": "12"}, ".rawZeros: '12' is not"),
    ("rawZeros over a stream's", {"format": "pcap", "protocol": "rocketmq", "type": "unparsed", "direction": "request",
                                  "connection": {"index": 0}, "rawZeros": STREAM_KEEP_MAX + 1},
     f".rawZeros: {STREAM_KEEP_MAX + 1} is not a length"),
    ("rawBytes not base64", {"format": "rocketmq-index", "type": "unparsed", "rawBytes": "@@@"},
     ".rawBytes: not base64"),
    ("rawBytes wrong type", {"format": "rocketmq-consumequeue", "type": "unparsed", "rawBytes": 12},
     ".rawBytes: expected bytes as a base64 string, got int"),
    ("length missing", {"format": "jafka-requests", "type": "unparsed"}, ".length: expected a byte count, got None"),
    ("length negative", {"format": "kafka-log", "type": "unparsed", "length": -4, "problems": []},
     ".length: expected a byte count, got -4"),
    ("zeros too many", {"format": "rocketmq-commitlog", "type": "unparsed", "length": 1 << 40, "problems": []},
     f".length: {1 << 40} zero bytes is more than"),
    ("garbage without its bytes", {"format": "kafka-stream", "type": "unparsed", "length": 5,
                                   "problems": [{"code": "garbage"}]}, ".rawBytes: missing"),
    ("not an object", {"format": "rocketmq-remoting", "type": "unparsed", "rawBytes": "AA=="}, None),
]


@pytest.mark.parametrize("name,obj,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_encode_errors(tmp_path, name, obj, message):
    if message is None:  # the good case of the table: a valid object encodes
        code, err = encode_text(lines([obj]), tmp_path / "ok.bin")
        assert code == 0 and (tmp_path / "ok.bin").read_bytes() == b"\x00", err
        return
    good = {"format": obj["format"], "type": "unparsed", "rawBytes": "AA=="}
    out = tmp_path / "out.bin"
    code, err = encode_text(lines([good, obj]), out)
    assert code == 2 and f"line 2: {message}" in err, err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_notes_stand_for_no_bytes(tmp_path):
    objs = [{"format": f, "type": t, "position": 0, "length": 0, "problems": []}
            for f in ("rocketmq-commitlog", "rocketmq-consumequeue", "rocketmq-index", "jafka-requests", "pcap",
                      "kafka-stream", "rocketmq-remoting") for t in sorted(NOTE_TYPES)]
    objs.append({"format": "kafka-log", "type": "unparsed", "rawBytes": B64(b"only this")})
    out = tmp_path / "out.bin"
    code, err = encode_text(lines(objs), out, "--force")
    assert code == 0, err
    assert out.read_bytes() == b"only this"


# -- hypothesis: decode(encode(x)) == x ---------------------------------------------------------------------
def test_unparsed_decodes_what_it_encodes():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies

    @hyp.given(st.one_of(st.binary(max_size=200), st.integers(0, 5000).map(bytes)),
               st.sampled_from(["base64", "hex"]), st.booleans())
    @hyp.settings(max_examples=150, deadline=None)
    def prop(data, mode, stream):
        enc = bytes_encoder(mode)
        u = Unparsed(0, len(data), [Problem("garbage", 0, "g")], data=data if stream else None,
                     protocol="kafka" if stream else None)
        obj = json.loads(json.dumps({**u.to_json(enc), **u.raw_json(_reader(data), enc)}))
        assert b"".join(encode_unparsed(obj, EncodeContext(bytes_mode=mode))) == data
        again = Unparsed(0, len(data), [])
        if data:  # an empty range: {} or rawBytes "" (a stream's), both nothing
            assert again.raw_json(_reader(data), enc) == u.raw_json(_reader(data), enc)

    prop()


# -- one copy: no other module declares an unparsed or note unit, or a second raw key for them ---------------
def test_one_unparsed_unit_and_one_note_unit():
    pkg = ROOT / "wireinspect"
    found = []
    for path in pkg.rglob("*.py"):
        if path.name == "common.py" and path.parent.name == "formats":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for st in node.body:
                    if isinstance(st, ast.Assign) and any(getattr(t, "id", None) == "type" for t in st.targets) \
                            and isinstance(st.value, ast.Constant) and st.value.value in ("unparsed", "note", "stream"):
                        found.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert found == []
