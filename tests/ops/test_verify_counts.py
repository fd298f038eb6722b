"""``verify`` counts entries, not units: a note (a TCP finding on no frame, a capture file's damaged
block, a missing handshake), an unparsed range and a capture's summary hold no entry and count 0
``batches``; a frame or a batch counts 1 (a sidecar table: its entries)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.capture_helpers import conversation_packets
from tests.inputs.test_tcp_reassembly import _conversation, _pcap
from wireinspect.cli import cli
from wireinspect.formats.common import Note, Unparsed
from wireinspect.formats.unit import UnitBase
from wireinspect.inputs.capture import CaptureNote
from wireinspect.inputs.open import Item
from wireinspect.inputs.source import BytesSource
from wireinspect.model import Problem
from wireinspect.formats.options import Options
from wireinspect.ops.verify import verify_item


class _Entry(UnitBase):
    type = "batch"
    records_count = 3
    valid = True

    def __init__(self, position, length):
        self.position, self.length, self.problems = position, length, []


def _item(size, fmt_id="kafka-log"):
    from wireinspect.catalog import get_format

    return Item(BytesSource(bytes(size), "x"), get_format(fmt_id))


def test_notes_and_unparsed_count_no_batch():
    units = [Note(0, 0, [], notes=[Problem("tcp_no_handshake", 0, "mid-connection")]),
             _Entry(0, 10),
             Note(10, 0, [Problem("tcp_gap", 10, "4 bytes missing")]),
             CaptureNote(10, 0, [Problem("truncated_record", 10, "short")]),
             Unparsed(10, 6, [Problem("garbage", 10, "junk")]),
             _Entry(16, 4)]
    rep = verify_item(_item(20), Options(), units=units)
    assert rep.batches == 2 and rep.records == 6
    assert [p.code for p in rep.problems] == ["tcp_gap", "truncated_record", "garbage"]
    assert [n.code for n in rep.notes] == ["tcp_no_handshake"]


def test_a_capture_taken_mid_connection_counts_its_frames_only(tmp_path):
    c, s, chunks = _conversation()
    data = _pcap(conversation_packets(c, s, chunks, handshake=False))
    path = tmp_path / "c.pcap"
    path.write_bytes(data)
    dumped = [json.loads(x) for x in CliRunner().invoke(cli, ["dump", "--json", str(path)]).stdout.splitlines()]
    types = [d["type"] for d in dumped]
    assert "note" in types  # the missing handshake of each direction
    r = CliRunner().invoke(cli, ["verify", "--json", str(path)])
    rep = json.loads(r.stdout.splitlines()[0])
    assert rep["status"] == "ok"
    assert rep["batches"] == types.count("frame") == len(chunks)
