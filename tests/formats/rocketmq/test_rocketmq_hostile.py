"""RocketMQ and Kafka 0.7 / Jafka against hostile input: JSON header spans from the tokenizer,
fastjson edge cases (depth, huge integers, lone surrogates, linear time), non-ASCII digits in
properties and file names, index files claiming more than they hold, claimed counts in Jafka
requests and responses."""

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.paths import SAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.formats.rocketmq.test_rocketmq_frames import RMQ, capture_frames
from wireinspect.cli import cli
from tests.formats.jafka.test_jafka_encode import fetch_part, offsets_part, request
from wireinspect.formats.jafka import stream as jafka_stream
from wireinspect.formats.jafka.requests import MAX_OFFSETS, parse_request, parse_response
from tests.formats.rocketmq.test_rocketmq_encode import record
from wireinspect.formats.rocketmq.commitlog import masked_crc, parse_record
from wireinspect.formats.rocketmq.fastjson import MAX_DEPTH, loads
from wireinspect.formats.rocketmq.format import file_base
from wireinspect.formats.rocketmq.remoting import parse_frame
from wireinspect.formats.rocketmq.store import CommitLogStore, cq_identity, iter_consumequeue, iter_index
from wireinspect.inputs.source import BytesSource, FileSource
from wireinspect.formats.options import Options
from wireinspect.streams import Conversation, Event

SUPERSCRIPT = "\u00b2"  # str.isdigit() says yes, int() says no


def _raw_json_frame(header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">ii", 4 + len(header) + len(body), len(header)) + header + body


def _spans(f):
    """{name: (start, end)} of a frame's header spans, offsets in the frame's bytes."""
    return {name: (off, off + size) for name, off, size, _ in f.spans}


# -- JSON header spans ------------------------------------------------------------------------------

def test_json_header_spans_come_from_the_tokenizer():
    # extFields holds a "flag" (and a "code") of its own, and a value with "}" and an escaped quote in it.
    header = (b'{"code":10,"extFields":{"flag":"7","code":"x","k":"a}\\"b"},"flag":0,"language":"JAVA",'
              b'"opaque":3,"version":373}')
    f = parse_frame(_raw_json_frame(header))
    assert f.problems == [] and f.flag == 0 and f.ext == {"flag": "7", "code": "x", "k": 'a}"b'}
    sp = _spans(f)
    text = lambda name: f.data[sp[name][0]:sp[name][1]]  # noqa: E731
    assert text("extFields") == b'"extFields":{"flag":"7","code":"x","k":"a}\\"b"}'  # ends at its own brace
    assert text("flag") == b'"flag":0'  # the top-level flag, not the one inside extFields
    assert text("code") == b'"code":10'
    assert text("extFields.flag") == b'"flag":"7"' and text("extFields.k") == b'"k":"a}\\"b"'
    assert sp["extFields"][1] < sp["flag"][0]
    tree = f.to_tree().child("header")
    assert tree.child("flag").position == f.base + sp["flag"][0]
    assert [c.name for c in tree.child("extFields").children] == ["flag", "code", "k"]


def test_json_header_spans_with_spaces_and_unquoted_keys():
    header = b'{ "code" : 105 , "extFields" : { 0 : "a" , "topic" : "T" } , "flag" : 0 , "opaque" : 1 }'
    f = parse_frame(_raw_json_frame(header))
    assert f.problems == [] and f.unquoted_keys == 1
    sp = _spans(f)
    assert f.data[sp["extFields.0"][0]:sp["extFields.0"][1]] == b'0 : "a"'
    assert f.data[sp["opaque"][0]:sp["opaque"][1]] == b'"opaque" : 1'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans(), st.booleans())
def test_fastjson_equals_json_loads_on_standard_json(value, ascii_only, indent):
    text = json.dumps(value, ensure_ascii=ascii_only, indent=2 if indent else None)
    r = loads(text.encode("utf-8", "surrogatepass"), span_depth=2)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # hypothesis text() may hold lone surrogates
        return
    assert r.error is None and r.notes == []
    assert r.value == json.loads(text)
    for path, start, end, v in r.members:  # each member's span reads back as that member
        piece = text.encode()[start:end].decode()
        if isinstance(path[-1], str):
            key, end_key = json.JSONDecoder().raw_decode(piece)
            rest = piece[end_key:].lstrip()
            assert key == path[-1] and rest[0] == ":" and json.loads(rest[1:]) == v
        else:
            assert json.loads(piece) == v


def test_fastjson_unterminated_escaped_quotes_is_linear():
    # was quadratic: 56 KB took 21 s; a megabyte now is one regex pass
    data = b'{"remark":"' + b'\\"' * 500_000
    r = loads(data)
    assert r.value is None and r.error == "unterminated string" and r.error_at == 10


def test_fastjson_nesting_is_capped_without_recursion():
    for data, at in ((b"[" * 100_000, MAX_DEPTH), (b'{"a":' * 100_000, 5 * MAX_DEPTH),
                     (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), MAX_DEPTH)):
        r = loads(data)
        assert (r.value, r.error, r.error_at) == (None, f"nested deeper than {MAX_DEPTH} levels", at)
    ok = loads(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert ok.error is None
    f = parse_frame(_raw_json_frame(b"[" * 100_000))
    assert [p.code for p in f.problems] == ["bad_json_header"] and f.problems[0].position == 8 + MAX_DEPTH


def test_fastjson_huge_integer_and_lone_surrogate_become_problems():
    digits = "9" * 5000
    r = loads(('{"opaque":%s,"n":-%s}' % (digits, digits)).encode())
    assert r.error is None and r.value == {"opaque": digits, "n": "-" + digits}
    assert [n[0] for n in r.notes] == ["json_number_as_text"] * 2 and r.notes[0][1] == 10
    header = ('{"code":10,"flag":0,"opaque":%s,"remark":"a\\ud800b\\ud83d\\ude00"}' % digits).encode()
    f = parse_frame(_raw_json_frame(header))
    codes = [(p.code, p.position) for p in f.problems]
    assert ("json_number_as_text", 8 + header.index(b"9")) in codes
    assert ("json_lone_surrogate", 8 + header.index(b'"a\\ud800')) in codes
    assert ("bad_header_field", 8) in codes  # opaque is not an integer Python can hold
    assert f.header["remark"] == "a\ufffdb\U0001F600"
    json.dumps(f.to_json(lambda b: b and b.hex()))  # printable
    assert loads(b'"\\udc00\\ud800"').value == "\ufffd\ufffd"
    assert loads(b'"\\ud83d\\ude00"').value == "\U0001F600" and loads(b'"\\ud83d\\ude00"').notes == []


def test_fastjson_bad_input_never_raises():
    for data in (b"", b" ", b"{", b'{"a"', b'{"a":', b'{"a":1,', b"[1,]", b'"\\x"', b'"\\u12"', b"\xff",
                 b'"\xff"', b"-", b"01", b"1.", b"tru", b"{1:2,}", b"[1] 2", b'{"a":1}}'):
        r = loads(data)
        assert r.value is None and r.error and 0 <= r.error_at <= len(data)


@pytest.mark.external
def test_real_captures_spans_inside_header_and_not_overlapping():
    # without ../shared/external: the bundled sample of the rocketmq wheel's client (samples/rocketmq)
    paths = ([RMQ / "producer.pcap", RMQ / "consumer.pcap"] if RMQ.is_dir()
             else [SAMPLES / "rocketmq" / "producer.pcap"])
    checked = 0
    for name in paths:
        for f in capture_frames(name):
            if f.type != "frame" or f.serialize_type != 0 or not f.header:
                continue
            hs, he = 8, 8 + f.header_length
            top = sorted((off, off + size, n) for n, off, size, _ in f.spans if not n.startswith("extFields."))
            inner = sorted((off, off + size, n) for n, off, size, _ in f.spans if n.startswith("extFields."))
            for group, lo, hi in ((top, hs, he), (inner, *next(((a, b) for a, b, n in top if n == "extFields"),
                                                               (hs, he)))):
                for (a, b, n), nxt in zip(group, group[1:] + [None]):
                    assert lo <= a < b <= hi, (name, f.position, n)
                    assert nxt is None or b <= nxt[0], (name, f.position, n, nxt[2])
            flag = next(off for n, off, _, _ in f.spans if n == "flag")
            assert f.data[flag:flag + 7] == b'"flag":'
            checked += 1
    assert checked > (100 if RMQ.is_dir() else 10)


# -- non-ASCII digits ---------------------------------------------------------------------------------

def test_crc32_property_with_superscript_digits():
    for val in (SUPERSCRIPT * 10, "123456789" + SUPERSCRIPT, "\u0663" * 10):  # ² and Arabic-Indic 3
        rec = record(body=b"hello", properties=[("__CRC32#", val)], keep_crc=True)
        r = parse_record(rec)
        assert r.prop_crc_ok is False and "bad_record_crc" in [p.code for p in r.problems]


def test_crc32_property_ascii_digits_still_checked():
    props = [("KEYS", "k"), ("__CRC32#", "0" * 10)]
    rec = record(body=b"hello", properties=props, keep_crc=True)
    crc = masked_crc(rec[:len(rec) - 20])
    good = record(body=b"hello", properties=[("KEYS", "k"), ("__CRC32#", f"{crc:010d}"[::-1])], keep_crc=True)
    assert parse_record(good).prop_crc_ok is True


def test_property_nodes_take_their_spans_from_the_bytes():
    # an invalid UTF-8 byte (decoded as U+FFFD, 3 bytes in UTF-8) and a segment without \x01 before
    # the last property: the nodes used to be measured on the decoded text and ran past the field
    rec = record(body=b"b", properties=[("K", "v\x7fw"), ("junk\x03TAGS", "t")], keep_crc=True)
    rec = rec.replace(b"v\x7fw", b"v\xffw").replace(b"junk\x03", b"junk\x02")
    r = parse_record(rec)
    assert r.properties == [["K", "v\ufffdw"], ["TAGS", "t"]]
    assert [p.code for p in r.problems] == ["malformed_property"]
    props = r.to_tree().child("properties")
    nodes = [(c.name, c.position, c.length) for c in props.children]
    start = rec.index(b"K\x01")
    assert nodes == [("K", start, 5), ("TAGS", rec.index(b"TAGS"), 6)]  # K\x01v\xffw, TAGS\x01t
    assert all(props.position <= p and p + n <= props.position + props.length for _, p, n in nodes)
    assert next(p for p in r.problems if p.code == "malformed_property").position == rec.index(b"junk")


def test_store_file_names_with_unicode_digits(tmp_path):
    store = tmp_path / "store"
    cl = store / "commitlog"
    cl.mkdir(parents=True)
    rec = record(body=b"m", topic="T", physical_offset=0)
    (cl / ("0" * 20)).write_bytes(rec)
    (cl / ("0" * 19 + SUPERSCRIPT)).write_bytes(rec)
    (cl / ("0" * 19 + "\u0661")).write_bytes(rec)  # Arabic-Indic one: int() would take it
    s = CommitLogStore(str(cl))
    assert [b for b, _ in s.files] == [0]
    s.close()
    assert file_base("0" * 19 + SUPERSCRIPT) is None and file_base("0" * 19 + "\u0661") is None
    assert cq_identity(f"/x/consumequeue/T/{SUPERSCRIPT}/{'0' * 20}") == (None, None, 0)
    assert cq_identity(f"/x/consumequeue/T/1/{'0' * 19}{SUPERSCRIPT}") == (None, None, None)
    q = store / "consumequeue" / "T" / SUPERSCRIPT
    q.mkdir(parents=True)
    unit = struct.pack(">qiq", 0, len(rec), 0)
    (q / ("0" * 20)).write_bytes(unit)
    (q / ("0" * 19 + SUPERSCRIPT)).write_bytes(unit)
    for path in sorted(q.iterdir()):
        src = FileSource(str(path))
        units = list(iter_consumequeue(src))
        src.close()
        assert units and all(u.problems == [] or u.type != "cq_unit" for u in units)
    r = CliRunner().invoke(cli, ["verify", str(store)])
    assert r.exit_code in (0, 1) and "Traceback" not in r.output, r.output


# -- index files claiming more than they hold ------------------------------------------------------

def _index_units(data: bytes, name="20240101000000000"):
    src = BytesSource(data, name, name)
    return list(iter_index(src))


def test_index_of_40_bytes_claims_nothing_past_the_end():
    header = struct.pack(">qqqqii", 1, 2, 3, 4, 5, 6)
    units = _index_units(header)
    assert all(u.position + u.length <= 40 for u in units)
    slots = next(u for u in units if u.type == "index_slots")
    assert slots.length == 0 and "truncated" in [p.code for p in slots.problems]
    assert units[-1].type == "unparsed" and units[-1].length == 0 and units[-1].problems[0].code == "truncated"
    for u in units:  # the tree, too
        stack = [u.to_tree()]
        while stack:
            n = stack.pop()
            assert n.position + n.length <= 40, n.name
            stack.extend(n.children)


def test_index_hostile_counts_bounded(tmp_path):
    header = struct.pack(">qqqqii", 0, 0, 0, 0, 0x7FFFFFFF, 0x7FFFFFFF)
    data = header + struct.pack(">i", 0x7FFFFFFF) * 100
    units = _index_units(data)
    assert len(units) <= 4 and all(u.position + u.length <= len(data) for u in units)
    d = tmp_path / "index"
    d.mkdir()
    (d / "20240101000000000").write_bytes(header)
    r = CliRunner().invoke(cli, ["dump", "--hexdump", str(d / "20240101000000000")])
    assert r.exit_code == 1 and len(r.output.splitlines()) < 60, r.output[-2000:]


# -- Jafka claimed counts -------------------------------------------------------------------------

def test_multifetch_request_count_does_not_drive_the_loop():
    one = request(2, fetch_part("t", 0, 0, 100))
    forged = one[:6] + struct.pack(">h", 32767) + one[8:]
    e = parse_request(forged)
    assert len(e.parts) == 1 and [p.code for p in e.problems] == ["truncated"]
    assert e.problems[0].expected == 32767 and e.problems[0].actual == 1


def test_multifetch_response_parts_bounded_by_the_request():
    req = parse_request(request(2, fetch_part("t", 0, 0, 100)))
    parts = struct.pack(">ih", 2, 0) * 10_000
    resp = struct.pack(">ih", 2 + len(parts), 0) + parts
    e = parse_response(resp, request=req)
    assert len(e.parts) == 1 and "bad_count" in [p.code for p in e.problems]


def test_offsets_response_count_capped():
    req = parse_request(request(4, **offsets_part("t", 0, -1, 10)))
    n = MAX_OFFSETS + 5
    payload = struct.pack(">i", n) + struct.pack(">q", 7) * n
    e = parse_response(struct.pack(">ih", 2 + len(payload), 0) + payload, request=req)
    codes = [p.code for p in e.problems]
    assert codes == ["bad_count", "count_limit"]
    offs = e.to_json(lambda b: b)["offsets"]
    assert len(offs) == MAX_OFFSETS and offs[0] == 7
    small = struct.pack(">i", 2) + struct.pack(">qq", 9, 0)
    ok = parse_response(struct.pack(">ih", 2 + len(small), 0) + small, request=req)
    assert ok.problems == [] and ok.to_json(lambda b: b)["offsets"] == [9, 0]


def test_waiting_requests_capped_pairing_stays_in_order(monkeypatch):
    monkeypatch.setattr(jafka_stream, "MAX_WAITING", 3)
    conv = Conversation(0, source="x")
    dec = jafka_stream._Decoder(conv, Options())
    reqs = b"".join(request(1, **fetch_part("t", 0, 100 * i, 10)) for i in range(5))
    resp = struct.pack(">ih", 2, 0)
    units = list(dec.feed(Event("request", "data", 0, reqs, len(reqs))))
    units += list(dec.feed(Event("response", "data", 0, resp * 5, len(resp) * 5)))
    units += list(dec.close())
    assert len(dec.waiting) == 0
    responses = [u for u in units if u.type == "response"]
    assert len(responses) == 5
    # the two oldest requests were let go: their responses are read without them; the rest pair in order
    assert [r.request_position for r in responses] == [None, None] + [u.position for u in units
                                                                       if u.type == "request"][2:]
