"""``view``'s page (render/html.py, ops/view.py): the projection of the field tree, escaping,
bounds, and the command on every format family."""

from __future__ import annotations

import base64
import json
import os

import pytest

from tests.conftest import SAMPLES
from tests.formats.test_properties import SEEDS
from tests.kafka_bytes import v2_batch
from tests.view_helpers import HOSTILE, hostile_segment, page_data, view
from wireinspect.catalog import choose_format  # noqa: F401 - the catalog loads every format
from wireinspect.model import Node, Problem
from wireinspect.render.html import project, script_json

DAMAGED = SAMPLES / "damaged" / "00000000000000000000.log"
FAMILIES = [
    ("kafka segment", SAMPLES / "v2-gzip" / "00000000000000000000.log", 0),
    ("legacy wrappers", SAMPLES / "v1-snappy.log", 0),
    ("damaged segment", DAMAGED, 1),
    ("sidecar", SAMPLES / "partition" / "orders-0" / "00000000000000000000.index", 0),
    ("partition directory", SAMPLES / "partition" / "orders-0", 0),
    ("capture", SAMPLES / "capture" / "librdkafka.pcap", 1),
    ("jafka", SAMPLES / "jafka", 0),
    ("rocketmq capture", SAMPLES / "rocketmq" / "producer.pcap", 0),
]


# -- the projection -------------------------------------------------------------------------------

def test_script_json_cannot_end_its_element():
    hostile = ['</script><script>alert(1)</script>', "<!-- -->", '"\'&<>', "\x00\x07\x1b[31m",
               "\u2028\u2029", "\udcff"]
    text = script_json({"v": hostile, "<k>": 1})
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert text.isascii()
    assert json.loads(text) == {"v": hostile, "<k>": 1}


def test_project_flattens_in_preorder_with_spaces():
    root = Node("batch", 100, 20)
    root.add("crc", 100, 4, 7, display="0x7 (valid)")
    recs = root.add("records", 104, 16, kind="list")
    recs.decompressed("gzip", 16, 5, data=b"hello")
    inner = recs.add("records[0]", 0, 5)
    inner.add("value", 1, 4, b"ello")
    inner.add("offset", 0, 1, 3, derived=True)
    inner.problems.append(Problem("bad_thing", 2, "<b>bad</b>"))
    d = project(root, bytes(range(20)), 100)
    names = [r["n"] for r in d["nodes"]]
    assert names == ["batch", "crc", "records", "records[0]", "value", "offset"]
    assert [r["u"] for r in d["nodes"]] == [-1, 0, 0, 2, 3, 3]
    assert [r["s"] for r in d["nodes"]] == [0, 0, 0, 1, 1, 1]
    assert d["nodes"][2]["o"] == 1 and d["nodes"][5]["x"] == 1
    assert d["nodes"][1]["d"] == "0x7 (valid)" and d["nodes"][4]["v"] == '"ello"'
    assert d["nodes"][3]["pr"] == [["bad_thing", 2, "<b>bad</b>"]]
    assert base64.b64decode(d["spaces"][0]["b"]) == bytes(range(20)) and d["spaces"][0]["start"] == 100
    assert d["spaces"][1] == {"node": 2, "parent": 0, "start": 0, "length": 5,
                              "b": base64.b64encode(b"hello").decode(), "name": "gzip: 16 bytes -> 5 bytes"}


@pytest.mark.parametrize("name,path,status", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_every_node_lies_inside_its_units_bytes(tmp_path, name, path, status):
    """Every field of every unit shown spans bytes the page holds: the unit's (from its position),
    or its decompressed container's; a decompressed container's compressed bytes lie in its parent."""
    r = view(path, "-o", tmp_path / "v.html")
    assert r.exit_code == status, r.output
    d = page_data((tmp_path / "v.html").read_text())
    assert d["units"]
    for u in d["units"]:
        spaces = u["spaces"]
        if spaces[0]["b"] is None:  # a directory's report: its fields are in its files, not in bytes of its own
            assert name == "partition directory" and u["why"]
            continue
        for k, r in enumerate(u["nodes"]):
            sp = spaces[r["s"]]
            lo, hi = sp["start"], sp["start"] + (sp["length"] if r["s"] else u["l"])
            assert lo <= r["p"] and r["p"] + r["l"] <= hi, (name, u["label"], r)
            if r["u"] >= 0:
                assert u["nodes"][r["u"]]["s"] == r["s"] or u["nodes"][r["u"]].get("o") == r["s"]
        if spaces[0]["b"] is not None:
            assert len(base64.b64decode(spaces[0]["b"])) == min(u["l"], 64 << 10) or u["t"] == "unparsed"
        for sp in spaces[1:]:
            if sp["b"] is not None:
                assert len(base64.b64decode(sp["b"])) == min(sp["length"], 64 << 10)


# -- escaping -------------------------------------------------------------------------------------

def test_markup_in_data_stays_data(tmp_path):
    seg = tmp_path / "in" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(hostile_segment())
    out = tmp_path / "out" / "page.html"
    out.parent.mkdir()
    r = view(seg, "-o", out)
    assert r.exit_code == 1, r.output  # the broken CRC
    text = out.read_text(encoding="utf-8")
    assert text.count("<script") == 2 and text.count("</script>") == 2  # the data element and the page's script
    assert "<img" not in text and "\x1b" not in text and "\x00" not in text and "\u2028" not in text
    d = page_data(text)
    texts = [v for u in d["units"] for n in u["nodes"] for v in (n.get("v"), n.get("d"), n["n"]) if v]
    assert any("<script>window.pwned=1</script>" in t for t in texts)
    assert any(HOSTILE in t for t in texts)
    assert any("<img src=x onerror=window.pwned=1>" in t for t in texts)
    assert not any("\x1b" in t or "\x00" in t or "\x07" in t for t in texts)  # control characters escaped
    evil = tmp_path / "in" / '<img src=x onerror="window.pwned=1">.log'
    evil.write_bytes(hostile_segment())
    r = view(f"{evil}:kafka-log", "-o", out, "--force")
    assert r.exit_code == 1, r.output
    text = out.read_text(encoding="utf-8")
    assert "<img" not in text and text.count("<script") == 2
    assert page_data(text)["inputs"][0]["name"].endswith('<img src=x onerror="window.pwned=1">.log')
    csp = text[text.index("Content-Security-Policy"):].split(">", 1)[0]
    assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]


# -- the command ----------------------------------------------------------------------------------

def test_opens_on_problems_and_says_what_is_shown(tmp_path):
    r = view(DAMAGED, "-o", tmp_path / "d.html")
    assert r.exit_code == 1
    d = page_data((tmp_path / "d.html").read_text())
    codes = [p[1] for u in d["units"] for p in u["pr"]]
    assert codes == ["crc_mismatch", "bad_length", "zero_fill"]
    strip = d["inputs"][0]["strip"]
    assert strip["kind"] == "bytes" and strip["size"] == os.path.getsize(DAMAGED)
    assert strip["cut"] == 888  # where Kafka's recovery stops (recover --dry-run says the same)
    states = [b[2] for b in strip["bands"]]
    assert states == ["valid", "problem", "salvage", "gap", "salvage", "zero"]
    assert strip["bands"][0][0] == 0 and strip["bands"][-1][1] == strip["size"]
    assert strip["offsets"] == [0, 31]
    assert [b[3:] for b in strip["bands"]] == [[0, 7], [8, 11], [12, 23], [None, None], [24, 31], [None, None]]


def test_selection_and_max_units_bound_the_page(tmp_path):
    seg = tmp_path / "in" / "00000000000000000000.log"
    seg.parent.mkdir()
    data = b"".join(v2_batch(base_offset=10 * i, n=10, value_size=200) for i in range(300))
    seg.write_bytes(data)
    out = tmp_path / "p.html"
    r = view(seg, "--max-units", "5", "-o", out)
    assert r.exit_code == 0, r.output
    d = page_data(out.read_text())
    assert len(d["units"]) == 5
    assert any("--max-units 5" in t for t in d["inputs"][0]["leftOut"])
    embedded = sum(len(base64.b64decode(sp["b"])) for u in d["units"] for sp in u["spaces"] if sp["b"])
    assert embedded == sum(u["l"] for u in d["units"]) < len(data) // 50
    assert d["inputs"][0]["strip"]["units"] == 300  # the strip still covers the whole input
    assert out.stat().st_size < len(data) // 4
    r = view(seg, "--offsets", "100..119", "-o", out, "--force")
    assert r.exit_code == 0, r.output
    d = page_data(out.read_text())
    assert [(u["bo"], u["lo"]) for u in d["units"]] == [(100, 109), (110, 119)]
    assert d["given"] == ["--offsets 100..119"]


def test_problems_only(tmp_path):
    r = view(DAMAGED, "--problems", "-o", tmp_path / "p.html")
    assert r.exit_code == 1
    d = page_data((tmp_path / "p.html").read_text())
    assert [u["st"] for u in d["units"]] == ["problem", "gap", "zero"]


def test_capture_strip_is_a_timeline_of_connections(tmp_path):
    r = view(SAMPLES / "capture" / "librdkafka.pcap", "-o", tmp_path / "c.html")
    assert r.exit_code == 1
    d = page_data((tmp_path / "c.html").read_text())
    assert d["inputs"][0]["strip"] == {"kind": "timeline"}
    frames = [u for u in d["units"] if u["t"] == "frame"]
    assert frames and all("ts" in u and "lane" in u for u in frames)
    responses = [u for u in frames if u.get("dir") == "response"]
    assert responses and all("lat" in u for u in responses)
    assert all(u["spaces"][0]["b"] for u in frames)  # a frame's bytes are its stream's


def test_stdin_naming_its_format_is_beside_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from wireinspect.cli import cli

    monkeypatch.chdir(tmp_path)
    seg = (SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes()
    r = CliRunner().invoke(cli, ["view", "-o", "page.html", "--", "-:kafka-log"], input=seg)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")


def test_stdout_and_refusals(tmp_path):
    r = view(SAMPLES / "v2-none" / "00000000000000000000.log", "-o", "-")
    assert r.exit_code == 0 and r.stdout.startswith("<!DOCTYPE html>")
    beside = SAMPLES / "v2-none" / "view.html"
    r = view(SAMPLES / "v2-none" / "00000000000000000000.log", "-o", beside)
    assert r.exit_code == 2 and "never writes beside" in r.stderr and not beside.exists()
    r = view(SAMPLES / "v2-none", "-o", SAMPLES / "v2-none" / "sub" / "x.html")
    assert r.exit_code == 2 and not (SAMPLES / "v2-none" / "sub").exists()
    r = view(f"{SAMPLES / 'v2-none'}:kafka-log", "-o", beside)  # a directory input that names its format
    assert r.exit_code == 2 and "never writes beside" in r.stderr and not beside.exists()
    out = tmp_path / "x.html"
    out.write_text("keep")
    r = view(DAMAGED, "-o", out)
    assert r.exit_code == 2 and "--force" in r.stderr and out.read_text() == "keep"
    r = view(DAMAGED, "-o", tmp_path)
    assert r.exit_code == 2
    r = view(DAMAGED, "--offset", "1", "--offsets", "1..2", "-o", tmp_path / "y.html")
    assert r.exit_code == 2 and not (tmp_path / "y.html").exists()
    r = view(DAMAGED, "--force", "-o", "-")
    assert r.exit_code == 2 and r.stdout == ""
    r = view(DAMAGED, "--port", "9092", "-o", tmp_path / "y.html")
    assert r.exit_code == 2 and "--port cannot apply" in r.stderr and not (tmp_path / "y.html").exists()
    r = view(tmp_path / "missing.log", "-o", tmp_path / "y.html")
    assert r.exit_code == 2 and "Traceback" not in r.output and not (tmp_path / "y.html").exists()
    r = view(tmp_path / "gone" / "missing.log", DAMAGED, "-o", tmp_path / "y.html")  # what can be read is shown
    assert r.exit_code == 2 and len(page_data((tmp_path / "y.html").read_text())["inputs"]) == 1
    garbage = tmp_path / "g" / "x.bin"
    garbage.parent.mkdir()
    garbage.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)))
    r = view(garbage, "-o", tmp_path / "z.html")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".wireinspect-")] == []


def test_a_streams_unparsed_bytes_are_shown(tmp_path):
    """Bytes of a capture's stream that hold no frame are shown as the stream kept them."""
    import struct

    from tests.capture_helpers import frame, pcap_bytes

    req = frame(struct.pack(">hhih", 18, 0, 1, 4) + b"test")
    junk = b"<script>GARBAGE\xff\xff\xff\xff"
    cap = tmp_path / "in" / "g.pcap"
    cap.parent.mkdir()
    cap.write_bytes(pcap_bytes([("10.0.0.1:40000", "10.0.0.2:9092", [("request", req), ("request", junk + req)])]))
    r = view(cap, "-o", tmp_path / "g.html")
    assert r.exit_code == 1, r.output
    d = page_data((tmp_path / "g.html").read_text())
    unparsed = [u for u in d["units"] if u["t"] == "unparsed"]
    assert unparsed and base64.b64decode(unparsed[0]["spaces"][0]["b"]).startswith(junk)
    assert unparsed[0]["p"] == len(req)


def test_rocketmq_store_file(tmp_path):
    from tests.formats.rocketmq.test_rocketmq_store import log, placed

    f = tmp_path / "store" / "commitlog" / "00000000000000000000"
    f.parent.mkdir(parents=True)
    f.write_bytes(log(placed(3, body=b"<b>body</b>"), size=4096))
    r = view(f, "-o", tmp_path / "r.html")
    assert r.exit_code == 0, r.output
    d = page_data((tmp_path / "r.html").read_text())
    assert [u["t"] for u in d["units"]][:3] == ["record"] * 3
    assert d["inputs"][0]["format"] == "rocketmq-commitlog"
    assert d["inputs"][0]["strip"]["bands"][-1][2] == "zero"


def test_strip_bins_to_scale_keeping_the_worst_state():
    from wireinspect.formats.unit import UnitBase
    from wireinspect.ops.view import STRIP_BANDS, Strip

    class U(UnitBase):
        type = "batch"

        def __init__(self, i, bad):
            self.position, self.length, self.base_offset, self.last_offset = i * 10, 10, i, i
            self.problems = [Problem("crc_mismatch", i * 10, "x")] if bad else []

    s = Strip(10 * 10_000, recoverable=True)
    for i in range(10_000):
        s.add(U(i, bad=i < 6000 and i % 2))  # 6,000 alternating bands, then one run
    d = s.to_json()
    assert len(d["bands"]) == STRIP_BANDS and d["units"] == 10_000 and d["cut"] == 10
    assert d["bands"][0] == [0, 50, "problem", 0, 4] and d["bands"][-1][1] == 100_000
    states = [b[2] for b in d["bands"]]
    assert states[:1200] == ["problem"] * 1200 and set(states[1200:]) == {"salvage"}
    assert d["bands"][1200][3:] == [6000, 6004]


def test_max_units_counts_across_inputs(tmp_path):
    v2 = SAMPLES / "v2-none" / "00000000000000000000.log"
    r = view(DAMAGED, v2, SAMPLES / "v1-none.log", "--max-units", "11", "-o", tmp_path / "m.html")
    assert r.exit_code == 1, r.output
    d = page_data((tmp_path / "m.html").read_text())
    assert [u["i"] for u in d["units"]] == [0] * 10 + [1]
    assert len(d["inputs"]) == 2 and d["inputs"][0]["leftOut"] == []
    assert d["inputs"][1]["leftOut"][0].startswith("stopped at --max-units 11: nothing from byte ")
    assert "no input after this one" in d["inputs"][1]["leftOut"][1]


@pytest.mark.parametrize("fid", sorted(f for f in SEEDS if f != "kafka-partition"))
def test_mutated_inputs_never_break_the_page(fid):
    """Damaged inputs of every format (the fuzz harness's mutations of real seeds): ``view`` exits 0,
    1 or 2 without a traceback, and every field of a unit with its bytes lies in them."""
    import random
    import tempfile
    from pathlib import Path

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.fuzz.mutate import mutate

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(pick=st.integers(0, 1 << 16), seed=st.integers(0, 1 << 32))
    def check(pick, seed):
        name, data = SEEDS[fid][pick % len(SEEDS[fid])]
        family = "rocketmq" if fid.startswith("rocketmq") else "jafka" if fid.startswith("jafka") else \
            "kafka-stream" if fid == "kafka-stream" else "kafka-log"
        mutant = mutate(data, family, name, random.Random(seed))
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "in" / Path(name).name
            src.parent.mkdir()
            src.write_bytes(mutant)
            out = Path(tmp) / "page.html"
            r = view(f"{src}:{fid}", "-o", out)
            assert r.exit_code in (0, 1, 2) and "Traceback" not in r.output and "internal error" not in r.output
            if not out.exists():
                return
            text = out.read_text()
            assert text.count("<script") == 2
            for u in page_data(text)["units"]:
                if u["spaces"][0]["b"] is None:
                    continue
                for node in u["nodes"]:
                    if node["s"] == 0:
                        assert u["p"] <= node["p"] and node["p"] + node["l"] <= u["p"] + u["l"], (u["label"], node)

    check()


def test_registry_and_internal_topic_options(tmp_path):
    """--schemas and --records-as reach the decoders as for dump: the page shows the same tree."""
    r = view(SAMPLES / "registry", "-o", tmp_path / "r.html")
    assert r.exit_code == 0, r.output
    names = {n["n"] for u in page_data((tmp_path / "r.html").read_text())["units"] for n in u["nodes"]}
    assert "valueSchema" in names
    r = view(SAMPLES / "v2-none" / "00000000000000000000.log", "--records-as", "offsets", "-o", tmp_path / "o.html")
    assert r.exit_code in (0, 1), r.output
    r = view(SAMPLES / "v2-none", "--schemas", SAMPLES / "v2-none", "-o", tmp_path / "s.html")
    assert r.exit_code == 2 and "--schemas" in r.stderr


def test_redpanda_segment(tmp_path):
    name, data = SEEDS["redpanda-log"][0]
    src = tmp_path / "in" / os.path.basename(name)
    src.parent.mkdir()
    src.write_bytes(data)
    r = view(f"{src}:redpanda-log", "-o", tmp_path / "rp.html")
    assert r.exit_code in (0, 1), r.output
    d = page_data((tmp_path / "rp.html").read_text())
    assert d["units"] and d["inputs"][0]["strip"]["kind"] == "bytes"
    assert all(u["spaces"][0]["b"] is not None for u in d["units"])


def test_headers_only(tmp_path):
    seg = SAMPLES / "v2-gzip" / "00000000000000000000.log"
    r = view(seg, "--headers-only", "-o", tmp_path / "h.html")
    assert r.exit_code == 0, r.output
    d = page_data((tmp_path / "h.html").read_text())
    assert not any(n["n"].startswith("records[") for u in d["units"] for n in u["nodes"])
    assert d["units"][0]["spaces"][0]["b"] and "--headers-only" in d["given"]
    r = view(SAMPLES / "capture" / "librdkafka.pcap", "--headers-only", "--schemas", SAMPLES / "registry",
             "-o", tmp_path / "x.html")
    assert r.exit_code == 2


def test_notes_are_on_their_unit_and_not_problems(tmp_path):
    """A unit's notes (findings that are not damage) travel beside its problems, never among them."""
    from tests.view_helpers import padded_index

    index = padded_index(tmp_path / "in")
    r = view(index, "-o", tmp_path / "i.html")
    assert r.exit_code == 0, r.output  # a note is no problem
    d = page_data((tmp_path / "i.html").read_text())
    (u,) = d["units"]
    assert u["pr"] == [] and u["st"] == "valid"
    assert [n[:2] for n in u["nt"]] == [["zero_padding", 8]] and "not damage" in u["nt"][0][2]
    assert {b[2] for b in d["inputs"][0]["strip"]["bands"]} == {"valid"}
    r = view(DAMAGED, "-o", tmp_path / "d.html")
    assert all("nt" not in u for u in page_data((tmp_path / "d.html").read_text())["units"])


def test_a_capture_taken_mid_connection_notes_its_missing_handshake(tmp_path):
    from tests.capture_helpers import conversation_packets
    from tests.inputs.test_tcp_reassembly import _conversation, _pcap

    c, s, chunks = _conversation()
    path = tmp_path / "in" / "c.pcap"
    path.parent.mkdir()
    path.write_bytes(_pcap(conversation_packets(c, s, chunks, handshake=False)))
    r = view(path, "-o", tmp_path / "c.html")
    assert r.exit_code == 0, r.output
    d = page_data((tmp_path / "c.html").read_text())
    noted = [u for u in d["units"] if u.get("nt")]
    assert noted and all(u["pr"] == [] for u in noted)
    assert {n[0] for u in noted for n in u["nt"]} == {"tcp_no_handshake"}


# -- bounds on a page's bytes and a unit's tree (issue 20, items 4 and 18) --------------------------

def test_a_value_is_shown_once_and_a_null_key_reads_null():
    root = Node("batch", 0, 10)
    root.add("compression", 0, 1, "none", display="none (bits 0-2)")
    root.add("isControl", 0, 1, False, display="False (bit 5)")
    root.add("crc", 1, 4, 7, display="0x7 (valid)")  # says more than the value: both
    root.add("key", 5, 0, None)
    root.add("records", 5, 5, kind="list", display="2 records")  # a container: its display only
    rows = project(root, bytes(10), 0)["nodes"]
    got = {r["n"]: (r.get("v"), r.get("d")) for r in rows}
    assert got["compression"] == ("none (bits 0-2)", None)
    assert got["isControl"] == ("False (bit 5)", None)
    assert got["crc"] == ("7", "0x7 (valid)")
    assert got["key"] == ("null", None)
    assert got["records"] == (None, "2 records")


def test_a_large_internal_batch_gives_a_bounded_tree(tmp_path):
    """A __share_group_state batch of 1,200 records: the page gives fields to its first
    VIEW_TREE_RECORDS records and says how many more there are; dump's tree is unchanged."""
    from tests.view_helpers import share_state_batch
    from wireinspect.formats.kafka.records import TREE_MAX_RECORDS, parse_batch
    from wireinspect.ops.view import VIEW_TREE_RECORDS

    data = share_state_batch(1200)
    seg = tmp_path / "in" / "__share_group_state-0" / "00000000000000000000.log"
    seg.parent.mkdir(parents=True)
    seg.write_bytes(data)
    r = view(seg, "-o", tmp_path / "s.html")
    assert r.exit_code == 0, r.output
    (u,) = page_data((tmp_path / "s.html").read_text())["units"]
    records = next(i for i, n in enumerate(u["nodes"]) if n["n"] == "records")
    kids = [n for n in u["nodes"] if n["u"] == records]
    assert len(kids) == VIEW_TREE_RECORDS + 1 and kids[-1]["n"] == "elided"
    assert kids[-1]["v"].startswith(f"{1200 - VIEW_TREE_RECORDS} more records not shown")
    assert any(n["n"] == "recordType" for n in u["nodes"])  # decoded as share-state records
    assert "cut" not in u
    tree = parse_batch(data, 0, internal="share-state").to_tree()  # dump's: every record up to 10,000
    assert TREE_MAX_RECORDS >= 1200 and len(tree.child("records").children) == 1200

    out = tmp_path / "small.html"
    r = view(seg, "--max-page-size", "1M", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.stat().st_size <= 1 << 20
    d = page_data(out.read_text())
    (u,) = d["units"]
    assert u["cut"] > 0 and len(u["nodes"]) > 100
    assert all(0 <= n["u"] < i for i, n in enumerate(u["nodes"]) if i)  # whole preorder: parents kept
    assert "each says what it left out" in d["inputs"][0]["leftOut"][0]
    assert "left out: fields or problems of 1 unit" in r.stderr


def test_max_page_size_bounds_the_page_and_says_what_it_left_out(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for k in range(2):  # two segments of 40 batches of 10 records of 2,000 bytes (about 800 KB each)
        (d / f"{k * 400:020d}.log").write_bytes(
            b"".join(v2_batch(base_offset=k * 400 + 10 * i, n=10, value_size=2000) for i in range(40)))
    out = tmp_path / "p.html"
    r = view(d, "--max-page-size", "1M", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.stat().st_size <= 1 << 20
    page = page_data(out.read_text())
    assert len(page["inputs"]) == 1 and 0 < len(page["units"]) < 40
    left = page["inputs"][0]["leftOut"]
    assert left[0].startswith("stopped at the page's limit (--max-page-size 1 MiB): nothing from byte ")
    assert left[1].startswith("the page stopped here: no input after this one was read")
    assert "stopped at the page's limit (--max-page-size 1 MiB)" in r.stderr
    assert "00000000000000000400.log on)" in r.stderr
    r = view(d, "--max-page-size", "100K", "-o", tmp_path / "q.html")
    assert r.exit_code == 2 and "at least 1M" in r.output
    assert not (tmp_path / "q.html").exists()


def test_a_units_problems_are_listed_up_to_a_bound(monkeypatch):
    from types import SimpleNamespace

    from wireinspect.render import html

    monkeypatch.setattr(html, "UNIT_PROBLEMS", 2)
    root = Node("batch", 0, 8)
    root.add("a", 0, 4).problems.append(Problem("bad_a", 0, "a"))
    root.add("b", 4, 4).problems.extend([Problem("bad_b", 4, "b"), Problem("bad_b", 5, "b2")])
    loose = Problem("loose", 7, "placed on no field")
    unit = SimpleNamespace(type="batch", position=0, length=8, problems=[loose], notes=[], base_offset=None,
                           last_offset=None, file_position=None, timestamp=None, latency_ms=None, direction=None,
                           base_timestamp=None, max_timestamp=None)
    page = html.Page(given=[], max_units=10)
    index = page.add_input("x", "kafka-log", 8)
    assert page.add_unit(index, unit, root, bytes(8), 0, "problem")
    u = json.loads(page.units[0])
    assert [p[1] for p in u["pr"]] == ["loose", "bad_a"] and u["prMore"] == 2
    assert page.cut_units == 1


def test_a_selection_that_matches_nothing_says_so(tmp_path):
    gz = SAMPLES / "v2-gzip" / "00000000000000000000.log"
    r = view(gz, "--offsets", "999..", "-o", tmp_path / "e.html")
    assert r.exit_code == 0, r.output
    d = page_data((tmp_path / "e.html").read_text())
    assert d["units"] == []
    said = "no unit matched the selection: --offsets 999..; the units read: 4, offsets 0..19, timestamps "
    assert d["inputs"][0]["leftOut"][0].startswith(said)
    assert said in r.stderr and "bytes 0..772" in r.stderr
    r = view(gz, "--time", "4000000000000..", "-o", tmp_path / "t.html")
    assert "no unit matched the selection: --time 4000000000000..;" in r.stderr
